"""ImageDistributionValidator: TFX's DistributionValidator on the newest and the previous span."""
from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts, standard_component_specs as keys
from tfx.types.component_spec import ChannelParameter, ComponentSpec

from core.parameters import encode, execution_parameters
from components.drift_validator import executor
from components.drift_validator.settings import DriftSettings


class ImageDistributionValidatorSpec(ComponentSpec):
    """StatisticsGen's statistics, ImageExampleGen's examples, the four thresholds."""

    PARAMETERS = execution_parameters(DriftSettings)
    INPUTS = {
        keys.STATISTICS_KEY: ChannelParameter(type=standard_artifacts.ExampleStatistics),
        keys.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples),
    }
    OUTPUTS = {keys.ANOMALIES_KEY: ChannelParameter(type=standard_artifacts.ExampleAnomalies)}


class ImageDistributionValidator(base_component.BaseComponent):
    """Compares the newest span's examples with the previous span's: TFX's
    DistributionValidator, with TFDV's L-infinity distance on the class names and the
    grayscale slice, and its Jensen-Shannon divergence on the brightness, height and width.

    The statistics must hold ImageExampleGen's `newest_span` and `previous_span`
    splits; without them (a first span, a previous span never ingested, data without
    spans) the verdict is "not compared", with the reason. Outputs an
    `ExampleAnomalies`: TFX's anomalies when compared, drift.json (the verdict the
    Evaluator judges by) and the verdict as its `drift_verdict` custom property.
    """

    SPEC_CLASS = ImageDistributionValidatorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, statistics: types.BaseChannel, examples: types.BaseChannel,
                 settings: DriftSettings):
        super().__init__(spec=ImageDistributionValidatorSpec(
            statistics=statistics, examples=examples, **encode(settings),
            anomalies=types.Channel(type=standard_artifacts.ExampleAnomalies)))
