"""Push a TFLite version beside the SavedModel one, only if it passes the parity gate."""
import json
import os
import shutil
import tempfile
from typing import Optional

import tensorflow as tf

from components.contract import (EVAL, LABELS_FILE, NORMALIZATION_FILE, TRAIN, read_labels,
                                 split_dir)
from components.image_pusher import tflite
from components.versions import is_complete, publish

REPRESENTATIVE_IMAGES = 200


def push_tflite(saved_model_dir: str, examples_uri: str, base_dir: str, version: int,
                quantize: str, tolerance: float) -> dict:
    """Converts, checks parity on the eval split, and publishes `<base_dir>/<version>/`.

    Returns {"path": the version folder or None, "parity": parity(...), "reason"}.
    A version already there (an interrupted earlier push of this model) is kept.
    """
    existing = os.path.join(base_dir, str(version))
    if is_complete(existing, commit_file="model.tflite"):
        return {"path": existing, "parity": {"ok": True},
                "reason": "kept the version an interrupted earlier push completed"}
    return publish_tflite(stage_tflite(saved_model_dir, examples_uri, version, quantize,
                                       tolerance), base_dir, version)


def stage_tflite(saved_model_dir: str, examples_uri: str, version: int, quantize: str,
                 tolerance: float) -> dict:
    """Converts and gates, into a local staging folder; nothing is published yet.

    Returns {"staging": the folder or None (refused), "parity", "reason"}. The
    caller publishes it (publish_tflite) or drops it (discard).
    """
    size, _, channels = tflite.input_shape(saved_model_dir)
    representative: Optional = None
    if quantize == "int8":
        representative, _ = tflite.split_pixels(split_dir(examples_uri, TRAIN),
                                                size, channels, limit=REPRESENTATIVE_IMAGES)
    model = tflite.convert(saved_model_dir, quantize, representative)
    parity = tflite.parity(saved_model_dir, model, tflite.split_batches(
        split_dir(examples_uri, EVAL), size, channels), tolerance)
    if not parity["ok"]:
        return {"staging": None, "parity": parity,
                "reason": f"TFLite accuracy {parity['tflite_accuracy']:.4f} is more than "
                          f"{tolerance} below the SavedModel's {parity['saved_model_accuracy']:.4f}"
                          f" on the eval split; only the SavedModel was pushed"}
    extra = os.path.join(saved_model_dir, "assets.extra")
    names = read_labels(os.path.join(extra, LABELS_FILE))
    with tf.io.gfile.GFile(os.path.join(extra, NORMALIZATION_FILE)) as f:
        normalization = json.load(f)
    # Staged locally, then published: the destination may be an object store.
    staging = tempfile.mkdtemp(prefix="imagepipe-tflite-")
    try:
        with open(os.path.join(staging, "model.tflite"), "wb") as f:
            f.write(model)
        tf.io.gfile.copy(os.path.join(extra, LABELS_FILE), os.path.join(staging, LABELS_FILE))
        info = tflite.model_info([size, size, channels], normalization["mean"],
                                 normalization["std"], names, quantize, version)
        with open(os.path.join(staging, "model_info.json"), "w") as f:
            json.dump({**info, "parity": parity}, f, indent=2, ensure_ascii=False)
        os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide the version from other users
    except BaseException:
        discard({"staging": staging})
        raise
    return {"staging": staging, "parity": parity, "reason": "passed the parity gate"}


def publish_tflite(staged: dict, base_dir: str, version: int) -> dict:
    """Publishes a staged conversion as `<base_dir>/<version>/`; {"path", "parity", "reason"}."""
    try:
        path = (publish(staged["staging"], base_dir, version, commit_file="model.tflite")
                if staged["staging"] else None)
    finally:
        discard(staged)
    return {"path": path, "parity": staged["parity"], "reason": staged["reason"]}


def discard(staged: dict) -> None:
    if staged.get("staging"):
        shutil.rmtree(staged["staging"], ignore_errors=True)
