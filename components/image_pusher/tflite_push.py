"""Push a TFLite version beside the SavedModel one, only if it passes the parity gate."""
import json
import os
import shutil
import tempfile
from typing import Dict, Optional

import tensorflow as tf

from components.contract import (EVAL, LABELS_FILE, NORMALIZATION_FILE, TRAIN, read_labels,
                                 split_dir)
from components.image_pusher import tflite
from components.image_pusher.tflite_metadata import embed_metadata
from components.versions import is_complete, publish

REPRESENTATIVE_IMAGES = 200


def push_tflite(saved_model_dir: str, examples_uri: str, base_dir: str, version: int,
                quantize: str, tolerance: float, files: Optional[Dict[str, bytes]] = None) -> dict:
    """Converts, checks parity on the eval split, and publishes `<base_dir>/<version>/`
    with `files` ({name: bytes}, the model card) beside model.tflite.

    Returns {"path": the version folder or None, "parity": parity(...), "reason",
    "metadata"}. A version already there (an interrupted earlier push of this model) is kept.
    """
    existing = os.path.join(base_dir, str(version))
    if is_complete(existing, commit_file="model.tflite"):
        return {"path": existing, "parity": {"ok": True},
                "reason": "kept the version an interrupted earlier push completed"}
    staged = stage_tflite(saved_model_dir, examples_uri, version, quantize, tolerance,
                          os.path.basename(os.path.normpath(base_dir)))
    add_files(staged, files or {})
    return publish_tflite(staged, base_dir, version)


def stage_tflite(saved_model_dir: str, examples_uri: str, version: int, quantize: str,
                 tolerance: float, name: str) -> dict:
    """Converts, embeds the metadata (named `name`) and gates, into a local staging
    folder; nothing is published yet.

    Returns {"staging": the folder or None (refused), "parity", "reason", "metadata"
    (tflite_metadata.embed_metadata's record)}. The caller publishes it
    (publish_tflite) or drops it (discard).
    """
    size, _, channels = tflite.input_shape(saved_model_dir)
    representative: Optional = None
    if quantize == "int8":
        representative, _ = tflite.split_pixels(split_dir(examples_uri, TRAIN),
                                                size, channels, limit=REPRESENTATIVE_IMAGES)
    extra = os.path.join(saved_model_dir, "assets.extra")
    names = read_labels(os.path.join(extra, LABELS_FILE))
    model, metadata = embed_metadata(tflite.convert(saved_model_dir, quantize, representative),
                                     names, name, version, quantize, channels)
    # The gate runs the file that ships, metadata included.
    parity = tflite.parity(saved_model_dir, model, tflite.split_batches(
        split_dir(examples_uri, EVAL), size, channels), tolerance)
    if not parity["ok"]:
        return {"staging": None, "parity": parity, "metadata": metadata,
                "reason": f"TFLite accuracy {parity['tflite_accuracy']:.4f} is more than "
                          f"{tolerance} below the SavedModel's {parity['saved_model_accuracy']:.4f}"
                          f" on the eval split; only the SavedModel was pushed"}
    with tf.io.gfile.GFile(os.path.join(extra, NORMALIZATION_FILE)) as f:
        normalization = json.load(f)
    info = tflite.model_info([size, size, channels], normalization["mean"],
                             normalization["std"], names, quantize, version, metadata)
    staging = _write_staging(model, extra, {**info, "parity": parity})
    return {"staging": staging, "parity": parity, "metadata": metadata,
            "reason": "passed the parity gate"}


def _write_staging(model: bytes, extra: str, info: dict) -> str:
    """model.tflite, labels.txt and model_info.json in a new local folder.

    Staged locally, then published: the destination may be an object store.
    """
    staging = tempfile.mkdtemp(prefix="imagepipe-tflite-")
    try:
        with open(os.path.join(staging, "model.tflite"), "wb") as f:
            f.write(model)
        tf.io.gfile.copy(os.path.join(extra, LABELS_FILE), os.path.join(staging, LABELS_FILE))
        with open(os.path.join(staging, "model_info.json"), "w") as f:
            json.dump(info, f, indent=2, ensure_ascii=False)
        os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide the version from other users
    except BaseException:
        discard({"staging": staging})
        raise
    return staging


def add_files(staged: dict, files: Dict[str, bytes]) -> None:
    """Adds `files` ({name: bytes}) to a staged version (none to a refused one)."""
    for name, data in files.items() if staged.get("staging") else ():
        with open(os.path.join(staged["staging"], name), "wb") as f:
            f.write(data)


def publish_tflite(staged: dict, base_dir: str, version: int) -> dict:
    """Publishes a staged conversion as `<base_dir>/<version>/`; {"path", "parity", "reason"}."""
    try:
        path = (publish(staged["staging"], base_dir, version, commit_file="model.tflite")
                if staged["staging"] else None)
    finally:
        discard(staged)
    return {"path": path, "parity": staged["parity"], "reason": staged["reason"],
            "metadata": staged.get("metadata")}


def discard(staged: dict) -> None:
    """Removes a staged version's local folder, if any."""
    if staged.get("staging"):
        shutil.rmtree(staged["staging"], ignore_errors=True)
