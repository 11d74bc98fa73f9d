"""One push: the SavedModel version (stamped with its warmup records), then the TFLite one.

Everything it publishes was judged and made by the stages before it: the
Evaluator and the InfraValidator blessed the model (the latter stamped it
with its warmup records), the TFLiteConverter wrote the file that passed its
gate, and the ModelCardGenerator wrote the card, which gets its version here
and goes into both versions before they are published. The Evaluator's
monitoring reference goes into the SavedModel's version too (assets.extra/
monitoring/), so `imagepipe monitor` finds it beside the model it describes.
"""
import dataclasses
import logging
import os
import time
from typing import Dict, Optional

from core.contract import (ASSETS_EXTRA, MODEL_CARD_HTML, MODEL_CARD_JSON,
                           MONITORING_DIR)
from components.image_pusher.judged_inputs import DATA, MODEL
from components.image_pusher.serving_config import write_serving_configs
from components.image_pusher.settings import PushSettings
from components.image_pusher.tflite_publish import publish_tflite
from components.model_card.format.card_format import stamp_card, validate
from components.model_card.format.pages import card_files
from core.storage import files
from components.image_pusher.versions import (next_version, point_tflite, provenance, publish,
                                              pushed_version_of, serving_state, unpin_for)


@dataclasses.dataclass(frozen=True)
class PushInputs:
    """What the stages before the Pusher produced, as paths and plain values."""

    model_path: str  # the SavedModel to publish (the InfraValidator's stamped one)
    model_uri: str  # the Trainer's Model artifact: the version's source
    base: str  # the push destination, <serving root>/<model name>
    record: dict  # provenance fields: spans, accuracy, drift_overridden
    tflite_dir: Optional[str] = None  # the converted files that passed the gate, if any
    card: Optional[dict] = None  # the ModelCardGenerator's draft card, if any
    monitoring_dir: Optional[str] = None  # the blessing's MONITORING_DIR (absent: none)


@dataclasses.dataclass(frozen=True)
class PushOutcome:
    """What one push did; the executor records it on the PushedModel."""

    pushed: bool
    serving_path: Optional[str] = None
    version: Optional[int] = None
    tflite_path: Optional[str] = None  # the TFLite version folder, if one was published
    blocked: Optional[str] = None  # why nothing was pushed
    model_card: Optional[str] = None  # the version's model_card.json, when one was written
    blamed: Optional[str] = None  # what `blocked` is about: judged_inputs.DATA or MODEL


def push(inputs: PushInputs, settings: PushSettings) -> PushOutcome:
    """Publishes a blessed model (and its TFLite file without `settings.tflite_dir`: none)."""
    base = inputs.base
    version = pushed_version_of(base, inputs.model_uri)  # an interrupted earlier push
    if version is not None:
        return _again(inputs, settings, version)
    stale = _rolled_back_window(base, inputs.record.get("spans") or [])
    if stale:
        return PushOutcome(False, blocked=stale, blamed=DATA)
    version = next_version(base)
    cards = _card_files(inputs.card, version, os.path.join(base, str(version)))
    # In the files `publish` adds before the version becomes visible: a served version
    # never lacks its reference.
    extra = {**cards, **_monitoring_files(inputs.monitoring_dir)}
    serving_path = publish(inputs.model_path, base, version, source_uri=inputs.model_uri,
                           files=_in_extra(extra), record=_with_card(inputs.record, cards))
    _serve(base, version)
    tflite_path = _tflite(inputs, settings, version, cards)
    return PushOutcome(True, serving_path, version, tflite_path, None,
                       _card_path(serving_path))


def _tflite(inputs: PushInputs, settings: PushSettings, version: int,
            cards: Dict[str, bytes]) -> Optional[str]:
    """The TFLite version, published after the SavedModel's; then the pointer follows."""
    if not settings.tflite_dir:
        return None
    path = (publish_tflite(inputs.tflite_dir, settings.tflite_dir, version, cards)
            if inputs.tflite_dir else None)
    point_tflite(settings.tflite_dir, inputs.base)
    return path


def _card_files(card: Optional[dict], version: int, path: str) -> Dict[str, bytes]:
    """The stamped card's files ({name: bytes}); {} without a card, or (logged) if it
    fails: the card describes the push, it never stops it."""
    if card is None:
        return {}
    try:
        stamped = stamp_card(card, version, time.time(), path)
        validate(stamped)
        return card_files(stamped)
    except Exception:  # noqa: BLE001  (the version ships without a card; the log says why)
        logging.exception("model card not written")
        return {}


def _in_extra(cards: Dict[str, bytes]) -> Dict[str, bytes]:
    return {os.path.join(ASSETS_EXTRA, name): data for name, data in cards.items()}


def _monitoring_files(folder: Optional[str]) -> Dict[str, bytes]:
    """{MONITORING_DIR/name: bytes} of the Evaluator's monitoring files; {} without them
    (a blessing written before the Evaluator made them)."""
    if not folder or not files.isdir(folder):
        return {}
    return {os.path.join(MONITORING_DIR, name): files.read_bytes(os.path.join(folder, name))
            for name in files.list_dir(folder)[1]}


def _with_card(record: dict, cards: Dict[str, bytes]) -> dict:
    """The provenance record, with the card's path in the version when there is one."""
    if MODEL_CARD_JSON not in cards:
        return record
    return {**record, "model_card": os.path.join(ASSETS_EXTRA, MODEL_CARD_JSON)}


def _card_path(version_dir: str) -> Optional[str]:
    path = os.path.join(version_dir, ASSETS_EXTRA, MODEL_CARD_JSON)
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


def _again(inputs: PushInputs, settings: PushSettings, version: int) -> PushOutcome:
    """A model already pushed as `version`: an interrupted earlier push is finished; a
    version a rollback took out of service is not served again."""
    if version in serving_state(inputs.base).rolled_back:
        return PushOutcome(False, blocked=f"not pushed: this model is version {version}, "
                                          "which `imagepipe rollback` took out of service",
                           blamed=MODEL)
    _serve(inputs.base, version)
    version_dir = os.path.join(inputs.base, str(version))
    tflite_path = _tflite(inputs, settings, version, _published_card(version_dir))
    return PushOutcome(True, version_dir, version, tflite_path, None, _card_path(version_dir))


def _published_card(version_dir: str) -> Dict[str, bytes]:
    """The card files a published version holds ({} for one pushed without)."""
    found = {}
    for name in (MODEL_CARD_JSON, MODEL_CARD_HTML):
        path = os.path.join(version_dir, ASSETS_EXTRA, name)
        if files.exists(path):
            found[name] = files.read_bytes(path)
    return found
