"""TFX adapter: InfraValidator's outputs over validate.py's check.

The InfraBlessing gets what TFX's InfraValidator writes (`blessed`, the
INFRA_BLESSED or INFRA_NOT_BLESSED file, and with a stamped model
`has_model`), plus `reason` and, when a check ran, `serving_check`: the verdict and its
figures as JSON, where a TFX user looks for why nothing was pushed. A check that
blames the infrastructure (it timed out, its process crashed) blesses nothing: the
step fails, and says so (InfrastructureFailure).
"""
import json
import logging
import os
from typing import Any, Dict, List

from tfx import types
from tfx.components.util import model_utils
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils, standard_component_specs as keys
from tfx.utils import path_utils

from components.image_pusher import judged_inputs
from components.serving_validator.check import INFRASTRUCTURE
from core.contract import (INFRA_MODEL_FLAG, INPUTS_DIGEST_PROPERTY, JUDGED_IN_PROPERTY,
                           REASON_PROPERTY, SERVING_CHECK_PROPERTY, SPANS_PROPERTY)
from core.parameters import decode
from components.serving_validator.settings import ServingCheckSettings
from components.serving_validator.validate import validate_serving
from core.storage import files
from core import tfx_internals

# InfraValidator's own names (tfx/components/infra_validator/executor.py).
BLESSED_KEY = "blessed"
BLESSED_FILE, NOT_BLESSED_FILE = "INFRA_BLESSED", "INFRA_NOT_BLESSED"


class Executor(base_executor.BaseExecutor):
    """Checks a blessed model in a fresh serving process; skips one the Evaluator refused."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        """Blesses (and stamps) the model if it serves; records the verdict either way."""
        tfx_internals.log_startup(self, input_dict, output_dict, exec_properties)
        blessing = artifact_utils.get_single_instance(output_dict[keys.BLESSING_KEY])
        evaluated = (input_dict.get(keys.MODEL_BLESSING_KEY) or [None])[0]
        if evaluated is not None and not model_utils.is_model_blessed(evaluated):
            _record(blessing, {"ok": False, "reason": "not checked: the Evaluator did not "
                                                      "bless the model"}, checked=False)
            return
        model = artifact_utils.get_single_instance(input_dict[keys.MODEL_KEY])
        examples = (input_dict.get(keys.EXAMPLES_KEY) or [None])[0]
        result = validate_serving(path_utils.serving_model_path(model.uri),
                                  examples.uri if examples else None,
                                  decode(ServingCheckSettings, exec_properties),
                                  path_utils.stamped_model_path(blessing.uri))
        if not result["ok"] and result.get("kind") == INFRASTRUCTURE:
            raise InfrastructureFailure(_failed(examples, result["reason"]))
        _record(blessing, result)


class InfrastructureFailure(RuntimeError):
    """The serving check timed out or its process crashed: nothing was judged."""


def _failed(examples, reason: str) -> str:
    """Records the failed try where the inputs' verdicts are kept (a compiled run's push
    destination: judged_inputs.py) and returns the step's error message.

    Why fail the step rather than record "not blessed": a failed execution is never a
    cache hit, so a local re-run checks again, and a compiled run's next schedule
    tries again instead of finding these inputs judged.
    """
    message = f"ImageInfraValidator: {reason}. The infrastructure failed, not the model: "
    where = examples.get_custom_property(JUDGED_IN_PROPERTY) if examples else None
    digest = examples.get_custom_property(INPUTS_DIGEST_PROPERTY) if examples else None
    if not where or not digest:
        return message + "nothing was judged, and a re-run checks again"
    failures = judged_inputs.record_failure(where, digest,
                                            examples.get_custom_property(SPANS_PROPERTY) or None,
                                            reason)
    return message + (f"failed try {failures} on these inputs; the next run tries again"
                      if failures < judged_inputs.MAX_FAILURES else
                      f"failed try {failures} on these inputs; the next run on them gives up "
                      "and records them as judged")


def _record(blessing: types.Artifact, result: dict, checked: bool = True) -> None:
    """The verdict; `serving_check` (the check's figures) only when a check ran."""
    logging.info("InfraValidator: %s", result.get("reason") or result)
    blessing.set_string_custom_property(REASON_PROPERTY, result.get("reason") or "")
    if checked:
        blessing.set_string_custom_property(SERVING_CHECK_PROPERTY, json.dumps(result))
    blessing.set_int_custom_property(BLESSED_KEY, int(bool(result["ok"])))
    files.write_text(os.path.join(blessing.uri, BLESSED_FILE if result["ok"]
                                  else NOT_BLESSED_FILE), "")
    if result["ok"]:
        blessing.set_int_custom_property(INFRA_MODEL_FLAG, 1)
