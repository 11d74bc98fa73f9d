"""blessing_reason and format_summary: the words a user reads after a run."""
from tensorflow_model_analysis.proto import validation_result_pb2

from settings.config import PipelineConfig
from report.console import data_warnings, format_summary
from report.evaluation import blessing_reason

CONFIG = PipelineConfig.from_values(accuracy_threshold=0.9, baseline_tolerance=0.01)


def _failure(value, is_diff=False, lower=None, absolute=None):
    failure = validation_result_pb2.ValidationFailure()
    failure.metric_key.name = "sparse_categorical_accuracy"
    failure.metric_key.is_diff = is_diff
    failure.metric_value.double_value.value = value
    if lower is not None:
        failure.metric_threshold.value_threshold.lower_bound.value = lower
    if absolute is not None:
        failure.metric_threshold.change_threshold.absolute.value = absolute
    return failure


def _result(*failures):
    result = validation_result_pb2.ValidationResult(validation_ok=not failures)
    if failures:
        result.metric_validations_per_slice.add().failures.extend(failures)
    return result


def test_blessed_without_baseline_says_so():
    assert blessing_reason(_result(), CONFIG, None) == (
        "accuracy >= threshold 0.9; no blessed baseline yet")


def test_blessed_against_baseline_names_it():
    assert "baseline 0.9500 - 0.01" in blessing_reason(_result(), CONFIG, 0.95)


def test_failures_name_value_and_bound():
    reason = blessing_reason(_result(_failure(0.85, lower=0.9),
                                     _failure(-0.03, is_diff=True, absolute=-0.01)),
                             CONFIG, 0.88)
    assert reason == ("accuracy 0.8500 < threshold 0.9; "
                      "accuracy change vs baseline -0.0300 < -0.01 allowed")


def test_format_summary_shows_the_numbers_that_matter():
    text = format_summary({
        "data": {"path": "/d", "classes": ["a", "b"], "splits": {"train": 2464, "eval": 2},
                 "skipped": 1, "ignored": 3, "empty_classes": ["z"],
                 "skipped_files": [{"path": "a/x.jpg", "reason": "empty file"}]},
        "eval": {"accuracy": 0.5, "baseline_accuracy": None, "blessed": False,
                 "reason": "accuracy 0.5000 < threshold 0.9"},
        "pushed": {"serving": None, "tflite": None},
        "training": {"examples_per_s": 2345.6, "first_epoch_s": 4.25},
        "timings_s": {"A": 1.0, "B": 2.0, "total": 3.5}, "cached": ["A"]})
    assert "2 classes, train 2,464, eval 2; 1 skipped, 3 ignored" in text
    assert "0.5000 - NOT blessed (accuracy 0.5000 < threshold 0.9)" in text
    assert "pushed    nothing" in text
    assert "3.5s total, 1/2 components cached" in text
    assert "training  2,346 examples/s in fit after the first epoch (4.2s)" in text
    assert "warning   folders without images are not classes: z" in text
    assert "warning   1 undecodable image(s) skipped, e.g. a/x.jpg: empty file" in text


def test_no_warnings_when_all_data_was_used():
    assert data_warnings([], []) == []


def _pushed_lines(pushed: dict, prefixes=("pushed", "serving")) -> list:
    text = format_summary({
        "data": {"path": "/d", "classes": ["a"], "splits": {}, "skipped": 0, "ignored": 0,
                 "empty_classes": [], "skipped_files": []},
        "eval": {"accuracy": 0.9, "baseline_accuracy": None, "blessed": True, "reason": "ok"},
        "pushed": pushed, "timings_s": {"total": 1.0}, "cached": []})
    return [line for line in text.splitlines() if line.startswith(prefixes)]


def test_the_serving_check_is_shown_passed_or_as_why_nothing_was_pushed():
    passed = {"ok": True, "reason": "r", "warmup_records": 102, "rest_requests": 32,
              "p50_ms": 1.234, "p99_ms": 5.0}
    assert _pushed_lines({"serving": "/s/1", "serving_check": passed}) == [
        "pushed    /s/1", "serving   check passed: 102 warmup requests replayed, "
        "32 REST requests p50 1.2 ms, p99 5.0 ms"]
    failed = {"ok": False, "reason": "the SavedModel did not load: OSError: x"}
    assert _pushed_lines({"serving": None, "serving_check": failed}) == [
        "pushed    nothing",
        "serving   check FAILED, not pushed: the SavedModel did not load: OSError: x"]


def _tflite_lines(pushed: dict) -> list:
    return _pushed_lines(pushed, prefixes=("tflite",))


def test_the_tflite_line_names_the_version_or_the_converters_refusal_only():
    assert _tflite_lines({"serving": "/s/1", "tflite": "/t/1",
                          "tflite_gate": {"ok": True, "reason": "passed"}}) == ["tflite    /t/1"]
    fell_back = {"ok": True, "quantize": "dynamic", "reason": "dynamic passed the parity gate "
                 "where int8 lost 0.0123 of eval accuracy (0.8137), more than 0.01",
                 "tried": [{"quantize": "int8"}, {"quantize": "dynamic"}]}
    assert _tflite_lines({"serving": "/s/1", "tflite": "/t/1", "tflite_gate": fell_back}) == [
        f"tflite    /t/1 ({fell_back['reason']})"]
    refused = {"ok": False, "reason": "TFLite accuracy 0.5 is more than 0.01 below"}
    assert _tflite_lines({"serving": "/s/1", "tflite": None, "tflite_gate": refused}) == [
        "tflite    not pushed: TFLite accuracy 0.5 is more than 0.01 below"]
    # A push the drift gate blocked: the Pusher's reason says why, not the converter's.
    assert _tflite_lines({"serving": None, "tflite": None, "blocked": "drift",
                          "tflite_gate": {"ok": True, "reason": "passed"}}) == []


def test_a_float32_threshold_reads_as_the_one_the_user_gave():
    # The eval config holds float32 bounds (pipeline/dag.py as_metric_float); the reason
    # names the typed ones, however many digits they have.
    import numpy as np
    for given in (0.7, 1.0, 0.9607843137254902):
        reason = blessing_reason(_result(_failure(0.5, lower=float(np.float32(given)))),
                                 CONFIG.replace(accuracy_threshold=given), None)
        assert reason == f"accuracy 0.5000 < threshold {given}"
