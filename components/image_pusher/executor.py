"""TFX adapter: the stock Pusher executor's inputs and outputs over push.py.

The blessing check is TFX's; then the drift gate (continuous.py); the push
(warmup records, the serving check, an atomic versioned SavedModel and, when
configured, a TFLite version that must pass the parity gate) is push.push.
What happened goes into the PushedModel's custom properties, which
summary.json reads; the version's provenance gets the spans and the
Evaluator's accuracy; the model card (model_card/) is read from the blessing's
audit, the ingest report and the model.
"""
import json
import os
from typing import Any, Dict, List, Optional

from tfx import types
from tfx.components.pusher import executor as pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.drift import drift_gate
from components.image_pusher.continuous import push_record
from components.image_pusher.model_card.sources import read_card_sources
from components.image_pusher.push import PushOutcome, push
from components.image_pusher.settings import PushSettings
from components.storage.tree_copy import copy_tree
from components import tfx_internals
from components.contract import ACCURACY_PROPERTY, SPANS_PROPERTY, ingest_report
from components.parameters import decode


# The optional input with the examples: eval split for parity, train for int8 calibration.
EXAMPLES_KEY = "examples"
# Custom properties beside the stock Pusher's: why nothing was pushed (drift, a rolled-back
# model), the drift a push went ahead despite, the version's model_card.json, and whether
# model.tflite embeds its labels ({"embedded": true, ...} or {"embedded": false, "reason"}).
BLOCKED, DRIFT_OVERRIDDEN = "blocked", "drift_overridden"
MODEL_CARD, TFLITE_METADATA = "model_card", "tflite_metadata"


class Executor(pusher_executor.Executor):
    """Pushes a blessed model to `<base_directory>/<version>/`, never half-written."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Checks the blessing and drift, then pushes; records the outcome on the PushedModel."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        if not self.CheckBlessing(input_dict):
            tfx_internals.mark_not_pushed(self, model_push)
            return
        settings = decode(PushSettings, exec_properties)
        examples = (input_dict.get(EXAMPLES_KEY) or [None])[0]
        examples_uri = examples.uri if examples else None
        report = ingest_report(examples_uri)
        blocked, overridden = drift_gate(report, settings.allow_drift)
        if blocked:
            self._record(model_push, None, PushOutcome(False, None, None, None, None, blocked))
            return
        if overridden:
            model_push.set_string_custom_property(DRIFT_OVERRIDDEN, overridden)
        blessing = artifact_utils.get_single_instance(
            input_dict[standard_component_specs.MODEL_BLESSING_KEY])
        record = push_record(examples and examples.get_custom_property(SPANS_PROPERTY), report,
                             blessing.get_custom_property(ACCURACY_PROPERTY), overridden)
        model_path, base = self.GetModelPath(input_dict), _base_directory(exec_properties)
        model_uri = artifact_utils.get_single_instance(
            input_dict[standard_component_specs.MODEL_KEY]).uri
        card = read_card_sources(os.path.basename(os.path.normpath(base)), model_path,
                                 model_uri, blessing.uri, report, record)
        outcome = push(model_path, model_uri, base, examples_uri, settings, record, card)
        self._record(model_push, model_path, outcome)

    def _record(self, model_push: types.Artifact, model_path: Optional[str],
                outcome: PushOutcome) -> None:
        """The outcome, as custom properties; a pushed model is copied into the output."""
        if outcome.serving_check is not None:
            model_push.set_string_custom_property("serving_check",
                                                  json.dumps(outcome.serving_check))
        if outcome.blocked:
            model_push.set_string_custom_property(BLOCKED, outcome.blocked)
        if not outcome.pushed:
            tfx_internals.mark_not_pushed(self, model_push)
            return
        tflite = outcome.tflite
        if tflite is not None:
            model_push.set_string_custom_property("tflite_destination", tflite.path or "")
            model_push.set_string_custom_property(
                "tflite_parity", json.dumps({**tflite.parity, "reason": tflite.reason}))
            if tflite.metadata is not None:
                model_push.set_string_custom_property(TFLITE_METADATA, json.dumps(tflite.metadata))
        if outcome.model_card:
            model_push.set_string_custom_property(MODEL_CARD, outcome.model_card)
        copy_tree(model_path, model_push.uri)
        tfx_internals.mark_pushed(self, model_push, outcome.serving_path,
                                  str(outcome.version))


def _base_directory(exec_properties: Dict[str, Any]) -> str:
    destination = pusher_pb2.PushDestination()
    proto_utils.json_to_proto(
        exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
    return destination.filesystem.base_directory
