"""The one comparison rule, and every gate that calls it: a figure equal to its typed limit
is on the passing side, and one right answer fewer is not (hypothesis draws the counts)."""
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core import limits
from components.image_evaluator.audit.gates import accuracy_gates, apply_gates
from components.image_evaluator.settings import AuditSettings
from components.tflite_converter.conversion import parity_verdict
from monitor import alerts
from monitor.prometheus import metrics_registry

THRESHOLDS = (0.7, 0.8, 0.85, 0.9, 0.97)
# A threshold and a multiple m of its denominator: k = numerator * m of n = denominator * m
# is exactly the threshold.
EDGES = st.tuples(st.sampled_from(THRESHOLDS), st.integers(min_value=1, max_value=400))


def _edge(threshold: float, multiple: int):
    """(k, n) with k/n equal to the typed `threshold`."""
    exact = Fraction(Decimal(repr(threshold)))
    return exact.numerator * multiple, exact.denominator * multiple


def test_the_limit_is_the_decimal_typed_and_a_count_is_its_exact_ratio():
    assert limits.exact(0.8) == Fraction(4, 5) and limits.exact(np.float32(0.8)) == Fraction(4, 5)
    assert limits.meets(limits.ratio(400, 500), 0.8)
    assert not limits.meets(limits.ratio(49, 51), 0.9607843137254902)  # the float is larger
    assert limits.meets(limits.difference(limits.ratio(475, 500), limits.ratio(485, 500)), -0.02)
    assert not limits.exceeds(limits.difference(0.8, 0.6), 0.2)  # float64 says 0.2000...07
    with pytest.raises(ValueError):
        limits.exact(float("nan"))


def _audit_settings(**kwargs) -> AuditSettings:
    return AuditSettings(**{"max_leakage_gain": None, "min_robust_accuracy": None,
                            "max_slice_gap": None, **kwargs})


@settings(max_examples=200, deadline=None)
@given(EDGES)
def test_tfma_accuracy_gate_passes_at_the_threshold_and_not_one_below(edge):
    threshold, multiple = edge
    right, total = _edge(threshold, multiple)
    gate = _audit_settings(accuracy_threshold=threshold)
    for k, passes in ((right, True), (right - 1, False)):
        float32 = float(np.float32(k) / np.float32(total))  # what TFMA reports
        gates, blocked = accuracy_gates(gate, {"candidate": (float32, total)})
        assert gates["min_accuracy"]["passed"] is passes and bool(blocked) is not passes
    assert str(threshold) in blocked[0]  # the threshold as typed, not float32's


@settings(max_examples=200, deadline=None)
@given(EDGES)
def test_leak_free_gate_passes_at_the_threshold_and_not_one_below(edge):
    threshold, multiple = edge
    right, total = _edge(threshold, multiple)
    for k, passes in ((right, True), (right - 1, False)):
        audit = {"examples": total + 7, "leakage": {"leaked": 7, "accuracy_without": k / total,
                                                    "gain": 0.0},
                 "robustness": {"mean": None}, "slices": {"gap": None, "worst": None}}
        gates, _ = apply_gates(_audit_settings(accuracy_threshold=threshold), audit)
        assert gates["min_leak_free_accuracy"]["passed"] is passes


@settings(max_examples=200, deadline=None)
@given(EDGES, st.sampled_from((0.01, 0.02, 0.05)))
def test_baseline_change_gate_passes_a_drop_equal_to_the_tolerance(edge, tolerance):
    _, multiple = edge
    total = 100 * multiple
    baseline = total - int(total * 0.03)  # 0.97
    candidate = baseline - int(Fraction(Decimal(repr(tolerance))) * total)
    settings_ = _audit_settings(baseline_tolerance=tolerance)
    for k, passes in ((candidate, True), (candidate - 1, False)):
        figures = {"candidate": (float(np.float32(k / total)), total),
                   "baseline": (float(np.float32(baseline / total)), total)}
        gates, _ = accuracy_gates(settings_, figures)
        assert gates["min_change_vs_baseline"]["passed"] is passes


