"""TFX adapter: InfraValidator's outputs over validate.py's check.

The InfraBlessing gets what TFX's InfraValidator writes (`blessed`, the
INFRA_BLESSED or INFRA_NOT_BLESSED file, and with a stamped model
`has_model`), plus `reason` and, when a check ran, `serving_check`: the verdict and its
figures as JSON, where a TFX user looks for why nothing was pushed.
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

from core.contract import INFRA_MODEL_FLAG, REASON_PROPERTY, SERVING_CHECK_PROPERTY
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
        _record(blessing, result)


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
