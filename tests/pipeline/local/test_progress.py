"""component_lines: start/done/FAILED lines around each launch, and the original restored."""
import io
from types import SimpleNamespace

import pytest
from tfx.orchestration.portable import launcher

from pipeline.local.progress import component_lines


def _node(node_id):
    return SimpleNamespace(_pipeline_node=SimpleNamespace(node_info=SimpleNamespace(id=node_id)))


def test_lines_mark_cache_hits_and_failures_and_the_launcher_is_restored(monkeypatch):
    def stand_in(self):  # the component itself; its failure must surface unchanged
        if self._pipeline_node.node_info.id == "Bad":
            raise RuntimeError("boom")
        return "info"

    monkeypatch.setattr(launcher.Launcher, "launch", stand_in)
    out = io.StringIO()
    with component_lines(lambda node: node == "Cached", out=out):
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


def test_a_failing_cache_lookup_does_not_fail_the_component(monkeypatch):
    monkeypatch.setattr(launcher.Launcher, "launch", lambda self: "info")

    def broken_lookup(node):
        raise OSError("database is locked")

    out = io.StringIO()
    with component_lines(broken_lookup, out=out):
        assert launcher.Launcher.launch(_node("Trainer")) == "info"
    assert out.getvalue().splitlines()[-1].split()[:2] == ["done", "Trainer"]