def test_the_change_of_exactly_minus_002_passes():
    figures = {"candidate": (float(np.float32(0.95)), 100),
               "baseline": (float(np.float32(0.97)), 100)}
    gates, blocked = accuracy_gates(_audit_settings(baseline_tolerance=0.02), figures)
    assert gates["min_change_vs_baseline"] == {"limit": -0.02, "value": -0.02, "passed": True}
    assert blocked == []


@settings(max_examples=200, deadline=None)
@given(EDGES, st.sampled_from((0.05, 0.1, 0.2, 0.3)))
def test_slice_gap_gate_passes_a_gap_equal_to_the_limit(edge, limit):
    """The gate judges the overall accuracy (k/n exactly) minus a slice's 95% upper bound:
    a gap equal to --max-slice-gap passes, one a float further does not."""
    overall, multiple = edge
    right, total = _edge(overall, multiple)
    upper = float(Decimal(repr(overall)) - Decimal(repr(limit)))  # a short decimal
    for bound, passes in ((upper, True), (float(np.nextafter(upper, 0.0)), False)):
        judged = {"feature": "image/group", "value": "x", "accuracy": bound - 0.05,
                  "examples": 40, "interval": [bound - 0.1, bound]}
        slices = {"overall": float(np.float32(right) / np.float32(total)),
                  "gap": 0.05, "worst": judged, "judged": judged,
                  "judged_gap": float(np.float32(right) / np.float32(total)) - bound}
        audit = {"examples": total, "leakage": {"leaked": 0, "gain": None},
                 "robustness": {"mean": None}, "slices": slices}
        gates, blocked = apply_gates(_audit_settings(max_slice_gap=limit), audit)
        assert gates["max_slice_gap"]["passed"] is passes
        assert passes or "image/group=x" in blocked[0]


@settings(max_examples=200, deadline=None)
@given(EDGES)
def test_tflite_parity_passes_a_drop_equal_to_the_tolerance(edge):
    tolerance, multiple = edge
    dropped, total = _edge(tolerance, multiple)
    assert parity_verdict(total, total - dropped, total, tolerance)["ok"]
    assert not parity_verdict(total, total - dropped - 1, total, tolerance)["ok"]


def _pushed_alerts(result: dict) -> set:
    """The alerts Prometheus's rules raise on what the monitor pushes: value over (or, for
    accuracy, under) the threshold pushed beside it, in float64 as Prometheus compares."""
    samples = {}
    for metric in metrics_registry(result).collect():
        for sample in metric.samples:
            samples[sample.name] = sample.value
    raised = set()
    for name in ("prediction_drift", "low_confidence_ratio", "accuracy_ratio"):
        value = samples.get(f"imagepipe_monitor_{name}")
        line = samples.get(f"imagepipe_monitor_{name}_threshold")
        if value is not None and (value < line if name == "accuracy_ratio" else value > line):
            raised.add(name)
    return raised


def _monitor_result(measures: dict) -> dict:
    return {"model": "m", "version": "1", "measures": measures, "alerts": [],
            "window": {"records": 1, "bad": 0}, "seconds": 1.0,
            "time": "2026-11-29T00:00:00+00:00"}


