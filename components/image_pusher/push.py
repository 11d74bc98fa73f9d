"""One push: warmup records, the serving check, then the SavedModel and TFLite versions.

Order, and why: the check's process starts first and gets its job as soon as
the warmup file is written, so its TensorFlow import and the check itself
overlap the TFLite conversion; nothing is published until the check has
passed, and the TFLite version waits for the SavedModel's.
"""
import dataclasses
import os
import shutil
import tempfile
from typing import Optional

from components.image_pusher.settings import PushSettings

from components.image_pusher import warmup
from components.image_pusher.serving_check import ServingCheck
from components.image_pusher.serving_config import write_serving_configs
from components.image_pusher.tflite_push import discard, publish_tflite, stage_tflite
from components.image_pusher.tflite_push import push_tflite
from components.versions import next_version, publish, pushed_version_of


@dataclasses.dataclass(frozen=True)
class TFLiteOutcome:
    """The TFLite push: its version folder (None if refused), the parity gate, and why."""

    path: Optional[str]
    parity: dict  # tflite.parity(): accuracies, drop, ok
    reason: str

    @classmethod
    def of(cls, result: Optional[dict]) -> Optional["TFLiteOutcome"]:
        return None if result is None else cls(result.get("path"), result["parity"],
                                               result["reason"])


@dataclasses.dataclass(frozen=True)
class PushOutcome:
    """What one push did; the executor records it on the PushedModel."""

    pushed: bool
    serving_path: Optional[str]
    version: Optional[int]
    serving_check: dict  # the check's verdict and figures, recorded as JSON verbatim
    tflite: Optional[TFLiteOutcome]  # None without settings.tflite_dir or examples


def push(model_path: str, model_uri: str, base: str, examples_uri: Optional[str],
         settings: PushSettings) -> PushOutcome:
    """Pushes a blessed model; returns what happened (no TFLite version without
    `settings.tflite_dir`)."""
    tflite = settings if settings.tflite_dir else None
    version = pushed_version_of(base, model_uri)  # an interrupted earlier push
    if version is not None:
        serving_path = os.path.join(base, str(version))
        write_serving_configs(os.path.dirname(base))
        return PushOutcome(True, serving_path, version,
                           {"ok": True, "reason": "kept the version an interrupted earlier "
                                                  "push published"},
                           TFLiteOutcome.of(_tflite_again(model_path, examples_uri, tflite,
                                                          version)))
    version = next_version(base)
    server = ServingCheck()
    staged, workdir = None, tempfile.mkdtemp(prefix="imagepipe-push-")
    try:
        logs = warmup.warmup_logs(_images(examples_uri, settings), os.path.basename(base),
                                  list(settings.warmup_batch_sizes))
        warmup_path = os.path.join(workdir, "tf_serving_warmup_requests")
        warmup.write_logs(warmup_path, logs)
        server.send(model_path, warmup_path, settings.rest_requests, settings.atol)
        staged = _stage(model_path, examples_uri, tflite, version)
        result = server.result(settings.timeout_s)
        result["warmup_records"] = len(logs)
        if not result["ok"]:
            return PushOutcome(False, None, None, result, None)
        with open(warmup_path, "rb") as f:
            serving_path = publish(model_path, base, version, source_uri=model_uri,
                                   files={warmup.WARMUP_FILE: f.read()})
        write_serving_configs(os.path.dirname(base))
        published = publish_tflite(staged, settings.tflite_dir, version) if staged else None
        staged = None
        return PushOutcome(True, serving_path, version, result, TFLiteOutcome.of(published))
    finally:
        server.cancel()
        if staged:
            discard(staged)
        shutil.rmtree(workdir, ignore_errors=True)


def _images(examples_uri: Optional[str], settings: PushSettings) -> list:
    """Eval images for the warmup file; one blank PNG when there are no examples."""
    if examples_uri:
        images = [image for _, image in warmup.eval_records(
            examples_uri, settings.warmup_records, settings.warmup_max_bytes)]
        if images:
            return images
    import tensorflow as tf
    return [tf.io.encode_png(tf.zeros([8, 8, 1], tf.uint8)).numpy()]


def _stage(model_path, examples_uri, tflite, version) -> Optional[dict]:
    """The TFLite conversion, staged; a failure is the TFLite push's reason, not the push's."""
    if not tflite or not examples_uri:
        return None
    try:
        return stage_tflite(model_path, examples_uri, version, tflite.quantize,
                            tflite.parity_tolerance)
    except Exception as e:  # noqa: BLE001  (the SavedModel is still pushed; say why not TFLite)
        return {"staging": None, **_conversion_failed(e)}


def _tflite_again(model_path, examples_uri, tflite, version) -> Optional[dict]:
    """The re-run of an interrupted push: push_tflite keeps a complete earlier version."""
    if not tflite or not examples_uri:
        return None
    try:
        return push_tflite(model_path, examples_uri, tflite.tflite_dir, version,
                           tflite.quantize, tflite.parity_tolerance)
    except Exception as e:  # noqa: BLE001  (as in _stage)
        return {"path": None, **_conversion_failed(e)}


def _conversion_failed(error: Exception) -> dict:
    import logging
    logging.exception("TFLite conversion failed")
    text = str(error).strip()
    return {"parity": {"ok": False},
            "reason": f"TFLite conversion failed: {type(error).__name__}: "
                      f"{text.splitlines()[0] if text else ''}"}
