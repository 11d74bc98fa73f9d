"""PushedWarmStart: a TFX component, so it runs as an ordinary container step on KFP."""
from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts
from tfx.types.component_spec import ChannelParameter, ComponentSpec, ExecutionParameter

from components.pushed_warm_start import executor


class PushedWarmStartSpec(ComponentSpec):
    PARAMETERS = {executor.SERVING_DIR_KEY: ExecutionParameter(type=str)}
    INPUTS = {}
    OUTPUTS = {executor.MODEL_KEY: ChannelParameter(type=standard_artifacts.Model)}


class PushedWarmStart(base_component.BaseComponent):
    """The warm-start weights of the version served from `serving_dir`, as a Model artifact.

    The stand-in for the warm-start resolver where resolvers cannot run
    (open-source KFP); see served_weights.py. No inputs: compile its step with
    KFP's cache off, or a run would reuse the first run's answer.
    """

    SPEC_CLASS = PushedWarmStartSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, serving_dir: str):
        super().__init__(spec=PushedWarmStartSpec(
            serving_dir=serving_dir,
            **{executor.MODEL_KEY: types.Channel(type=standard_artifacts.Model)}))
