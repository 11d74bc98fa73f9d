"""One serving check, and the stamped model: InfraValidator's job with its warmup format.

The check's process (check.py) starts first and gets its job as soon as the
warmup file is written, so its TensorFlow import overlaps reading the eval
images. Only a model that passed is stamped: copied with
`assets.extra/tf_serving_warmup_requests` into `stamped_dir`, which TFX's
Pusher (and ours) then pushes, as InfraValidator's `make_warmup` does.
"""
import os
import shutil
import tempfile
from typing import List, Optional

from components.serving_validator import warmup
from components.serving_validator.check import take_check
from components.serving_validator.settings import ServingCheckSettings
from core.storage import files
from core.storage.tree_copy import copy_tree


def validate_serving(model_path: str, examples_uri: Optional[str],
                     settings: ServingCheckSettings, stamped_dir: str) -> dict:
    """Checks `model_path` as a server would; on success, stamps it into `stamped_dir`.

    Returns the check's verdict and figures: {"ok", "reason", "warmup_records", ...}.
    """
    server = take_check()  # started ahead of time where the runner could
    workdir = tempfile.mkdtemp(prefix="imagepipe-warmup-")  # always local
    try:
        logs = warmup.warmup_logs(_images(examples_uri, settings), settings.model_name,
                                  list(settings.warmup_batch_sizes))
        warmup_path = os.path.join(workdir, "tf_serving_warmup_requests")
        warmup.write_logs(warmup_path, logs)
        server.send(model_path, warmup_path, settings.rest_requests, settings.atol,
                    _model_server(settings, workdir))
        result = server.result(settings.timeout_s)
        result["warmup_records"] = len(logs)
        if result["ok"]:
            copy_tree(model_path, stamped_dir)
            with open(warmup_path, "rb") as f:
                files.write_bytes(os.path.join(stamped_dir, warmup.WARMUP_FILE), f.read())
        return result
    finally:
        server.cancel()
        shutil.rmtree(workdir, ignore_errors=True)


def _model_server(settings: ServingCheckSettings, scratch: str) -> Optional[dict]:
    """The real server's part of the job, when `settings.model_server` names a binary.

    The server gets half the check's time to make the model available, so that its own
    failure, with its last line, is what the check reports, not the whole check's
    timeout; its model copy goes under `scratch`, which this side removes.
    """
    if not settings.model_server:
        return None
    return {"model_server": settings.model_server, "model_name": settings.model_name,
            "timeout_s": settings.timeout_s / 2, "scratch": scratch}


def _images(examples_uri: Optional[str], settings: ServingCheckSettings) -> List[bytes]:
    """Eval images for the warmup file; one blank PNG when there are no examples."""
    if examples_uri:
        images = [image for _, image in warmup.eval_records(
            examples_uri, settings.warmup_records, settings.warmup_max_bytes)]
        if images:
            return images
    import tensorflow as tf
    return [tf.io.encode_png(tf.zeros([8, 8, 1], tf.uint8)).numpy()]
