"""ModelCardGenerator: the model card of a blessed model, as a step of its own."""
from typing import Optional

from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts, standard_component_specs as keys
from tfx.types.component_spec import ChannelParameter, ComponentSpec
from tfx.types.experimental.simple_artifacts import File

from core.contract import MODEL_CARD_KEY, TFLITE_MODEL_KEY
from components.model_card import executor
from components.model_card.settings import CardSettings
from core.parameters import encode, execution_parameters


class ModelCardGeneratorSpec(ComponentSpec):
    """The model, its blessings, examples and TFLite conversion in; the card out.

    The output is TFX's `File` type: the Kubeflow V2 compiler turns any type it
    does not know into a class path it must import at run time, and only
    `module.Class` names of a top-level module pass its check, which
    imagepipe's packages are not (tfx/orchestration/kubeflow/v2/compiler_utils.py).
    """

    PARAMETERS = execution_parameters(CardSettings)
    INPUTS = {
        keys.MODEL_KEY: ChannelParameter(type=standard_artifacts.Model),
        keys.MODEL_BLESSING_KEY: ChannelParameter(type=standard_artifacts.ModelBlessing),
        keys.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples, optional=True),
        keys.INFRA_BLESSING_KEY: ChannelParameter(type=standard_artifacts.InfraBlessing,
                                                  optional=True),
        TFLITE_MODEL_KEY: ChannelParameter(type=standard_artifacts.Model, optional=True),
    }
    OUTPUTS = {MODEL_CARD_KEY: ChannelParameter(type=File)}


class ModelCardGenerator(base_component.BaseComponent):
    """Writes model_card.json (the Model Card Toolkit's schema v0.0.2) for a blessed model:
    data, training, metrics, slices, robustness, limitations and the TFLite trade-off.

    The Pusher stamps it with the version it publishes and ships it, as JSON and HTML,
    in both versions.
    """

    SPEC_CLASS = ModelCardGeneratorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model: types.BaseChannel, model_blessing: types.BaseChannel,
                 settings: CardSettings, examples: Optional[types.BaseChannel] = None,
                 infra_blessing: Optional[types.BaseChannel] = None,
                 tflite_model: Optional[types.BaseChannel] = None):
        super().__init__(spec=ModelCardGeneratorSpec(
            model=model, model_blessing=model_blessing, examples=examples,
            infra_blessing=infra_blessing, **{TFLITE_MODEL_KEY: tflite_model},
            **encode(settings), **{MODEL_CARD_KEY: types.Channel(type=File)}))
