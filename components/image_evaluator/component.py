"""ImageEvaluator: TFX's Evaluator with our executor, `allow_drift` and the audit's gates."""
from tfx import types
from tfx.components.evaluator.component import Evaluator
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_component_specs
from tfx.types.component_spec import ExecutionParameter

from components.image_evaluator import executor
from components.image_evaluator.settings import AuditSettings
from components.common.parameters import encode, execution_parameters


class ImageEvaluatorSpec(standard_component_specs.EvaluatorSpec):
    """The Evaluator's spec, `allow_drift`, and one parameter per AuditSettings field."""

    PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                  executor.ALLOW_DRIFT_KEY: ExecutionParameter(type=int),
                  **execution_parameters(AuditSettings)}


class ImageEvaluator(Evaluator):
    """tfx.components.Evaluator's arguments, `allow_drift` and `settings` (executor.py)."""

    SPEC_CLASS = ImageEvaluatorSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(self, *args, allow_drift: bool, settings: AuditSettings, **kwargs):
        # Evaluator.__init__ turns its arguments into the stock spec, and checks it
        # against SPEC_CLASS; a stock Evaluator builds it, and ours takes its values,
        # with new output channels (the stock ones name their producer).
        stock = Evaluator(*args, **kwargs).spec
        values = {**stock.exec_properties, **stock.inputs,
                  **{key: types.Channel(type=channel.type)
                     for key, channel in stock.outputs.items()},
                  executor.ALLOW_DRIFT_KEY: int(allow_drift), **encode(settings)}
        base_component.BaseComponent.__init__(self, spec=ImageEvaluatorSpec(**values))