@settings(max_examples=200, deadline=None)
@given(EDGES, st.sampled_from((0.01, 0.02, 0.05, 0.2)))
def test_monitor_alerts_and_prometheus_agree_at_the_edge(edge, allowed):
    threshold, multiple = edge
    right, total = _edge(threshold, multiple)
    reference = limits.as_float(limits.exact(threshold) + limits.exact(allowed))
    if reference > 1:
        return
    for k, alerts_expected in ((right, False), (right - 1, True)):
        value = round(k / total, 6)
        measures = {
            "prediction_drift": {"value": value, "threshold": threshold},
            "low_confidence_share": {"value": reference, "threshold": allowed,
                                     "reference": limits.as_float(
                                         limits.exact(reference) - limits.exact(allowed))},
            "accuracy": {"value": value, "threshold": allowed, "reference": reference,
                         "labeled": total}}
        kinds = {a["measure"] for a in alerts.alerts(measures)}
        assert ("accuracy" in kinds) is alerts_expected
        assert "low_confidence_share" not in kinds  # exactly the allowed rise
        assert ("prediction_drift" in kinds) is (value > threshold)
        pushed = _pushed_alerts(_monitor_result(measures))
        assert ("accuracy_ratio" in pushed) is ("accuracy" in kinds)
        assert ("low_confidence_ratio" in pushed) is ("low_confidence_share" in kinds)
        assert ("prediction_drift" in pushed) is ("prediction_drift" in kinds)


def test_a_measure_not_measured_raises_no_alert_and_is_not_pushed():
    measures = {"prediction_drift": {"value": None, "threshold": 0.1,
                                     "not_measured": "TFDV could not compare"},
                "low_confidence_share": {"value": None, "threshold": 0.1, "reference": 0.2,
                                         "not_measured": "no confidences"}}
    assert alerts.alerts(measures) == []
    assert _pushed_alerts(_monitor_result(measures)) == set()


@pytest.mark.integration  # TFMA's own validator
@settings(max_examples=100, deadline=None)
@given(EDGES)
def test_tfma_never_refuses_what_the_exact_gates_pass(edge):
    """TFMA's float bounds (pipeline/dag.py) are on the safe side of the typed ones: at the
    edge it passes, and the Evaluator's exact gate decides."""
    from tensorflow_model_analysis.evaluators import metrics_validator
    from settings.config import PipelineConfig
    from pipeline.dag import eval_config
    threshold, multiple = edge
    right, total = _edge(threshold, multiple)
    config = eval_config(PipelineConfig.from_values(accuracy_threshold=threshold,
                                                    baseline_tolerance=0.02))
    config.model_specs[0].name = "candidate"
    config.model_specs.add(name="baseline", is_baseline=True)
    from tensorflow_model_analysis.metrics import metric_specs
    key = next(k for k in metric_specs.metric_thresholds_from_metrics_specs(
        config.metrics_specs, eval_config=config) if not k.is_diff)
    baseline_right = min(total, right + int(total * 0.02))  # a change of exactly -0.02 or less
    candidate = np.float32(right) / np.float32(total)
    baseline = np.float32(baseline_right) / np.float32(total)
    metrics = {key: candidate, key.make_baseline_key("baseline"): baseline,
               key.make_diff_key(): candidate - baseline}
    result = metrics_validator.validate_metrics(((), metrics), config)
    assert result.validation_ok, result


@settings(max_examples=50, deadline=None)
@given(st.sampled_from((*THRESHOLDS, 0.1, 0.2)))
def test_span_drift_equal_to_its_threshold_is_no_drift(threshold):
    """The drift validator's verdict on TFDV's measures: a measure equal to its threshold
    is no drift, the next float above it is (whatever TFDV's own flag said)."""
    from tensorflow_metadata.proto.v0 import anomalies_pb2, statistics_pb2
    from components.drift_validator import comparators
    from components.drift_validator.judge import verdict
    from components.drift_validator.settings import DriftSettings
    empty = statistics_pb2.DatasetFeatureStatistics()
    entry = {"span": 2, "previous_span": 1}
    for value, drifted in ((threshold, False), (np.nextafter(threshold, 1.0), True)):
        anomalies = anomalies_pb2.Anomalies()
        info = anomalies.drift_skew_info.add()
        info.path.step.append(comparators.PATHS["brightness"][0])
        info.drift_measurements.add(value=float(value), threshold=threshold)
        found = verdict(entry, anomalies, empty, empty,
                        DriftSettings(label=1.0, brightness=threshold, size=1.0, grayscale=1.0))
        assert found["features"]["brightness"]["drifted"] is drifted
        assert (found["verdict"] == "drift") is drifted
