"""PushedBaseline: a TFX component, so it runs as an ordinary container step on KFP."""
from tfx import types
from tfx.dsl.components.base import base_component, executor_spec
from tfx.types import standard_artifacts
from tfx.types.component_spec import ChannelParameter, ComponentSpec, ExecutionParameter

from components.pushed_baseline import executor


class PushedBaselineSpec(ComponentSpec):
    PARAMETERS = {executor.SERVING_DIR_KEY: ExecutionParameter(type=str)}
    INPUTS = {executor.CANDIDATE_KEY: ChannelParameter(type=standard_artifacts.Model)}
    OUTPUTS = {executor.BASELINE_KEY: ChannelParameter(type=standard_artifacts.Model)}


class PushedBaseline(base_component.BaseComponent):
    """The newest model in `serving_dir` not pushed from `candidate`, as a Model artifact.

    The stand-in for the latest-blessed-model resolver where resolvers cannot
    run (open-source KFP). See latest.py for the trade-off.
    """

    SPEC_CLASS = PushedBaselineSpec
    EXECUTOR_SPEC = executor_spec.ExecutorClassSpec(executor.Executor)

    def __init__(self, candidate: types.BaseChannel, serving_dir: str):
        super().__init__(spec=PushedBaselineSpec(
            candidate=candidate, serving_dir=serving_dir,
            **{executor.BASELINE_KEY: types.Channel(type=standard_artifacts.Model)}))
