"""ImageInfraValidator: InfraValidator's place and outputs, compiled for Kubeflow too."""
from typing import Optional

from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts, standard_component_specs as keys
from tfx.types.component_spec import ChannelParameter, ComponentSpec

from core.parameters import encode, execution_parameters
from components.serving_validator import executor
from components.serving_validator.settings import ServingCheckSettings


class ImageInfraValidatorSpec(ComponentSpec):
    """InfraValidatorSpec's inputs and output, plus the Evaluator's blessing."""

    PARAMETERS = execution_parameters(ServingCheckSettings)
    INPUTS = {
        keys.MODEL_KEY: ChannelParameter(type=standard_artifacts.Model),
        keys.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples, optional=True),
        keys.MODEL_BLESSING_KEY: ChannelParameter(type=standard_artifacts.ModelBlessing,
                                                  optional=True),
    }
    OUTPUTS = {keys.BLESSING_KEY: ChannelParameter(type=standard_artifacts.InfraBlessing)}


class ImageInfraValidator(base_component.BaseComponent):
    """Loads the candidate in a fresh TensorFlow-only process as TF Serving would, replays
    warmup records made from eval images, answers REST-style requests and compares them
    with the signature the Evaluator scored.

    Outputs an `InfraBlessing`, with the model stamped with its warmup records when it
    passed (InfraValidator's `make_warmup`); the Pusher requires it. TFX's own
    InfraValidator needs Docker or Kubernetes for a real model server and cannot be
    compiled by the Kubeflow V2 runner; docs/serving.md says how to swap it in locally.
    """

    SPEC_CLASS = ImageInfraValidatorSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model: types.BaseChannel, examples: Optional[types.BaseChannel],
                 settings: ServingCheckSettings,
                 model_blessing: Optional[types.BaseChannel] = None):
        super().__init__(spec=ImageInfraValidatorSpec(
            model=model, examples=examples, model_blessing=model_blessing, **encode(settings),
            blessing=types.Channel(type=standard_artifacts.InfraBlessing)))
