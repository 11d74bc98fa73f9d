"""ImageEvaluator: TFX's Evaluator with our executor, the drift verdict, `allow_drift`, the
audit's gates, and the train statistics for the monitoring reference."""
from typing import Optional

from tfx import types
from tfx.components.evaluator.component import Evaluator
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter, ExecutionParameter

from components.image_evaluator import executor
from components.image_evaluator.settings import AuditSettings
from core.parameters import encode, execution_parameters


class ImageEvaluatorSpec(standard_component_specs.EvaluatorSpec):
    """The Evaluator's spec, the optional drift verdict (an ImageDistributionValidator's
    ExampleAnomalies) and statistics (StatisticsGen's), `allow_drift`, and one parameter
    per AuditSettings field."""

    INPUTS = {**standard_component_specs.EvaluatorSpec.INPUTS,
              executor.DRIFT_KEY: ChannelParameter(type=standard_artifacts.ExampleAnomalies,
                                                   optional=True),
              executor.STATISTICS_KEY: ChannelParameter(
                  type=standard_artifacts.ExampleStatistics, optional=True)}
    PARAMETERS = {**standard_component_specs.EvaluatorSpec.PARAMETERS,
                  executor.ALLOW_DRIFT_KEY: ExecutionParameter(type=int),
                  **execution_parameters(AuditSettings)}


class ImageEvaluator(Evaluator):
    """tfx.components.Evaluator's arguments, `allow_drift`, `settings` (executor.py),
    `drift`: the ImageDistributionValidator's anomalies, whose verdict vetoes a model
    judged on a drifted newest span (without it, data without spans, nothing is judged),
    and `statistics`: StatisticsGen's, whose train split goes into the monitoring
    reference (without it the reference has predictions only)."""

    SPEC_CLASS = ImageEvaluatorSpec
    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)

    def __init__(self, *args, allow_drift: bool, settings: AuditSettings,
                 drift: Optional[types.BaseChannel] = None,
                 statistics: Optional[types.BaseChannel] = None, **kwargs):
        # Evaluator.__init__ turns its arguments into the stock spec, and checks it
        # against SPEC_CLASS; a stock Evaluator builds it, and ours takes its values,
        # with new output channels (the stock ones name their producer).
        stock = Evaluator(*args, **kwargs).spec
        values = {**stock.exec_properties, **stock.inputs,
                  **{key: types.Channel(type=channel.type)
                     for key, channel in stock.outputs.items()},
                  executor.DRIFT_KEY: drift, executor.STATISTICS_KEY: statistics,
                  executor.ALLOW_DRIFT_KEY: int(allow_drift), **encode(settings)}
        base_component.BaseComponent.__init__(self, spec=ImageEvaluatorSpec(**values))
