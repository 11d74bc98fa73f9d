"""TFX adapter: the stock Pusher executor's inputs and outputs over push.py.

The blessing check is TFX's (the Evaluator's and the InfraValidator's); then
the drift gate (components/drift_validator/verdict.py) on the verdict the Evaluator recorded
on its blessing; then push.push publishes what the stages before it made: the
stamped model, the TFLite folder that passed its gate, the model card, the
Evaluator's monitoring reference. What happened goes into the PushedModel's
custom properties, which summary.json reads.
"""
import json
import os
from typing import Any, Dict, List

from tfx import types
from tfx.components.pusher import executor as pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs as keys
from tfx.utils import path_utils, proto_utils

from core.contract import (CONVERTED_PROPERTY, INFRA_MODEL_FLAG,
                           INPUTS_DIGEST_PROPERTY, MODEL_CARD_JSON, MODEL_CARD_KEY,
                           MONITORING_DIR, SPANS_PROPERTY, TFLITE_MODEL_KEY,
                           VERDICT_PROPERTY, VERDICT_REASON_PROPERTY)
from components.image_pusher.judged_inputs import DATA, MODEL, record_judged
from components.image_pusher.refusal import Verdict, blocked, pushed, refused
from components.image_pusher.provenance import release_of
from components.image_pusher.push import PushInputs, PushOutcome, push
from components.image_pusher.settings import PushSettings
from core.parameters import decode
from core.storage import files
from core.storage.tree_copy import copy_tree
from core import tfx_internals

EXAMPLES_KEY = keys.EXAMPLES_KEY  # optional: the ingest report (spans)
# Custom properties beside the stock Pusher's: why nothing was pushed (drift, a rolled-back
# model), the drift a push went ahead despite, the version's model_card.json, the TFLite one.
BLOCKED, DRIFT_OVERRIDDEN = "blocked", "drift_overridden"
MODEL_CARD, TFLITE_DESTINATION = "model_card", "tflite_destination"


class Executor(pusher_executor.Executor):
    """Pushes a blessed model to `<base_directory>/<version>/`, never half-written."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Checks both blessings and drift, then pushes; records the outcome and its verdict
        (refusal.py), and that these inputs were judged (judged_inputs.py)."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(output_dict[keys.PUSHED_MODEL_KEY])
        outcome, verdict = self._push(input_dict, exec_properties, model_push)
        model_push.set_string_custom_property(VERDICT_PROPERTY, verdict.kind)
        model_push.set_string_custom_property(VERDICT_REASON_PROPERTY, verdict.reason)
        print(f"ImagePusher: verdict {verdict.kind}: {verdict.reason}", flush=True)
        examples = (input_dict.get(EXAMPLES_KEY) or [None])[0]
        if examples is not None and examples.has_custom_property(INPUTS_DIGEST_PROPERTY):
            record_judged(_base_directory(exec_properties),
                          examples.get_string_custom_property(INPUTS_DIGEST_PROPERTY),
                          examples.get_string_custom_property(SPANS_PROPERTY) or None,
                          verdict.kind, verdict.reason,
                          outcome.version if outcome.pushed else None)

    def _push(self, input_dict: Dict[str, List[types.Artifact]],
              exec_properties: Dict[str, Any], model_push: types.Artifact):
        """(what the push did, its verdict)."""
        if not self.CheckBlessing(input_dict):
            tfx_internals.mark_not_pushed(self, model_push)
            verdict = refused(_single(input_dict, keys.MODEL_BLESSING_KEY),
                              _single(input_dict, keys.INFRA_BLESSING_KEY))
            verdict = verdict or Verdict(MODEL, "not blessed")
            return PushOutcome(False, blocked="not blessed"), verdict
        settings = decode(PushSettings, exec_properties)
        blessing = artifact_utils.get_single_instance(input_dict[keys.MODEL_BLESSING_KEY])
        release = release_of((input_dict.get(EXAMPLES_KEY) or [None])[0], blessing,
                             settings.allow_drift, _base_directory(exec_properties))
        if release.blocked:
            outcome = PushOutcome(False, blocked=release.blocked, blamed=DATA)
            self._record(model_push, None, outcome)
            return outcome, blocked(outcome.blocked, outcome.blamed)
        if release.record.get(DRIFT_OVERRIDDEN):
            model_push.set_string_custom_property(DRIFT_OVERRIDDEN,
                                                  release.record[DRIFT_OVERRIDDEN])
        inputs = PushInputs(model_path=_stamped_or(self.GetModelPath(input_dict), input_dict),
                            model_uri=artifact_utils.get_single_instance(
                                input_dict[keys.MODEL_KEY]).uri,
                            base=_base_directory(exec_properties), record=release.record,
                            tflite_dir=_converted(input_dict), card=_draft_card(input_dict),
                            monitoring_dir=os.path.join(blessing.uri, MONITORING_DIR))
        outcome = push(inputs, settings)
        self._record(model_push, inputs.model_path, outcome)
        if outcome.pushed:
            return outcome, pushed(outcome.version)
        return outcome, blocked(outcome.blocked, outcome.blamed)

    def _record(self, model_push: types.Artifact, model_path, outcome: PushOutcome) -> None:
        """The outcome, as custom properties; a pushed model is copied into the output."""
        if outcome.blocked:
            model_push.set_string_custom_property(BLOCKED, outcome.blocked)
        if not outcome.pushed:
            tfx_internals.mark_not_pushed(self, model_push)
            return
        model_push.set_string_custom_property(TFLITE_DESTINATION, outcome.tflite_path or "")
        if outcome.model_card:
            model_push.set_string_custom_property(MODEL_CARD, outcome.model_card)
        copy_tree(model_path, model_push.uri)
        tfx_internals.mark_pushed(self, model_push, outcome.serving_path,
                                  str(outcome.version))


def _single(input_dict: Dict[str, List[types.Artifact]], key: str):
    return (input_dict.get(key) or [None])[0]


def _stamped_or(model_path: str, input_dict: Dict[str, List[types.Artifact]]) -> str:
    """The InfraValidator's stamped model (the SavedModel with its warmup records), as
    TFX's Pusher pushes when InfraValidator made warmup requests; else `model_path`."""
    infra = (input_dict.get(keys.INFRA_BLESSING_KEY) or [None])[0]
    if infra is not None and infra.get_int_custom_property(INFRA_MODEL_FLAG):
        return path_utils.stamped_model_path(infra.uri)
    return model_path


def _converted(input_dict: Dict[str, List[types.Artifact]]):
    """The TFLiteConverter's folder, if it converted and its file passed the gate."""
    tflite = (input_dict.get(TFLITE_MODEL_KEY) or [None])[0]
    converted = tflite is not None and tflite.get_custom_property(CONVERTED_PROPERTY) == 1
    return tflite.uri if converted else None


def _draft_card(input_dict: Dict[str, List[types.Artifact]]):
    """The ModelCardGenerator's card, if it wrote one."""
    card = (input_dict.get(MODEL_CARD_KEY) or [None])[0]
    path = os.path.join(card.uri, MODEL_CARD_JSON) if card is not None else None
    return json.loads(files.read_text(path)) if path and files.exists(path) else None


def _base_directory(exec_properties: Dict[str, Any]) -> str:
    destination = pusher_pb2.PushDestination()
    proto_utils.json_to_proto(exec_properties[keys.PUSH_DESTINATION_KEY], destination)
    return destination.filesystem.base_directory
