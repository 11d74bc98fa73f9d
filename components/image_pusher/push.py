"""One push: warmup records, the serving check, then the SavedModel and TFLite versions.

Order, and why: the check's process starts first and gets its job as soon as
the warmup file is written, so its TensorFlow import and the check itself
overlap the TFLite conversion; nothing is published until the check has
passed, and the TFLite version waits for the SavedModel's. The model card is
made once the check passed and goes into both versions before they are
published (model_card/).
"""
import dataclasses
import logging
import os
import shutil
import tempfile
import time
from typing import Dict, Optional

from components.contract import MODEL_CARD_HTML, MODEL_CARD_JSON
from components.image_pusher.settings import PushSettings

from components.image_pusher import warmup
from components.image_pusher.model_card.card import build_card, validate
from components.image_pusher.model_card.render import card_files
from components.image_pusher.model_card.sources import CardSources
from components.image_pusher.serving_check import ServingCheck
from components.image_pusher.serving_config import write_serving_configs
from components.image_pusher.tflite_push import add_files, discard, publish_tflite, stage_tflite
from components.image_pusher.tflite_push import push_tflite
from components.storage import files
from components.versions import (next_version, point_tflite, provenance, publish,
                                 pushed_version_of, serving_state, unpin_for)


@dataclasses.dataclass(frozen=True)
class TFLiteOutcome:
    """The TFLite push: its version folder (None if refused), the parity gate, and why."""

    path: Optional[str]
    parity: dict  # tflite.parity(): accuracies, drop, ok
    reason: str
    metadata: Optional[dict] = None  # tflite_metadata.embed_metadata's: embedded, or why not

    @classmethod
    def of(cls, result: Optional[dict]) -> Optional["TFLiteOutcome"]:
        return None if result is None else cls(result.get("path"), result["parity"],
                                               result["reason"], result.get("metadata"))


@dataclasses.dataclass(frozen=True)
class PushOutcome:
    """What one push did; the executor records it on the PushedModel."""

    pushed: bool
    serving_path: Optional[str]
    version: Optional[int]
    serving_check: Optional[dict]  # the check's verdict and figures, recorded as JSON
    tflite: Optional[TFLiteOutcome]  # None without settings.tflite_dir or examples
    blocked: Optional[str]  # why nothing was pushed, when no check failed
    model_card: Optional[str] = None  # the version's model_card.json, when one was written


def push(model_path: str, model_uri: str, base: str, examples_uri: Optional[str],
         settings: PushSettings, record: dict,
         card: Optional[CardSources] = None) -> PushOutcome:
    """Pushes a blessed model; returns what happened (no TFLite version without
    `settings.tflite_dir`). `record` goes into the version's provenance
    (components/versions.py publish); the model card made from `card` goes into
    both versions (none without it)."""
    tflite = settings if settings.tflite_dir else None
    version = pushed_version_of(base, model_uri)  # an interrupted earlier push
    if version is not None:
        return _again(model_path, base, examples_uri, tflite, version)
    stale = _rolled_back_window(base, record.get("spans") or [])
    if stale:
        return PushOutcome(False, None, None, None, None, stale)
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
            return PushOutcome(False, None, None, result, None, None)
        cards = _card_files(card, version, base, tflite, staged)
        add_files(staged or {}, cards)
        with open(warmup_path, "rb") as f:
            serving_path = publish(model_path, base, version, source_uri=model_uri,
                                   files={warmup.WARMUP_FILE: f.read(), **_in_extra(cards)},
                                   record=_with_card(record, cards))
        _serve(base, version)
        published = publish_tflite(staged, settings.tflite_dir, version) if staged else None
        staged = None
        _point(tflite, base)
        return PushOutcome(True, serving_path, version, result, TFLiteOutcome.of(published),
                           None, _card_path(serving_path))
    finally:
        server.cancel()
        if staged:
            discard(staged)
        shutil.rmtree(workdir, ignore_errors=True)


def _card_files(card: Optional[CardSources], version: int, base: str, tflite,
                staged: Optional[dict]) -> Dict[str, bytes]:
    """The model card's files ({name: bytes}); {} without sources, or (logged) if it fails:
    the card describes the push, it never stops it."""
    if card is None:
        return {}
    conversion = None if staged is None else {
        "quantize": tflite.quantize, "parity": staged.get("parity"), "reason": staged["reason"],
        "metadata": staged.get("metadata"), "pushed": bool(staged.get("staging"))}
    try:
        made = build_card(card, version, time.time(), os.path.join(base, str(version)),
                          conversion)
        validate(made)
        return card_files(made)
    except Exception:  # noqa: BLE001  (the version ships without a card; the log says why)
        logging.exception("model card not written")
        return {}


