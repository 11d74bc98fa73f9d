"""TFX adapter: the card of a blessed model (card.py), written as model_card.json.

The card is a draft until the Pusher publishes it: the Pusher adds the version,
its path and the push time (card.stamp_card), checks it against the schema and
writes model_card.json and model_card.html into both versions. A card that
cannot be made is recorded (`written` 0 and `reason`), never a failed run.
"""
import json
import logging
import os
from typing import Any, Dict, List

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils, standard_component_specs as keys
from tfx.utils import path_utils

from core.contract import (CONVERTED_PROPERTY, MODEL_CARD_JSON, MODEL_CARD_KEY,
                           QUANTIZE_PROPERTY, REASON_PROPERTY,
                           TFLITE_METADATA_PROPERTY, TFLITE_MODEL_KEY,
                           TFLITE_PARITY_PROPERTY, WRITTEN_PROPERTY)
from components.image_pusher.provenance import release_of
from components.model_card.format.card_format import validate
from components.model_card.card import build_card
from components.model_card.settings import CardSettings
from components.model_card.sources import read_card_sources
from core.parameters import decode
from core.storage import files
from core.blessings import not_blessed
from core import tfx_internals


class Executor(base_executor.BaseExecutor):
    """Builds the card from the blessing's audit, the ingest report, the model and TFLite."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Writes the draft card, or records why there is none."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        output = artifact_utils.get_single_instance(output_dict[MODEL_CARD_KEY])
        refused = not_blessed(input_dict)
        if refused:
            return _record(output, False, f"no card: {refused}")
        try:
            card = _card(input_dict, decode(CardSettings, exec_properties))
            validate(card)
        except Exception as e:  # noqa: BLE001  (the card describes a push, never stops it)
            logging.exception("model card not written")
            return _record(output, False, f"no card: {type(e).__name__}: {e}")
        files.write_text(os.path.join(output.uri, MODEL_CARD_JSON),
                         json.dumps(card, indent=2, ensure_ascii=False) + "\n")
        return _record(output, True, "written")


def _card(input_dict: Dict[str, List[types.Artifact]], settings: CardSettings) -> dict:
    model = artifact_utils.get_single_instance(input_dict[keys.MODEL_KEY])
    blessing = artifact_utils.get_single_instance(input_dict[keys.MODEL_BLESSING_KEY])
    release = release_of((input_dict.get(keys.EXAMPLES_KEY) or [None])[0], blessing,
                         settings.allow_drift)
    sources = read_card_sources(settings.model_name, path_utils.serving_model_path(model.uri),
                                model.uri, blessing.uri,
                                # the Evaluator's verdict: the ingest report only says
                                # which spans were compared
                                {**release.report, "drift": release.drift or {}},
                                release.record)
    return build_card(sources, conversion(input_dict))


def conversion(input_dict: Dict[str, List[types.Artifact]]):
    """The TFLite conversion's verdict as the card tells it, or None without one."""
    tflite = (input_dict.get(TFLITE_MODEL_KEY) or [None])[0]
    if tflite is None:
        return None
    parity = tflite.get_custom_property(TFLITE_PARITY_PROPERTY)
    metadata = tflite.get_custom_property(TFLITE_METADATA_PROPERTY)
    return {"quantize": tflite.get_custom_property(QUANTIZE_PROPERTY) or None,
            "pushed": tflite.get_custom_property(CONVERTED_PROPERTY) == 1,
            "reason": tflite.get_custom_property(REASON_PROPERTY),
            "parity": json.loads(parity) if parity else None,
            "metadata": json.loads(metadata) if metadata else None}


def _record(output: types.Artifact, written: bool, reason: str) -> None:
    logging.info("ModelCardGenerator: %s", reason)
    output.set_int_custom_property(WRITTEN_PROPERTY, int(written))
    output.set_string_custom_property(REASON_PROPERTY, reason)
