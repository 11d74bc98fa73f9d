"""Leakage-free accuracy, the slice gap, and the gates on them."""
import numpy as np
import pytest

from components.image_example_gen.data_health.groups import HealthItem
from components.image_evaluator.settings import AuditSettings
from components.image_evaluator.audit.gates import apply_gates, judged_on
from components.image_evaluator.audit.leak_free import leaked_paths, leakage
from components.image_evaluator.audit.slice_gap import slice_gap

CORRECT = np.array([True, True, True, False])
PATHS = ["a/1.png", "a/2.png", "b/3.png", "b/4.png"]


def test_leaked_eval_images_are_left_out_and_the_gain_is_the_difference():
    report = {"data_health": {"leakage": {"pairs": [
        {"train": "a/9.png", "eval": "a/1.png"}, {"train": "a/8.png", "eval": "a/1.png"},
        {"train": "b/7.png", "eval": "a/2.png"}]}}}
    result = leakage(CORRECT, PATHS, leaked_paths(report))
    assert result == {"leaked": 2, "accuracy_without": 0.5, "gain": 0.25}


def test_every_leaked_image_is_left_out_not_only_the_listed_pairs():
    from components.image_example_gen.data_health import report as health_report
    items = [HealthItem(f"a/{i}.png", f"c{i // 2}", None, ("train", "eval")[i % 2], "a")
             for i in range(4)]
    section, _ = health_report.data_health(items, dedupe=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(health_report, "MAX_LISTED", 1)
        capped, _ = health_report.data_health(items, dedupe=False)
    assert len(capped["leakage"]["pairs"]) == 1
    paths = ["a/1.png", "a/3.png", "a/5.png"]
    for health in (section, capped):
        result = leakage(np.array([True, True, False]), paths,
                         leaked_paths({"data_health": health}))
        assert result == {"leaked": 2, "accuracy_without": 0.0, "gain": 2 / 3}


def test_data_without_a_leakage_check_reports_null():
    assert leaked_paths({"splits": {"eval": 4}}) is None
    assert leakage(CORRECT, PATHS, None) == {"leaked": 0, "accuracy_without": None,
                                             "gain": None}
    assert leakage(CORRECT, PATHS, set(PATHS))["gain"] is None  # nothing left


BY_FEATURE = {"image/slice/size": {"small": {"accuracy": 0.5, "examples": 30},
                                   "large": {"accuracy": 0.95, "examples": 70}},
              "image/group": {"rare": {"accuracy": 0.0, "examples": 3}}}


def test_the_gap_is_to_the_worst_slice_large_enough_to_judge():
    result = slice_gap(0.8, BY_FEATURE, min_examples=20)
    assert {k: v for k, v in result["worst"].items() if k != "interval"} == {
        "feature": "image/slice/size", "value": "small", "accuracy": 0.5, "examples": 30}
    assert result["gap"] == pytest.approx(0.3)
    assert {f: {v: {k: c[k] for k in ("accuracy", "examples")} for v, c in values.items()}
            for f, values in result["by_feature"].items()} == BY_FEATURE
    assert slice_gap(0.8, BY_FEATURE, min_examples=100)["gap"] is None
    assert slice_gap(0.8, {})["worst"] is None  # no slice features (older data)


def _audit(gain, robust, gap):
    """An audit whose slice gate judges `gap` (no overall accuracy: the gap as given)."""
    judged = {"feature": "image/group", "value": "x", "accuracy": 0.5, "examples": 30}
    return {"leakage": {"gain": gain}, "robustness": {"mean": robust},
            "slices": {"gap": gap, "worst": judged, "judged": judged, "judged_gap": gap}}


def test_a_gate_blocks_only_past_its_limit_and_names_its_flag():
    settings = AuditSettings(max_leakage_gain=0.05, min_robust_accuracy=0.6, max_slice_gap=0.2)
    gates, blocked = apply_gates(settings, _audit(0.01, 0.7, 0.1))
    assert blocked == [] and all(g["passed"] for g in gates.values())
    gates, blocked = apply_gates(settings, _audit(0.1, 0.5, 0.3))
    assert [g["passed"] for g in gates.values()] == [True, False, False, False]  # no threshold
    assert ["--max-leakage-gain" in blocked[0], "--min-robust-accuracy" in blocked[1],
            "--max-slice-gap" in blocked[2] and "image/group=x" in blocked[2]] == [True] * 3


def test_unset_gates_and_missing_figures_only_report():
    gates, blocked = apply_gates(AuditSettings(None, None, None), _audit(0.5, 0.1, 0.9))
    assert blocked == [] and gates["max_slice_gap"] == {"limit": None, "value": 0.9,
                                                         "passed": True}
    _, blocked = apply_gates(AuditSettings(0.0, 1.0, 0.0), _audit(None, None, None))
    assert blocked == []


def test_the_accuracy_without_leaked_images_is_held_to_the_threshold():
    audit = {**_audit(0.2, 0.9, 0.0), "examples": 50,
             "leakage": {"leaked": 20, "accuracy_without": 0.4, "gain": 0.2}}
    gates, blocked = apply_gates(AuditSettings(None, None, None), audit, 0.5)
    assert gates["min_leak_free_accuracy"] == {"limit": 0.5, "value": 0.4, "passed": False}
    assert blocked == ["accuracy without the 20 eval image(s) that have a copy in train 0.4000 "
                       "(n=30) below --accuracy-threshold 0.5"]
    assert judged_on(audit, 0.6, 0.5) == {"figure": "accuracy_without_leaked", "value": 0.4,
                                          "leaked": 20, "examples": 30, "threshold": 0.5,
                                          "with_leaked": 0.6}
    clean = {**audit, "leakage": {"leaked": 0, "accuracy_without": 0.6, "gain": 0.0}}
    assert apply_gates(AuditSettings(None, None, None), clean, 0.7)[1] == []  # TFMA's to judge
    assert judged_on(clean, 0.6, 0.7) == {"figure": "accuracy", "value": 0.6, "examples": 50,
                                          "threshold": 0.7}
