"""TFLiteConverter: the blessed SavedModel as model.tflite, gated on eval accuracy."""
from typing import Optional

from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts, standard_component_specs as keys
from tfx.types.component_spec import ChannelParameter, ComponentSpec

from core.contract import TFLITE_MODEL_KEY
from core.parameters import encode, execution_parameters
from components.tflite_converter import executor
from components.tflite_converter.settings import TFLiteSettings


class TFLiteConverterSpec(ComponentSpec):
    """The model and its examples in, a Model artifact holding model.tflite out."""

    PARAMETERS = execution_parameters(TFLiteSettings)
    INPUTS = {
        keys.MODEL_KEY: ChannelParameter(type=standard_artifacts.Model),
        keys.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples),
        keys.MODEL_BLESSING_KEY: ChannelParameter(type=standard_artifacts.ModelBlessing,
                                                  optional=True),
        keys.INFRA_BLESSING_KEY: ChannelParameter(type=standard_artifacts.InfraBlessing,
                                                  optional=True),
    }
    OUTPUTS = {TFLITE_MODEL_KEY: ChannelParameter(type=standard_artifacts.Model)}


class TFLiteConverter(base_component.BaseComponent):
    """Converts the candidate (`settings.quantize`; int8 calibrated on the train split),
    embeds its labels and normalization as TFLite metadata, and keeps it only if its
    accuracy on the eval split's files, read as an on-device client reads them, is within
    `settings.parity_tolerance` of the SavedModel's (staging.convert_into).

    Runs only for a model the blessings given accept. The Pusher publishes what it
    wrote as `<tflite_dir>/<version>/`.
    """

    SPEC_CLASS = TFLiteConverterSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model: types.BaseChannel, examples: types.BaseChannel,
                 settings: TFLiteSettings,
                 model_blessing: Optional[types.BaseChannel] = None,
                 infra_blessing: Optional[types.BaseChannel] = None):
        super().__init__(spec=TFLiteConverterSpec(
            model=model, examples=examples, model_blessing=model_blessing,
            infra_blessing=infra_blessing, **encode(settings),
            **{TFLITE_MODEL_KEY: types.Channel(type=standard_artifacts.Model)}))
