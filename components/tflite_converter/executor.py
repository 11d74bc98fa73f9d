"""TFX adapter: convert a blessed model to TFLite (staging.py); record the verdict.

A model either blessing refused is not converted. The verdict is recorded on
the output, where a TFX user looks for the stage that refused: `converted`
(1 or 0), `reason`, `tflite_parity` and `tflite_metadata` (JSON).
"""
import json
import logging
from typing import Any, Dict, List

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils, standard_component_specs as keys
from tfx.utils import path_utils

from core.blessings import not_blessed
from core.contract import (CONVERTED_PROPERTY, QUANTIZE_PROPERTY, REASON_PROPERTY,
                           TFLITE_METADATA_PROPERTY, TFLITE_MODEL_KEY,
                           TFLITE_PARITY_PROPERTY)
from core.parameters import decode
from components.tflite_converter.settings import TFLiteSettings
from components.tflite_converter.staging import convert_into
from core import tfx_internals

# The output is a Model artifact holding model.tflite, as TFX's TFLite rewriter's is.
UNVERSIONED = "unversioned"  # the TFLite metadata's version


class Executor(base_executor.BaseExecutor):
    """Converts the candidate when both blessings allow it; never fails the run over TFLite."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Writes model.tflite and its files into the output, or records why not."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        output = artifact_utils.get_single_instance(output_dict[TFLITE_MODEL_KEY])
        refused = not_blessed(input_dict)
        if refused:
            _record(output, {"converted": False, "reason": f"not converted: {refused}",
                             "parity": None, "metadata": None})
            return
        model = artifact_utils.get_single_instance(input_dict[keys.MODEL_KEY])
        examples = artifact_utils.get_single_instance(input_dict[keys.EXAMPLES_KEY])
        model_path = path_utils.serving_model_path(model.uri)
        settings = decode(TFLiteSettings, exec_properties)
        output.set_string_custom_property(QUANTIZE_PROPERTY, settings.quantize)
        try:
            # The file is made before the Pusher numbers the version: model_info.json's
            # source_version, which the Pusher writes, names it.
            result = convert_into(model_path, examples.uri, output.uri, settings,
                                  source=UNVERSIONED)
        except Exception as e:  # noqa: BLE001  (the SavedModel still ships; say why not TFLite)
            result = conversion_failed(e)
        # The conversion written, where the one asked for lost too much (staging.fallbacks).
        output.set_string_custom_property(QUANTIZE_PROPERTY,
                                          result.get("quantize") or settings.quantize)
        _record(output, result)


def conversion_failed(error: Exception) -> dict:
    """The verdict of a conversion that raised: the first line of the error."""
    logging.exception("TFLite conversion failed")
    text = str(error).strip()
    return {"converted": False, "parity": {"ok": False}, "metadata": None,
            "reason": f"TFLite conversion failed: {type(error).__name__}: "
                      f"{text.splitlines()[0] if text else ''}"}


def _record(output: types.Artifact, result: dict) -> None:
    logging.info("TFLiteConverter: %s", result["reason"])
    output.set_int_custom_property(CONVERTED_PROPERTY, int(bool(result["converted"])))
    output.set_string_custom_property(REASON_PROPERTY, result["reason"])
    if result.get("parity") is not None:
        # With each conversion tried, so that readers see a fallback without parsing the reason.
        output.set_string_custom_property(TFLITE_PARITY_PROPERTY, json.dumps(
            {**result["parity"], "tried": result.get("tried") or []}))
    if result.get("metadata") is not None:
        output.set_string_custom_property(TFLITE_METADATA_PROPERTY, json.dumps(result["metadata"]))
