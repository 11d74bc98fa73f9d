"""Publish the TFLiteConverter's folder as `<tflite_dir>/<version>/`, beside the SavedModel."""
import json
import os
import shutil
import tempfile
from typing import Dict, Optional

from core.storage.tree_copy import copy_tree
from core.contract import TFLITE_INFO_FILE
from components.image_pusher.versions import TFLITE_COMMIT_FILE, is_complete, publish


def publish_tflite(converted_dir: str, tflite_dir: str, version: int,
                   cards: Dict[str, bytes]) -> Optional[str]:
    """Publishes the converted files with the model card `cards` ({name: bytes}); returns
    the version folder. A complete one already there (an interrupted earlier push) is kept.
    """
    existing = os.path.join(tflite_dir, str(version))
    if is_complete(existing, commit_file=TFLITE_COMMIT_FILE):
        return existing
    staging = tempfile.mkdtemp(prefix="imagepipe-tflite-")  # always local
    try:
        copy_tree(converted_dir, staging)
        info_path = os.path.join(staging, TFLITE_INFO_FILE)
        if os.path.exists(info_path):
            with open(info_path, encoding="utf-8") as f:
                info = json.load(f)
            with open(info_path, "w", encoding="utf-8") as f:
                json.dump({**info, "source_version": version}, f, indent=2, ensure_ascii=False)
        for name, data in cards.items():
            with open(os.path.join(staging, name), "wb") as f:
                f.write(data)
        os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide the version from other users
        return publish(staging, tflite_dir, version, commit_file=TFLITE_COMMIT_FILE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
