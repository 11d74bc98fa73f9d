"""TFX adapter: the served version's warm-start folder (served_weights.py) into the Model
artifact the Trainer takes as its `base_model`."""
from typing import Any, Dict, List

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils

from components.pushed_warm_start.served_weights import fill, served_origin

# The output is `model`, as a resolver's is, so the Trainer's wiring is the same.
MODEL_KEY, SERVING_DIR_KEY = "model", "serving_dir"
# Custom properties of the output: 1 when it holds no weights (KFP needs an artifact
# either way; the Trainer reads the same verdict from its origin.json), the reason, and
# the version and Model artifact the weights come from.
NO_WARM_START, REASON = "no_warm_start", "reason"
PUSHED_VERSION, SOURCE_URI = "pushed_version", "source_uri"


class Executor(base_executor.BaseExecutor):
    """Copies, rather than points at, the folder: KFP gives each output its own URI."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        model = artifact_utils.get_single_instance(output_dict[MODEL_KEY])
        origin = served_origin(exec_properties[SERVING_DIR_KEY])
        fill(origin, model.uri)
        model.set_int_custom_property(NO_WARM_START, 0 if origin.folder else 1)
        model.set_string_custom_property(REASON, origin.reason)
        if origin.version is not None:
            model.set_int_custom_property(PUSHED_VERSION, origin.version)
        if origin.source_uri:
            model.set_string_custom_property(SOURCE_URI, origin.source_uri)
