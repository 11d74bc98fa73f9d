"""summary.json's counts and intervals, the paired change from the baseline, and the verdict
that says when the threshold is within chance of the figure judged."""
import copy

import pytest

from core.intervals import paired_difference, wilson
from report import uncertainty, verdicts
from report.console import format_summary
from report.page import index_html
from tests.report.report_fixtures import AUDIT, CLASSES, FIGURES, full_summary


def test_the_overall_accuracy_carries_its_count_and_wilson_interval():
    fields = uncertainty.accuracy_fields(FIGURES)
    assert fields == {"examples": 734, "accuracy_interval": list(wilson(610, 734))}
    assert uncertainty.accuracy_fields({}) == {"examples": None, "accuracy_interval": None}


def test_each_class_carries_its_count_and_a_class_without_images_is_null():
    cells = {"0": {"accuracy": 0.75, "examples": 8}, "2": {"accuracy": 1.0, "examples": 3}}
    found = uncertainty.per_class_intervals(cells, ["a", "b", "c"])
    assert found == {"a": {"examples": 8, "interval": list(wilson(6, 8))}, "b": None,
                     "c": {"examples": 3, "interval": list(wilson(3, 3))}}


def test_the_baseline_difference_is_the_audits_paired_one():
    found = uncertainty.baseline_difference(AUDIT, FIGURES)
    assert found["paired"] is True and found["examples"] == 734
    assert found["value"] == pytest.approx(7 / 734)
    assert found["interval"] == list(paired_difference(590, 20, 13, 111))
    assert (found["candidate_only"], found["baseline_only"]) == (20, 13)


def test_without_the_audits_pairing_the_difference_has_no_interval_and_says_why():
    unpaired = {**AUDIT, "baseline": None}
    found = uncertainty.baseline_difference(unpaired, FIGURES)
    assert found["paired"] is False and found["interval"] is None
    assert found["value"] == pytest.approx(7 / 734)  # from TFMA's counts
    assert "did not score the baseline" in found["reason"]
    refused = {**AUDIT, "baseline": {"examples": None, "reason": "the baseline could not be "
                                     "scored (KeyError: x)"}}
    assert "KeyError" in uncertainty.baseline_difference(refused, FIGURES)["reason"]
    assert uncertainty.baseline_difference(None, {"candidate": (0.9, 10)}) is None
    summary = full_summary(audit=unpaired)
    assert verdicts.baseline_text(summary["eval"]).startswith(
        "candidate − baseline +0.0095 (no interval: the audit did not score the baseline")


def test_the_threshold_is_within_chance_of_the_figure_judged():
    evaluation = full_summary()["eval"]
    inside = uncertainty.threshold_check(evaluation, 0.8)  # leak-free: 0.783-0.840
    assert inside == {"value": 0.8, "figure": "accuracy_without_leaked", "within_chance": True}
    assert uncertainty.threshold_check(evaluation, 0.85)["within_chance"] is False
    clean = {**evaluation, "leaked": 0}  # no leak: the accuracy itself, 0.802-0.856
    assert uncertainty.threshold_check(clean, 0.85) == {
        "value": 0.85, "figure": "accuracy", "within_chance": True}
    assert uncertainty.threshold_check(clean, None) is None
    assert uncertainty.threshold_check({"accuracy": 0.9}, 0.9)["within_chance"] is None
    assert verdicts.chance_text(inside) == ("the accuracy without leaked eval images is within "
                                            "chance of the threshold 0.8: it lies inside its "
                                            "95% CI")
    assert verdicts.chance_text({**inside, "within_chance": False}) == ""


def test_a_verdict_within_chance_says_so_on_the_console_and_the_page():
    summary = full_summary(threshold=0.8)
    note = verdicts.chance_text(summary["eval"]["threshold"])
    summary["eval"]["reason"] += "; " + note
    lines = format_summary(summary).splitlines()
    assert lines[1].startswith("accuracy  0.8128 without 12 leaked eval images (n=722, 95% CI "
                               "0.783-0.840) - blessed (")
    assert lines[1].endswith("; the accuracy without leaked eval images is within chance of "
                             "the threshold 0.8: it lies inside its 95% CI)")
    page = index_html(summary)
    assert "Blessed, within chance of the threshold, pushed as version 3" in page
    assert "within chance of the threshold" not in index_html(full_summary())


def test_the_page_lists_each_class_with_its_interval_least_accurate_first():
    page = index_html(full_summary())
    table = page[page.index('id="per-class"'):]
    assert table.index("roses") < table.index("tulips") < table.index("daisy")
    assert "<td>roses</td><td><span class=\"\">0.740</span></td><td>128</td>" \
           "<td>0.660–0.810</td>" in table
    older = copy.deepcopy(full_summary())
    del older["eval"]["per_class_interval"]
    assert 'id="per-class"' not in index_html(older)  # an older run: no counts


def test_each_slice_row_carries_its_interval_and_another_slice_can_be_the_one_judged():
    summary = full_summary()
    assert "<td>41</td><td>0.530–0.804</td>" in index_html(summary)
    slices = summary["slices"]
    slices["judged"] = {**slices["worst"], "feature": "image/slice/aspect",
                        "value": "portrait"}
    assert "; aspect=portrait is 0.027 below at the upper bound" in verdicts.slices(
        summary).text
    slices["judged_gap"] = -0.01
    assert verdicts.slices(summary).text.endswith(
        "; no slice is below it beyond chance (each one's 95% CI reaches it)")


def test_an_older_summary_without_counts_reads_as_before():
    evaluation = {"accuracy": 0.5, "blessed": False, "baseline_accuracy": 0.6}
    assert verdicts.accuracy_text(evaluation) == "0.5000"
    assert verdicts.baseline_text(evaluation) == "0.6000"
    assert verdicts.with_leaked_text(evaluation) is None
    assert verdicts.classes_by_accuracy({"per_class": dict(zip(CLASSES, [0.5] * 5))}) == []
