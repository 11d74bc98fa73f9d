"""component_lines: start/done/FAILED lines around each launch, and the original restored."""
import io
from types import SimpleNamespace

import pytest
from tfx.dsl.component.experimental.annotations import InputArtifact, OutputArtifact
from tfx.dsl.component.experimental.decorators import component
from tfx.orchestration.portable import launcher
from tfx.types.standard_artifacts import Examples, Model

from pipeline.local.progress import component_lines


def _node(node_id):
    return SimpleNamespace(_pipeline_node=SimpleNamespace(node_info=SimpleNamespace(id=node_id)))


def test_lines_mark_cache_hits_and_failures_and_the_launcher_is_restored(monkeypatch):
    def stand_in(self):  # the component itself; its failure must surface unchanged
        if self._pipeline_node.node_info.id == "Bad":
            raise RuntimeError("boom")
        return "info"

    monkeypatch.setattr(launcher.Launcher, "launch", stand_in)
    out, told = io.StringIO(), []
    with component_lines(lambda node: node == "Cached", out=out,
                         after=lambda node, cached: told.append((node, cached))):
        assert launcher.Launcher.launch(_node("Fresh")) == "info"
        launcher.Launcher.launch(_node("Cached"))
        with pytest.raises(RuntimeError, match="boom"):
            launcher.Launcher.launch(_node("Bad"))
    assert launcher.Launcher.launch is stand_in
    lines = out.getvalue().splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["start", "Fresh"], ["done", "Fresh"], ["start", "Cached"], ["done", "Cached"],
        ["start", "Bad"], ["FAILED", "Bad"]]
    assert lines[3].endswith("cached") and not lines[1].endswith("cached")
    assert told == [("Fresh", False), ("Cached", True)]  # not told of a failure


def test_a_failing_cache_lookup_does_not_fail_the_component(monkeypatch):
    monkeypatch.setattr(launcher.Launcher, "launch", lambda self: "info")

    def broken_lookup(node):
        raise OSError("database is locked")

    out = io.StringIO()
    with component_lines(broken_lookup, out=out):
        assert launcher.Launcher.launch(_node("Trainer")) == "info"
    assert out.getvalue().splitlines()[-1].split()[:2] == ["done", "Trainer"]


@component
def Ingest(examples: OutputArtifact[Examples]):  # noqa: N802 (a component's name)
    """Ingests nothing new (TFX's decorator needs a top-level function)."""
    examples.set_int_custom_property("new_data", 0)


@component
def Train(examples: InputArtifact[Examples], model: OutputArtifact[Model]):  # noqa: N802
    """Must be skipped."""
    raise AssertionError("must not run")


@pytest.mark.integration  # a real LocalDagRunner on two tiny components: seconds
def test_a_step_whose_condition_is_false_is_marked_skipped(tmp_path):
    """TFX's `Cond`, as pipeline/dag.py puts every step after ImageExampleGen under it."""
    from tfx.dsl.experimental.conditionals.conditional import Cond
    from tfx.orchestration import metadata, pipeline
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner
    from tfx.types.channel import ChannelWrappedPlaceholder

    ingest = Ingest()
    with Cond(ChannelWrappedPlaceholder(ingest.outputs["examples"])[0]
              .custom_property("new_data") == 1):
        train = Train(examples=ingest.outputs["examples"])
    out = io.StringIO()
    with component_lines(lambda node: False, out=out):
        LocalDagRunner().run(pipeline.Pipeline(
            pipeline_name="p", pipeline_root=str(tmp_path / "root"), components=[ingest, train],
            metadata_connection_config=metadata.sqlite_metadata_connection_config(
                str(tmp_path / "m.db"))))
    lines = [line.split()[:2] for line in out.getvalue().splitlines()]
    assert ["done", "Ingest"] in lines and ["skipped", "Train"] in lines
