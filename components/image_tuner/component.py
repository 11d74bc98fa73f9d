"""ImageTuner: TFX's Tuner, whose executor also records every trial (trials.py)."""
from tfx.components import Tuner
from tfx.dsl.components.base import executor_spec

from components.image_tuner import executor


class ImageTuner(Tuner):
    """The stock Tuner (same spec, artifacts and `tuner_fn`), so the Trainer takes its
    best hyperparameters as it takes any Tuner's."""

    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)
