"""TFX adapter: the stock Pusher executor, with an atomic versioned push (versions.py)
and, when configured, a TFLite version that must pass the parity gate (tflite_push.py)."""
import json
import logging
import os
from typing import Any, Dict, List

from tfx import types
from tfx.components.pusher import executor as pusher_executor
from tfx.proto import pusher_pb2
from tfx.types import artifact_utils, standard_component_specs
from tfx.utils import proto_utils

from components.image_pusher.serving_config import write_serving_configs
from components.image_pusher.tflite_push import push_tflite
from components.image_pusher.tree_copy import copy_tree
from components.image_pusher.versions import next_version, publish, pushed_version_of


# The optional input with the examples: eval split for parity, train for int8 calibration.
EXAMPLES_KEY = "examples"


class Executor(pusher_executor.Executor):
    """Pushes a blessed model to `<base_directory>/<version>/`, never half-written."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Checks the blessing, publishes the version, then updates the serving configs."""
        self._log_startup(input_dict, output_dict, exec_properties)
        model_push = artifact_utils.get_single_instance(
            output_dict[standard_component_specs.PUSHED_MODEL_KEY])
        if not self.CheckBlessing(input_dict):
            self._MarkNotPushed(model_push)
            return
        model_path = self.GetModelPath(input_dict)
        destination = pusher_pb2.PushDestination()
        proto_utils.json_to_proto(
            exec_properties[standard_component_specs.PUSH_DESTINATION_KEY], destination)
        base = destination.filesystem.base_directory
        model_uri = self._model_uri(input_dict)
        version = pushed_version_of(base, model_uri)  # an interrupted earlier push
        if version is None:
            version = next_version(base)
            serving_path = publish(model_path, base, version, source_uri=model_uri)
        else:
            serving_path = os.path.join(base, str(version))
        write_serving_configs(os.path.dirname(base))
        self._push_tflite(input_dict, exec_properties, model_path, version, model_push)
        copy_tree(model_path, model_push.uri)
        self._MarkPushed(model_push, pushed_destination=serving_path,
                         pushed_version=str(version))

    @staticmethod
    def _model_uri(input_dict) -> str:
        return artifact_utils.get_single_instance(
            input_dict[standard_component_specs.MODEL_KEY]).uri

    def _push_tflite(self, input_dict, exec_properties, model_path, version, model_push):
        """The TFLite version, if configured; the outcome goes into custom properties."""
        config = json.loads(exec_properties.get(standard_component_specs.CUSTOM_CONFIG_KEY)
                            or "null")
        if not config or not input_dict.get(EXAMPLES_KEY):
            return
        examples = artifact_utils.get_single_instance(input_dict[EXAMPLES_KEY])
        try:
            result = push_tflite(model_path, examples.uri, config["tflite_dir"], version,
                                 config["quantize"], config["parity_tolerance"])
        except Exception as e:  # noqa: BLE001  (the SavedModel is pushed; say why not TFLite)
            logging.exception("TFLite push failed")
            result = {"path": None, "parity": {"ok": False},
                      "reason": f"TFLite conversion failed: {type(e).__name__}: "
                                f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}"}
        model_push.set_string_custom_property("tflite_destination", result["path"] or "")
        model_push.set_string_custom_property(
            "tflite_parity", json.dumps({**result["parity"], "reason": result["reason"]}))
