"""The slice gap's intervals and the gap judged at each slice's Wilson upper bound."""
import pytest

from core.intervals import wilson
from components.image_evaluator.audit.slice_gap import slice_gap, with_intervals


def _cell(right, total):
    return {"accuracy": right / total, "examples": total}


def test_every_slice_carries_its_wilson_interval_and_the_input_is_left_alone():
    by_feature = {"image/slice/size": {"small": _cell(15, 30), "large": _cell(66, 70)},
                  "image/group": {"rare": _cell(0, 3), "none": {"accuracy": None,
                                                                "examples": 0}}}
    cells = with_intervals(by_feature)
    assert cells["image/slice/size"]["small"]["interval"] == list(wilson(15, 30))
    assert cells["image/group"]["rare"]["interval"] == list(wilson(0, 3))
    assert cells["image/group"]["none"]["interval"] is None
    assert "interval" not in by_feature["image/slice/size"]["small"]


def test_a_small_slice_must_be_convincingly_worse_to_count():
    # 20 of 25 (0.80) is the least accurate, but its upper bound (0.91) is above the
    # overall 0.90; 850 of 1000 (0.85) is convincingly below it (upper bound 0.87).
    by_feature = {"image/group": {"few": _cell(20, 25), "many": _cell(850, 1000),
                                  "best": _cell(970, 1000)}}
    result = slice_gap(0.90, by_feature)
    assert result["worst"]["value"] == "few" and result["gap"] == pytest.approx(0.10)
    assert result["judged"]["value"] == "many"
    assert result["judged"]["interval"] == list(wilson(850, 1000))
    assert result["judged_gap"] == pytest.approx(0.90 - wilson(850, 1000)[1])
    assert 0 < result["judged_gap"] < 0.05 < result["gap"]
    assert result["confidence"] == 0.95 and result["min_examples"] == 20


def test_no_slice_convincingly_below_gives_a_negative_judged_gap():
    result = slice_gap(0.90, {"image/slice/color": {"grayscale": _cell(21, 24)}})
    assert result["gap"] == pytest.approx(0.025) and result["judged_gap"] < 0


def test_slices_below_the_floor_are_listed_not_judged():
    by_feature = {"image/group": {"rare": _cell(0, 3)}}
    result = slice_gap(0.9, by_feature)
    assert result["worst"] is result["judged"] is None
    assert result["gap"] is result["judged_gap"] is None
    assert result["by_feature"]["image/group"]["rare"]["interval"] == list(wilson(0, 3))
    without_overall = slice_gap(None, {"image/group": {"g": _cell(10, 40)}})
    assert without_overall["judged"]["value"] == "g" and without_overall["judged_gap"] is None
