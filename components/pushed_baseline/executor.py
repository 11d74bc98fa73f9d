"""TFX adapter: copy the latest pushed version (latest.py) into the baseline Model artifact."""
import os
from typing import Any, Dict, List

from tfx import types
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

from core.contract import NO_BASELINE
from core.storage.tree_copy import copy_tree
from components.pushed_baseline.latest import latest_other_than

# The output is `model`, as a resolver's is, so the Evaluator wiring is the same.
CANDIDATE_KEY, BASELINE_KEY, SERVING_DIR_KEY = "candidate", "model", "serving_dir"


class Executor(base_executor.BaseExecutor):
    """Copies, rather than points at, the version: KFP gives each output its own URI."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        candidate = artifact_utils.get_single_instance(input_dict[CANDIDATE_KEY])
        baseline = artifact_utils.get_single_instance(output_dict[BASELINE_KEY])
        found = latest_other_than(exec_properties[SERVING_DIR_KEY], candidate.uri)
        baseline.set_int_custom_property(NO_BASELINE, 0 if found else 1)
        if found:
            copy_tree(found, path_utils.serving_model_path(baseline.uri))
            baseline.set_string_custom_property("pushed_version", os.path.basename(found))
