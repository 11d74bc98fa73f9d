"""compare_spans: drift between two spans' ingest reports, on real ingestions and by hand."""
import copy
import math
import pathlib

import numpy as np
import pytest
from PIL import Image

from components.common.drift import (DriftThresholds, class_shares, compare_spans, describe,
                               jensen_shannon, l_infinity)

MNIST_PNG = pathlib.Path(__file__).resolve().parents[3] / "data" / "mnist_1k" / "png"
THRESHOLDS = DriftThresholds(label=0.05, brightness=0.1, size=0.5, grayscale=0.1)


def _digits(root: pathlib.Path, per_class: int, classes=range(10), invert=False):
    """A class-per-folder tree of the first real MNIST digits of each class."""
    for label in classes:
        (root / str(label)).mkdir(parents=True)
        for png in sorted((MNIST_PNG / str(label)).iterdir())[:per_class]:
            pixels = np.asarray(Image.open(png))
            Image.fromarray(255 - pixels if invert else pixels).save(root / str(label) / png.name)
    return root


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Ingest reports of real ingestions: digits, the same inverted, and digits 0-4 only."""
    from pipeline.config import PipelineConfig
    from pipeline.local.ingest_command import run_ingest
    tmp = tmp_path_factory.mktemp("drift")
    trees = {"digits": _digits(tmp / "digits", 10),
             "inverted": _digits(tmp / "inverted", 10, invert=True),
             "low_digits": _digits(tmp / "low_digits", 10, classes=range(5))}
    return {name: run_ingest(PipelineConfig(data=str(tree), output=str(tmp / f"{name}_out")))
            for name, tree in trees.items()}


@pytest.mark.integration
def test_a_span_does_not_drift_from_itself(reports):
    drift = compare_spans(reports["digits"], reports["digits"], THRESHOLDS, 1, 2)
    assert (drift["verdict"], drift["drifted"]) == ("ok", [])
    assert [f["value"] for f in drift["features"].values()] == [0.0, 0.0, 0.0, 0.0]
    assert describe(drift) == "no drift (span 1 -> 2)"


@pytest.mark.integration
def test_inverted_digits_drift_in_brightness_only(reports):
    drift = compare_spans(reports["digits"], reports["inverted"], THRESHOLDS, 3, 4)
    assert (drift["previous_span"], drift["span"]) == (3, 4)
    assert (drift["verdict"], drift["drifted"]) == ("drift", ["brightness"])
    brightness = drift["features"]["brightness"]
    assert brightness["value"] > 0.9 and brightness["threshold"] == 0.1
    dark, bright = reports["digits"]["pixels"]["mean"], reports["inverted"]["pixels"]["mean"]
    assert dark < 64 and bright > 192
    assert brightness["detail"] == f"mean brightness {dark:.0f} -> {bright:.0f} of 255"
    assert describe(drift).startswith(f"drift in brightness (JS {brightness['value']:.2f} > 0.10")
    assert all(drift["features"][name]["value"] == 0.0 for name in ("label", "size",
                                                                    "grayscale"))


@pytest.mark.integration
def test_class_shares_are_aligned_by_name_and_drift_in_label(reports):
    drift = compare_spans(reports["digits"], reports["low_digits"], THRESHOLDS, 1, 2)
    label = drift["features"]["label"]
    # Digits 0-4 go from a tenth of the span each to a fifth; 5-9 are missing, so 0.
    assert label["value"] == pytest.approx(0.1) and label["drifted"]
    assert label["detail"] == "class '0' 0.10 -> 0.20"
    assert "label" in drift["drifted"] and drift["verdict"] == "drift"


def _report(per_class, brightness=None, grayscale=0, side=28) -> dict:
    """An ingest report with the fields compare_spans reads; no "pixels" if brightness is None."""
    report = {"per_class": {"train": per_class, "eval": {name: 0 for name in per_class}},
              "shapes": {"height": {"median": side}, "width": {"median": side}}}
    if brightness is not None:
        report["pixels"] = {"brightness": brightness, "grayscale": grayscale,
                            "mean": 8.0 + 16 * max(range(16), key=brightness.__getitem__)}
    return report


def _histogram(bucket: int, count: int = 10):
    return [count if i == bucket else 0 for i in range(16)]


def test_a_report_without_pixel_statistics_is_reported_as_not_measured():
    old = _report({"a": 5, "b": 5})
    drift = compare_spans(old, _report({"a": 5, "b": 5}, _histogram(3)), THRESHOLDS, 7, 8)
    for name in ("brightness", "grayscale"):
        feature = drift["features"][name]
        assert (feature["value"], feature["drifted"]) == (None, False)
        assert feature["detail"].startswith(f"{name} not measured: the previous span's")
    assert drift["verdict"] == "ok"
    assert describe(drift) == "no drift (span 7 -> 8); not measured: brightness, grayscale"


def test_size_drift_is_the_log2_ratio_of_median_pixel_counts():
    before, after = _report({"a": 1}, _histogram(3)), _report({"a": 1}, _histogram(3), side=56)
    size = compare_spans(before, after, THRESHOLDS, 1, 2)["features"]["size"]
    assert size["value"] == pytest.approx(2.0) and size["drifted"]
    assert size["detail"] == "median size 28x28 -> 56x56 pixels"
    shrunk = compare_spans(after, before, THRESHOLDS, 1, 2)["features"]["size"]
    assert shrunk["value"] == pytest.approx(2.0)


def test_grayscale_drift_is_the_difference_of_shares():
    before = _report({"a": 10}, _histogram(3), grayscale=10)
    after = _report({"a": 10}, _histogram(3), grayscale=2)
    drift = compare_spans(before, after, THRESHOLDS, 1, 2)
    assert drift["drifted"] == ["grayscale"]
    assert drift["features"]["grayscale"]["value"] == pytest.approx(0.8)
    assert drift["features"]["grayscale"]["detail"] == "grayscale share 1.00 -> 0.20"
    assert describe(drift) == ("drift in grayscale (share difference 0.80 > 0.10: grayscale "
                               "share 1.00 -> 0.20) (span 1 -> 2)")


def test_a_value_equal_to_its_threshold_is_not_drift():
    before, after = _report({"a": 1}, _histogram(3)), _report({"a": 1}, _histogram(3), side=56)
    exact = DriftThresholds(label=0.0, brightness=0.0, size=2.0, grayscale=0.0)
    assert compare_spans(before, after, exact, 1, 2)["verdict"] == "ok"


def test_a_span_without_examples_is_not_measured():
    empty = _report({"a": 0}, [0] * 16)
    empty["shapes"] = {"height": {}, "width": {}}
    drift = compare_spans(_report({"a": 3}, _histogram(3)), empty, THRESHOLDS, 1, 2)
    assert [f["value"] for f in drift["features"].values()] == [None] * 4
    assert drift["verdict"] == "ok"


def test_compare_spans_leaves_its_reports_alone():
    before, after = _report({"a": 3}, _histogram(3)), _report({"b": 3}, _histogram(9))
    copies = copy.deepcopy((before, after))
    compare_spans(before, after, THRESHOLDS, 1, 2)
    assert (before, after) == copies


def test_jensen_shannon_is_base_2():
    assert jensen_shannon(_histogram(0), _histogram(0, count=3)) == 0.0
    assert jensen_shannon(_histogram(0), _histogram(15)) == pytest.approx(1.0)
    half = [1, 1] + [0] * 14
    # P = (1/2, 1/2), Q = (1, 0): M = (3/4, 1/4).
    expected = (0.5 * math.log2(2 / 3) + 0.5 * math.log2(2) + math.log2(4 / 3)) / 2
    assert jensen_shannon(half, _histogram(0)) == pytest.approx(expected)


def test_l_infinity_names_where_the_shares_differ_most():
    assert l_infinity({"a": 0.5, "b": 0.5}, {"a": 0.9, "c": 0.1}) == ("b", 0.5)
    assert class_shares({"per_class": {"train": {"a": 3, "b": 1}, "eval": {"a": 0, "b": 4}}}) \
        == {"a": 0.375, "b": 0.625}


@pytest.mark.parametrize("bad", [-0.1, math.inf, "0.1"])
def test_thresholds_must_be_non_negative_numbers(bad):
    with pytest.raises(ValueError, match="drift threshold size"):
        DriftThresholds(label=0.1, brightness=0.1, size=bad, grayscale=0.1)
