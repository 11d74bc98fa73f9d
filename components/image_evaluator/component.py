"""ImageEvaluator: TFX's Evaluator component with the executor above."""
from tfx.components.evaluator.component import Evaluator
from tfx.dsl.components.base import executor_spec

from components.image_evaluator import executor


class ImageEvaluator(Evaluator):
    """Same spec and arguments as tfx.components.Evaluator."""

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(executor.Executor)
