"""ImageDistributionValidator's executor on real statistics: TFX's DistributionValidator
judges each drift feature with TFDV's comparators; without both spans' splits it says
"not compared" and why."""
import json
import os

import pytest
from tfx.types import standard_artifacts, standard_component_specs as keys

from core.contract import (DRIFT_VERDICT_PROPERTY, INGEST_REPORT_FILE,
                           read_drift)
from core.parameters import encode
from components.drift_validator.executor import PAIR, Executor
from components.drift_validator.judge import NOT_SPANS
from components.drift_validator.settings import DriftSettings
from tests.components.drift_validator.conftest import examples_artifact, paired

pytestmark = pytest.mark.integration  # StatisticsGen's Beam pipeline and TFDV
THRESHOLDS = DriftSettings(label=0.2, brightness=0.1, size=0.3, grayscale=0.2)
COMPARED = {"span": 3, "previous_span": 2, "compared": True, "reason": None}


def _validate(tmp_path, statistics, entry=COMPARED, settings=THRESHOLDS):
    """The executor on `statistics`, the ingest report's drift entry `entry`; (the
    ExampleAnomalies, its drift.json)."""
    os.makedirs(tmp_path / "examples")
    (tmp_path / "examples" / INGEST_REPORT_FILE).write_text(
        json.dumps({"drift": entry} if entry is not None else {}))
    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(tmp_path / "anomalies")
    os.makedirs(anomalies.uri)
    Executor().Do({keys.STATISTICS_KEY: [statistics],
                   keys.EXAMPLES_KEY: [examples_artifact(str(tmp_path / "examples"), [])]},
                  {keys.ANOMALIES_KEY: [anomalies]}, encode(settings))
    return anomalies, read_drift(anomalies.uri)


def _compare(profiled, tmp_path, newest, **kwargs):
    return _validate(tmp_path, paired(profiled, str(tmp_path / "statistics"), newest),
                     **kwargs)


def test_spans_alike_are_ok_and_tfx_writes_its_anomalies(profiled, tmp_path):
    anomalies, drift = _compare(profiled, tmp_path, "same")
    assert drift["verdict"] == "ok" and drift["drifted"] == []
    assert (drift["span"], drift["previous_span"]) == (3, 2)
    assert anomalies.get_string_custom_property(DRIFT_VERDICT_PROPERTY) == "ok"
    assert anomalies.get_json_value_custom_property("blessed") == {PAIR: 1}  # TFX's own
    assert os.path.isfile(os.path.join(anomalies.uri, f"SplitPair-{PAIR}", "SchemaDiff.pb"))
    for name, feature in drift["features"].items():
        assert feature["value"] is not None and feature["value"] <= feature["threshold"], name
    assert drift["features"]["label"]["value"] == 0.0  # the same class shares
    assert drift["features"]["label"]["detail"] in ("class 'cat' 0.50 -> 0.50",
                                                    "class 'dog' 0.50 -> 0.50")


@pytest.mark.parametrize("newest, feature, detail, value", [
    ("bright", "brightness", "mean brightness 85 -> 195 of 255", 1.0),
    ("label", "label", "class 'dog' 0.50 -> 0.90", 0.4),
    ("gray", "grayscale", "grayscale share 0.00 -> 1.00", 1.0),
    ("size", "size", "median size 16x16 -> 32x32", 1.0),
])
def test_one_changed_feature_drifts_alone(profiled, tmp_path, newest, feature, detail, value):
    anomalies, drift = _compare(profiled, tmp_path, newest)
    assert drift["verdict"] == "drift" and drift["drifted"] == [feature]
    assert drift["features"][feature]["value"] == pytest.approx(value)
    assert drift["features"][feature]["detail"] == detail
    assert drift["features"][feature]["threshold"] == getattr(THRESHOLDS, feature)
    assert anomalies.get_string_custom_property(DRIFT_VERDICT_PROPERTY) == "drift"
    assert anomalies.get_json_value_custom_property("blessed") == {PAIR: 0}


def test_a_threshold_above_the_measure_lets_it_pass(profiled, tmp_path):
    lenient = DriftSettings(label=0.5, brightness=0.1, size=0.3, grayscale=0.2)
    assert _compare(profiled, tmp_path, "label", settings=lenient)[1]["verdict"] == "ok"


def test_a_feature_missing_from_a_span_is_not_measured_and_not_drift(profiled, tmp_path):
    """Examples without image/brightness: TFX is not asked to compare it (it would flag
    the comparison it could not make)."""
    anomalies, drift = _compare(profiled, tmp_path, "unlit")
    brightness = drift["features"]["brightness"]
    assert brightness["value"] is None and not brightness["drifted"]
    assert "image/brightness" in brightness["detail"]
    assert drift["verdict"] == "ok"
    assert anomalies.get_json_value_custom_property("blessed") == {PAIR: 1}


@pytest.mark.parametrize("entry, reason", [
    ({"span": 1, "previous_span": None, "compared": False, "reason": "no earlier span"},
     "no earlier span"),
    (None, NOT_SPANS),
])
def test_without_a_previous_span_nothing_is_compared(profiled, tmp_path, entry, reason):
    """ImageExampleGen wrote no previous_span split; TFX's executor would raise."""
    from tfx.types import artifact_utils
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = profiled
    statistics.split_names = artifact_utils.encode_split_names(["base"])
    anomalies, drift = _validate(tmp_path, statistics, entry)
    assert drift == {"verdict": "not compared", "span": entry and entry["span"],
                     "previous_span": None, "drifted": [], "reason": reason}
    assert anomalies.get_string_custom_property(DRIFT_VERDICT_PROPERTY) == "not compared"
    assert os.listdir(anomalies.uri) == ["drift.json"]


def test_statistics_without_the_splits_are_not_compared(profiled, tmp_path):
    from tfx.types import artifact_utils
    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = profiled
    statistics.split_names = artifact_utils.encode_split_names(["base", "newest_span"])
    _, drift = _validate(tmp_path, statistics)
    assert drift["verdict"] == "not compared"
    assert drift["reason"] == "the statistics have no previous_span split"
