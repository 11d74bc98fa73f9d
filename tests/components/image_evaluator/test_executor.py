"""ImageEvaluator's adapter: a baseline marked empty is dropped before TFX's Evaluator runs."""
from tfx.components.evaluator import executor as evaluator_executor
from tfx.types import standard_artifacts

from components.contract import NO_BASELINE
from components.image_evaluator.executor import Executor


def _baseline(empty: int):
    model = standard_artifacts.Model()
    model.set_int_custom_property(NO_BASELINE, empty)
    return model


def _inputs_seen(monkeypatch, baseline):
    seen = {}
    monkeypatch.setattr(evaluator_executor.Executor, "Do",
                        lambda self, inputs, outputs, props: seen.update(inputs))
    Executor().Do({"model": [standard_artifacts.Model()], "baseline_model": baseline}, {}, {})
    return seen


def test_an_empty_baseline_is_dropped(monkeypatch):
    assert _inputs_seen(monkeypatch, [_baseline(1)])["baseline_model"] == []


def test_a_real_baseline_and_a_resolvers_are_kept(monkeypatch):
    found, resolved = _baseline(0), standard_artifacts.Model()  # resolvers set no property
    assert _inputs_seen(monkeypatch, [found])["baseline_model"] == [found]
    assert _inputs_seen(monkeypatch, [resolved])["baseline_model"] == [resolved]
