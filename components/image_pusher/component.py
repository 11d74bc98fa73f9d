"""ImagePusher: TFX's Pusher spec plus the examples, the TFLite file, the card, PushSettings."""
from typing import Optional

from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.proto import pusher_pb2
from tfx.types import standard_artifacts, standard_component_specs
from tfx.types.component_spec import ChannelParameter
from tfx.types.experimental.simple_artifacts import File

from core.contract import MODEL_CARD_KEY, TFLITE_MODEL_KEY
from components.image_pusher import executor
from components.image_pusher.settings import PushSettings
from core.parameters import encode, execution_parameters


class ImagePusherSpec(standard_component_specs.PusherSpec):
    """PusherSpec (model, model_blessing, infra_blessing) with the optional inputs the
    other stages make, and one parameter per PushSettings field."""

    PARAMETERS = {**standard_component_specs.PusherSpec.PARAMETERS,
                  **execution_parameters(PushSettings)}
    INPUTS = {**standard_component_specs.PusherSpec.INPUTS,
              executor.EXAMPLES_KEY: ChannelParameter(type=standard_artifacts.Examples,
                                                      optional=True),
              TFLITE_MODEL_KEY: ChannelParameter(type=standard_artifacts.Model, optional=True),
              MODEL_CARD_KEY: ChannelParameter(type=File, optional=True)}


class ImagePusher(base_component.BaseComponent):
    """Publishes the blessed model to a TF Serving base directory, atomically, and its
    TFLite file beside it.

    Pushes only what both the Evaluator and the InfraValidator blessed (the latter's
    stamped model, with its warmup records), after the drift gate. Writes
    models.config and batching.config one level up, for `tensorflow_model_server
    --model_config_file`. The TFLiteConverter's file (when it passed its gate) goes to
    `settings.tflite_dir`, and the ModelCardGenerator's card into both versions.
    """

    SPEC_CLASS = ImagePusherSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, model: types.BaseChannel, model_blessing: types.BaseChannel,
                 infra_blessing: Optional[types.BaseChannel],
                 push_destination: pusher_pb2.PushDestination,
                 examples: Optional[types.BaseChannel], settings: PushSettings,
                 tflite_model: Optional[types.BaseChannel] = None,
                 model_card: Optional[types.BaseChannel] = None):
        spec = ImagePusherSpec(
            model=model, model_blessing=model_blessing, infra_blessing=infra_blessing,
            examples=examples, push_destination=push_destination, **encode(settings),
            **{TFLITE_MODEL_KEY: tflite_model, MODEL_CARD_KEY: model_card},
            pushed_model=types.Channel(type=standard_artifacts.PushedModel))
        super().__init__(spec=spec)
