"""The drift verdict's shape, its sentences and its reader; TFDV's measures are tested in
tests/components/drift_validator/."""
import json

import pytest

from core.contract import DRIFT_FILE, drift_entry, read_drift
from components.drift_validator.verdict import (
    FEATURES, describe, drift_gate, feature_result, judged, not_compared)


def _features(**values):
    """Every feature at 0.01 under a threshold of 0.2, but those given as (value, drifted)."""
    found = {name: feature_result(0.01, 0.2, False, f"{name} unchanged") for name in FEATURES}
    for name, (value, drifted) in values.items():
        found[name] = feature_result(value, 0.2, drifted, f"{name} moved")
    return found


def test_a_drifted_feature_makes_a_drift_verdict_in_feature_order():
    verdict = judged(4, 3, dict(reversed(list(_features(size=(0.9, True),
                                                        label=(0.5, True)).items()))))
    assert verdict["verdict"] == "drift" and verdict["drifted"] == ["label", "size"]
    assert list(verdict["features"]) == list(FEATURES)
    assert (verdict["span"], verdict["previous_span"]) == (4, 3)
    assert json.loads(json.dumps(verdict)) == verdict  # drift.json holds it as it is


def test_nothing_over_its_threshold_is_ok():
    verdict = judged(2, 1, _features())
    assert verdict["verdict"] == "ok" and verdict["drifted"] == []
    assert describe(verdict) == "no drift (span 1 -> 2)"


def test_describe_names_the_measure_value_threshold_and_detail_of_each_drifted_feature():
    verdict = judged(3, 2, _features(brightness=(0.92, True), grayscale=(0.4, True)))
    assert describe(verdict) == (
        "drift in brightness (JS 0.92 > 0.20: brightness moved), grayscale (L-inf 0.40 > "
        "0.20: grayscale moved) (span 2 -> 3)")


def test_an_unmeasured_feature_is_named_and_never_drifts():
    features = _features()
    features["brightness"] = feature_result(None, 0.1, False, "brightness not measured")
    verdict = judged(2, 1, features)
    assert verdict["verdict"] == "ok"
    assert describe(verdict) == "no drift (span 1 -> 2); not measured: brightness"


def test_not_compared_says_why_and_never_blocks():
    verdict = not_compared(1, None, "no earlier span")
    assert verdict == {"verdict": "not compared", "span": 1, "previous_span": None,
                       "drifted": [], "reason": "no earlier span"}
    assert drift_gate(verdict, False) == (None, None)


def test_the_gate_blocks_a_drift_in_one_line_unless_allowed():
    verdict = judged(3, 2, _features(size=(0.7, True)))
    verdict["features"]["size"]["detail"] = "median size 28x28\n-> 56x56"
    blocked, overridden = drift_gate(verdict, False)
    assert overridden is None and "\n" not in blocked
    assert blocked == ("not pushed: drift in size (JS 0.70 > 0.20: median size 28x28 -> "
                       "56x56) (span 2 -> 3) (--allow-drift pushes anyway)")
    assert drift_gate(verdict, True) == (
        None, "pushed despite drift in size (JS 0.70 > 0.20: median size 28x28 -> 56x56) "
        "(span 2 -> 3) (--allow-drift)")


def test_the_ingest_reports_drift_entry_is_read_with_every_key():
    assert drift_entry({}) is None and drift_entry({"drift": None}) is None
    assert drift_entry({"drift": {"span": 2, "previous_span": 1, "compared": True}}) == {
        "span": 2, "previous_span": 1, "compared": True, "reason": None}
    assert drift_entry({"drift": {"span": 1, "previous_span": None,
                                  "reason": "no earlier span"}})["compared"] is False


@pytest.mark.parametrize("present", [True, False])
def test_drift_json_is_read_from_an_artifacts_folder(tmp_path, present):
    if present:
        (tmp_path / DRIFT_FILE).write_text(json.dumps(not_compared(1, None, "first")))
    assert read_drift(str(tmp_path)) == (not_compared(1, None, "first") if present else None)
    assert read_drift(None) is None
