"""ImageDistributionValidator's wiring, the config it gives TFX, and the Evaluator's input."""
import pytest
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx import types
from tfx.types import standard_artifacts

from core.contract import (BRIGHTNESS_KEY, CLASS_TEXT_KEY, COLOR_SLICE_KEY,
                           HEIGHT_KEY, WIDTH_KEY)
from components.drift_validator.comparators import validator_config
from components.drift_validator.component import ImageDistributionValidator
from components.drift_validator.judge import NOT_SPANS, why_not_compared
from components.drift_validator.settings import DriftSettings

SETTINGS = DriftSettings(label=0.2, brightness=0.1, size=0.3, grayscale=0.25)


def test_the_component_takes_statistics_examples_and_the_thresholds():
    validator = ImageDistributionValidator(
        statistics=types.Channel(type=standard_artifacts.ExampleStatistics),
        examples=types.Channel(type=standard_artifacts.Examples), settings=SETTINGS)
    assert validator.exec_properties == {"label": 0.2, "brightness": 0.1, "size": 0.3,
                                         "grayscale": 0.25}
    assert validator.outputs["anomalies"].type == standard_artifacts.ExampleAnomalies


def test_each_feature_gets_its_tfdv_comparator_and_threshold():
    present = {CLASS_TEXT_KEY, COLOR_SLICE_KEY, BRIGHTNESS_KEY, HEIGHT_KEY, WIDTH_KEY}
    config = {".".join(f.path.step): f.distribution_comparator
              for f in validator_config(SETTINGS, present).default_slice_config.feature}
    assert set(config) == present
    assert config[CLASS_TEXT_KEY].infinity_norm.threshold == 0.2
    assert config[COLOR_SLICE_KEY].infinity_norm.threshold == 0.25
    assert config[BRIGHTNESS_KEY].jensen_shannon_divergence.threshold == pytest.approx(0.1)
    assert not config[BRIGHTNESS_KEY].jensen_shannon_divergence.HasField("source")
    for side in (HEIGHT_KEY, WIDTH_KEY):
        assert config[side].jensen_shannon_divergence.threshold == pytest.approx(0.3)
        assert config[side].jensen_shannon_divergence.source.type == \
            schema_pb2.HistogramSelection.QUANTILES


def test_a_feature_the_statistics_lack_is_not_configured():
    config = validator_config(SETTINGS, {CLASS_TEXT_KEY, HEIGHT_KEY})
    assert [".".join(f.path.step) for f in config.default_slice_config.feature] == [
        CLASS_TEXT_KEY, HEIGHT_KEY]


def test_why_not_compared():
    compared = {"span": 2, "previous_span": 1, "compared": True, "reason": None}
    assert why_not_compared(compared, ["train", "eval", "newest_span", "previous_span"]) is None
    assert why_not_compared(None, ["train", "eval"]) == NOT_SPANS
    assert why_not_compared({**compared, "compared": False, "reason": "no earlier span"},
                            []) == "no earlier span"
    assert why_not_compared(compared, ["newest_span"]) == \
        "the statistics have no previous_span split"


def test_thresholds_are_numbers_at_least_zero():
    for bad in (-0.1, float("inf"), "0.2", None):
        with pytest.raises(ValueError, match="--drift-size must be a finite number >= 0"):
            DriftSettings(label=0.1, brightness=0.1, size=bad, grayscale=0.1)


def test_the_evaluator_takes_the_validators_anomalies_as_its_drift_input():
    from components.image_evaluator.component import ImageEvaluator
    from components.image_evaluator.settings import AuditSettings
    import tensorflow_model_analysis as tfma
    drift = types.Channel(type=standard_artifacts.ExampleAnomalies)
    settings = AuditSettings(max_leakage_gain=None, min_robust_accuracy=None,
                             max_slice_gap=None)
    kwargs = dict(examples=types.Channel(type=standard_artifacts.Examples),
                  model=types.Channel(type=standard_artifacts.Model),
                  eval_config=tfma.EvalConfig(), allow_drift=False, settings=settings)
    assert ImageEvaluator(drift=drift, **kwargs).inputs["drift"] is drift
    assert "drift" not in ImageEvaluator(**kwargs).inputs