def _in_extra(cards: Dict[str, bytes]) -> Dict[str, bytes]:
    return {os.path.join("assets.extra", name): data for name, data in cards.items()}


def _with_card(record: dict, cards: Dict[str, bytes]) -> dict:
    """The provenance record, with the card's path in the version when there is one."""
    if MODEL_CARD_JSON not in cards:
        return record
    return {**record, "model_card": os.path.join("assets.extra", MODEL_CARD_JSON)}


def _card_path(version_dir: str) -> Optional[str]:
    path = os.path.join(version_dir, "assets.extra", MODEL_CARD_JSON)
    return path if files.exists(path) else None


def _rolled_back_window(base: str, spans: list) -> Optional[str]:
    """Why a model trained on no newer span than a rolled-back version's is not pushed.

    A rollback says the models of those spans misbehaved; retrained on the same
    spans (its warm start changed with the rollback), a new model would lift the
    pin without new data. Data without spans cannot be compared, and pushes.
    """
    if not spans:
        return None
    for version in sorted(serving_state(base).rolled_back):
        record = provenance(os.path.join(base, str(version))) or {}
        if record.get("spans") and max(spans) <= max(record["spans"]):
            return (f"not pushed: trained on spans up to {max(spans)}, and version {version}, "
                    f"trained on spans up to {max(record['spans'])}, was rolled back; a "
                    "new span is pushed")
    return None


def _serve(base: str, version: int) -> None:
    """Serves what was just published: a new highest version lifts a rollback's pin,
    then models.config follows."""
    unpin_for(base, version)
    write_serving_configs(os.path.dirname(base))


def _point(tflite: Optional[PushSettings], base: str) -> None:
    """The TFLite pointer follows the served version (after the TFLite publish)."""
    if tflite:
        point_tflite(tflite.tflite_dir, base)


def _again(model_path: str, base: str, examples_uri: Optional[str], tflite,
           version: int) -> PushOutcome:
    """A model already pushed as `version`: an interrupted earlier push is finished; a
    version a rollback took out of service is not served again."""
    if version in serving_state(base).rolled_back:
        return PushOutcome(False, None, None, None, None,
                           f"not pushed: this model is version {version}, which "
                           "`imagepipe rollback` took out of service")
    _serve(base, version)
    version_dir = os.path.join(base, str(version))
    tflite_outcome = TFLiteOutcome.of(_tflite_again(model_path, examples_uri, tflite,
                                                    version, version_dir))
    _point(tflite, base)
    return PushOutcome(True, version_dir, version,
                       {"ok": True, "reason": "kept the version an interrupted earlier "
                                              "push published"}, tflite_outcome, None,
                       _card_path(version_dir))


def _published_card(version_dir: str) -> Dict[str, bytes]:
    """The card files a published version holds ({} for one pushed without)."""
    found = {}
    for name in (MODEL_CARD_JSON, MODEL_CARD_HTML):
        path = os.path.join(version_dir, "assets.extra", name)
        if files.exists(path):
            found[name] = files.read_bytes(path)
    return found


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
                            tflite.parity_tolerance, _model_name(tflite.tflite_dir))
    except Exception as e:  # noqa: BLE001  (the SavedModel is still pushed; say why not TFLite)
        return {"staging": None, **_conversion_failed(e)}


def _model_name(tflite_dir: str) -> str:
    """The model's name in the TFLite metadata: the base folder's, as for TF Serving."""
    return os.path.basename(os.path.normpath(tflite_dir))


def _tflite_again(model_path, examples_uri, tflite, version,
                  version_dir: str) -> Optional[dict]:
    """The re-run of an interrupted push: push_tflite keeps a complete earlier version;
    a new one gets the card the SavedModel version was published with."""
    if not tflite or not examples_uri:
        return None
    try:
        return push_tflite(model_path, examples_uri, tflite.tflite_dir, version,
                           tflite.quantize, tflite.parity_tolerance, _published_card(version_dir))
    except Exception as e:  # noqa: BLE001  (as in _stage)
        return {"path": None, **_conversion_failed(e)}


def _conversion_failed(error: Exception) -> dict:
    logging.exception("TFLite conversion failed")
    text = str(error).strip()
    return {"parity": {"ok": False},
            "reason": f"TFLite conversion failed: {type(error).__name__}: "
                      f"{text.splitlines()[0] if text else ''}"}
