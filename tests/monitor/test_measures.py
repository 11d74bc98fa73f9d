"""Real TFDV measures on real statistics: the window against the training split and eval."""
import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from monitor import measures
from monitor.features import measure_image
from settings.command_sections import MonitorSettings

THRESHOLDS = {"brightness": 0.1, "size": 0.3, "grayscale": 0.2}


def _images(count, low, high, size=8, mode="RGB", seed=0):
    """The features of encoded PNGs, each a level drawn from low..high plus noise."""
    rng, found = np.random.default_rng(seed), []
    for _ in range(count):
        level = rng.integers(low, high)
        pixels = (level + rng.integers(0, 16, (size, size, 3))).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).convert(mode).save(buffer, format="PNG")
        found.append(measure_image(buffer.getvalue(), 10**8))
    return found


@pytest.fixture(scope="module")
def train():
    """The training split's statistics: 200 dark colour 8x8 images."""
    frame = pd.DataFrame([f.example_features() for f in _images(200, 0, 100)])
    return measures.statistics(frame)


def test_the_same_distribution_stays_under_every_threshold(train):
    found = measures.input_drift(_images(200, 0, 100, seed=1), train, THRESHOLDS)
    assert set(found) == {"brightness", "size", "grayscale"}
    assert all(m["value"] <= m["threshold"] for m in found.values()), found
    assert found["brightness"]["window"].startswith("mean 5")


def test_bright_images_against_dark_training_drift_in_brightness_only(train):
    found = measures.input_drift(_images(60, 150, 240), train, THRESHOLDS)
    assert found["brightness"]["value"] > 0.9
    assert found["size"]["value"] == found["grayscale"]["value"] == 0


def test_larger_or_grayscale_images_drift_in_size_or_grayscale(train):
    larger = measures.input_drift(_images(30, 0, 100, size=16), train, THRESHOLDS)
    assert larger["size"]["value"] > 0.3 and larger["size"]["window"] == "median 16x16"
    gray = measures.input_drift(_images(30, 0, 100, mode="L"), train, THRESHOLDS)
    assert gray["grayscale"]["value"] == 1.0
    assert gray["grayscale"]["window"] == "grayscale share 1.00"


def test_a_window_without_images_measures_no_input_drift(train):
    assert measures.input_drift([], train, THRESHOLDS) == {}


def _reference(predicted, confidence):
    return {"eval": {"predicted": predicted, "confidence": confidence}}


def test_prediction_measures_compare_class_shares_and_confidence_with_eval():
    reference = _reference([0, 1] * 50, [0.95, 0.9] * 50)
    same = measures.prediction_measures([0, 1] * 20, [0.95, 0.9] * 20, reference, ["a", "b"],
                                        MonitorSettings())
    assert same["prediction_drift"]["value"] == 0
    assert same["prediction_drift"]["window"] == {"a": 0.5, "b": 0.5}
    assert same["confidence"]["value"] < 0.01
    assert same["low_confidence_share"] == {"value": 0, "threshold": 0.1, "reference": 0}
    moved = measures.prediction_measures([1] * 30 + [0] * 10, [0.4] * 30 + [0.9] * 10,
                                         reference, ["a", "b"], MonitorSettings())
    assert moved["prediction_drift"]["value"] == pytest.approx(0.25)
    assert moved["confidence"]["value"] > 0.5
    assert moved["low_confidence_share"]["value"] == 0.75


def test_answers_without_a_confidence_leave_the_confidence_unmeasured():
    found = measures.prediction_measures([0, 1], [float("nan")] * 2,
                                         _reference([0, 1], [0.9, 0.8]), ["a", "b"],
                                         MonitorSettings())
    # "not measured", with the reason: a 0.0 would read as "no answer was unsure"
    share = found["low_confidence_share"]
    assert "confidence" not in found and share["value"] is None
    assert "confidence" in share["not_measured"]
