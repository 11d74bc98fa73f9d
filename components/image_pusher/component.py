"""ImagePusher: TFX's Pusher spec plus the examples (warmup, TFLite gate) and PushSettings."""
from typing import Optional

from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.proto import pusher_pb2
from tfx.types import standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter

from components.image_pusher import executor
from components.image_pusher.settings import PushSettings
from components.parameters import encode, execution_parameters


class ImagePusherSpec(standard_component_specs.PusherSpec):
    """PusherSpec with an optional `examples` input and one parameter per PushSettings field."""

    PARAMETERS = {**standard_component_specs.PusherSpec.PARAMETERS,
                  **execution_parameters(PushSettings)}
    INPUTS = {**standard_component_specs.PusherSpec.INPUTS,
              executor.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples,
                                                      optional=True)}


class ImagePusher(base_component.BaseComponent):
    """Pushes the blessed model to a TF Serving base directory, atomically, and to TFLite.

    Before anything is published, the serving check (push.py) loads the model
    in a fresh process, replays its warmup records and answers REST requests.
    Also writes models.config and batching.config one level up, for
    `tensorflow_model_server --model_config_file`. With `settings.tflite_dir`,
    the model is converted (`settings.quantize`) and pushed there only if its
    eval-split accuracy is within `settings.parity_tolerance` of the SavedModel's.
    """

    SPEC_CLASS = ImagePusherSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model: types.BaseChannel, model_blessing: types.BaseChannel,
                 push_destination: pusher_pb2.PushDestination,
                 examples: Optional[types.BaseChannel], settings: PushSettings):
        spec = ImagePusherSpec(
            model=model, model_blessing=model_blessing, examples=examples,
            push_destination=push_destination, **encode(settings),
            pushed_model=types.Channel(type=standard_artifacts.PushedModel))
        super().__init__(spec=spec)
