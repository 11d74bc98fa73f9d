"""TFX adapter: the stock Pusher executor's inputs and outputs over push.py.

The blessing check is TFX's; the push (warmup records, the serving check, an
atomic versioned SavedModel and, when configured, a TFLite version that must
pass the parity gate) is push.push. What happened goes into the PushedModel's
custom properties, which summary.json reads.
"""
import json
from typing import Any, Dict, List

from tfx import types
from tfx.components.pusher import executor as pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.image_pusher.push import push
from components.image_pusher.settings import PushSettings
from components.storage.tree_copy import copy_tree
from components import tfx_internals
from components.parameters import decode


# The optional input with the examples: eval split for parity, train for int8 calibration.
EXAMPLES_KEY = "examples"


class Executor(pusher_executor.Executor):
    """Pushes a blessed model to `<base_directory>/<version>/`, never half-written."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Checks the blessing, then pushes; records the outcome on the PushedModel."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        if not self.CheckBlessing(input_dict):
            tfx_internals.mark_not_pushed(self, model_push)
            return
        destination = pusher_pb2.PushDestination()
        proto_utils.json_to_proto(
            exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
        examples = input_dict.get(EXAMPLES_KEY)
        model_path = self.GetModelPath(input_dict)
        outcome = push(model_path, artifact_utils.get_single_instance(
                           input_dict[standard_component_specs.MODEL_KEY]).uri,
                       destination.filesystem.base_directory,
                       artifact_utils.get_single_instance(examples).uri if examples else None,
                       decode(PushSettings, exec_properties))
        model_push.set_string_custom_property("serving_check",
                                              json.dumps(outcome.serving_check))
        if not outcome.pushed:
            tfx_internals.mark_not_pushed(self, model_push)
            return
        tflite = outcome.tflite
        if tflite is not None:
            model_push.set_string_custom_property("tflite_destination", tflite.path or "")
            model_push.set_string_custom_property(
                "tflite_parity", json.dumps({**tflite.parity, "reason": tflite.reason}))
        copy_tree(model_path, model_push.uri)
        tfx_internals.mark_pushed(self, model_push, outcome.serving_path,
                                  str(outcome.version))
