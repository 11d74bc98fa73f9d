"""TFX adapter: the stock Evaluator executor, minus a baseline that says it is empty."""
from typing import Any, Dict, List

from tfx import types
from tfx.components.evaluator import executor as evaluator_executor
from tfx.types import standard_component_specs

from components.contract import NO_BASELINE

_BASELINE = standard_component_specs.BASELINE_MODEL_KEY


class Executor(evaluator_executor.Executor):
    """On a first run PushedBaseline still outputs a Model artifact (KFP needs one), marked
    empty. The stock executor would try to load it; without it, TFX drops the baseline
    model spec and the change threshold, as it does when a resolver finds nothing."""

    def Do(self, input_dict: Dict[str, List[types.Artifact]],  # noqa: N802 (TFX API)
           output_dict: Dict[str, List[types.Artifact]],
           exec_properties: Dict[str, Any]) -> None:
        baseline = input_dict.get(_BASELINE) or []
        if baseline and baseline[0].get_int_custom_property(NO_BASELINE) == 1:
            input_dict = {**input_dict, _BASELINE: []}
        super().Do(input_dict, output_dict, exec_properties)
