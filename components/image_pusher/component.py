"""ImagePusher: TFX's Pusher (same spec, inputs and outputs) with our executor."""
from tfx import v1 as tfx
from tfx.dsl.components.base import executor_spec

from components.image_pusher import executor


class ImagePusher(tfx.components.Pusher):
    """Pushes the blessed model to a TF Serving base directory, atomically.

    Also writes models.config and batching.config one level up, for
    `tensorflow_model_server --model_config_file`.
    """

    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)
