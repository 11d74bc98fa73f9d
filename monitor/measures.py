"""The window against the reference, measured by TFDV as the span drift check measures spans.

Every measure is one of TFDV's drift comparators (components/drift_validator/
comparators.py) applied by `tfdv.validate_statistics(window, schema,
previous_statistics=reference)`: the schema, inferred from the window's own
statistics, carries a `drift_comparator` on each compared feature, and TFDV
records the value in the Anomalies' drift_skew_info. The window's statistics
are computed in memory with StatisticsGen's histogram settings (pipeline/dag.py),
so its histograms are built as the training split's were.
"""
from typing import Dict, List, Optional, Sequence

import numpy as np
import pandas as pd
import tensorflow_data_validation as tfdv
from tensorflow_metadata.proto.v0 import schema_pb2, statistics_pb2

from core.contract import BRIGHTNESS_KEY, COLOR_SLICE_KEY, HEIGHT_KEY, WIDTH_KEY
from components.drift_validator import comparators
from components.drift_validator.span_statistics import GRAYSCALE, shares
from monitor.features import ImageFeatures

Statistics = statistics_pb2.DatasetFeatureStatisticsList
INPUT_FEATURES = ("brightness", "size", "grayscale")  # fields of the drift section
# The window's answers, as features of their own statistics.
CLASS_KEY, CONFIDENCE_KEY = "prediction/class", "prediction/confidence"
DIGITS = 6  # of a measure: what is reported is what is compared with its threshold


def statistics(frame: pd.DataFrame) -> Statistics:
    """TFDV's statistics of a DataFrame, with StatisticsGen's options."""
    return tfdv.generate_statistics_from_dataframe(frame, comparators.stats_options(), n_jobs=1)


def compared(window: Statistics, reference: Statistics,
             wanted: Dict[str, schema_pb2.FeatureComparator]) -> Dict[str, float]:
    """{feature: TFDV's drift measure} for the wanted features both sides profile."""
    schema = tfdv.infer_schema(window)
    both = (comparators.feature_names(window.datasets[0])
            & comparators.feature_names(reference.datasets[0]))
    for key, comparator in wanted.items():
        if key in both:
            tfdv.get_feature(schema, key).drift_comparator.CopyFrom(comparator)
    anomalies = tfdv.validate_statistics(window, schema, previous_statistics=reference)
    return {key: round(value, DIGITS)
            for key, (value, _) in comparators.measures(anomalies).items()}


def numeric(stats: Statistics, key: str, field: str) -> Optional[float]:
    """A numeric feature's statistic (mean, median...), None if it is not profiled."""
    try:
        found = tfdv.get_feature_stats(stats.datasets[0], tfdv.FeaturePath([key]))
    except ValueError:  # not profiled
        return None
    return getattr(found.num_stats, field) if found.HasField("num_stats") else None


def _described(feature: str, stats: Statistics) -> str:
    """The statistic a reader compares: mean brightness, median size, grayscale share."""
    if feature == "brightness":
        return f"mean {numeric(stats, BRIGHTNESS_KEY, 'mean'):.0f} of 255"
    if feature == "size":
        height, width = (numeric(stats, key, "median") for key in (HEIGHT_KEY, WIDTH_KEY))
        return f"median {height:.0f}x{width:.0f}"
    return f"grayscale share {shares(stats.datasets[0], COLOR_SLICE_KEY).get(GRAYSCALE, 0):.2f}"


def input_drift(features: Sequence[ImageFeatures], train: Statistics,
                thresholds: Dict[str, float]) -> Dict[str, dict]:
    """{brightness/size/grayscale: value, threshold, window, reference} for each feature
    both the window and the training statistics profile; {} for a window without images."""
    if not features:
        return {}
    window = statistics(pd.DataFrame([f.example_features() for f in features]))
    wanted = {key: comparators.comparator(feature, thresholds[feature])
              for feature in INPUT_FEATURES for key in comparators.PATHS[feature]}
    found = compared(window, train, wanted)
    result = {}
    for feature in INPUT_FEATURES:
        measured = comparators.combined({k: (v, False) for k, v in found.items()},
                                        comparators.PATHS[feature])
        if measured is not None:
            result[feature] = {"value": measured[0], "threshold": thresholds[feature],
                               "window": _described(feature, window),
                               "reference": _described(feature, train)}
    return result


def _answers(predicted: Sequence[int], confidence: Sequence[float], labels: List[str]):
    """(class statistics, confidence statistics) of some answers; NaN confidences left out."""
    known = [c for c in confidence if not np.isnan(c)]
    classes = statistics(pd.DataFrame({CLASS_KEY: [labels[p] for p in predicted]}))
    return classes, (statistics(pd.DataFrame({CONFIDENCE_KEY: known})) if known else None)


def _jsd(threshold: float) -> schema_pb2.FeatureComparator:
    found = schema_pb2.FeatureComparator()
    found.jensen_shannon_divergence.threshold = threshold
    return found


def prediction_drift(window: Statistics, reference: Statistics, threshold: float) -> dict:
    """The L-infinity distance of the predicted class shares, with both sides' shares."""
    value = compared(window, reference, {CLASS_KEY: comparators.comparator("label", threshold)})
    return {**_measured(value.get(CLASS_KEY), "TFDV could not compare the predicted classes"),
            "threshold": threshold,
            "window": _rounded(shares(window.datasets[0], CLASS_KEY)),
            "reference": _rounded(shares(reference.datasets[0], CLASS_KEY))}


def _rounded(found: Dict[str, float]) -> Dict[str, float]:
    return {key: round(value, 4) for key, value in sorted(found.items())}


def low_share(confidence: Sequence[float], below: float) -> Optional[float]:
    """The share of answers whose top probability is under `below` (NaNs left out); None
    when no answer has a confidence."""
    known = np.asarray([c for c in confidence if not np.isnan(c)])
    return round(float(np.mean(known < below)), DIGITS) if known.size else None


def _measured(value: Optional[float], why_not: str) -> dict:
    """{"value"} of a measure; where it could not be computed, {"value": None, "not_measured":
    why}: never 0.0, which would read as "no drift"."""
    return {"value": value} if value is not None else {"value": None, "not_measured": why_not}


def _mean(stats: Optional[Statistics]) -> Optional[float]:
    mean = numeric(stats, CONFIDENCE_KEY, "mean") if stats is not None else None
    return None if mean is None else round(mean, 4)


def confidence_drift(window: Optional[Statistics], reference: Optional[Statistics],
                     threshold: float) -> Optional[dict]:
    """The Jensen-Shannon divergence of the top probability; None without confidences."""
    if window is None or reference is None:
        return None
    value = compared(window, reference, {CONFIDENCE_KEY: _jsd(threshold)})
    return {**_measured(value.get(CONFIDENCE_KEY), "TFDV could not compare the confidences"),
            "threshold": threshold,
            "window_mean": _mean(window), "reference_mean": _mean(reference)}


def prediction_measures(predicted: Sequence[int], confidence: Sequence[float],
                        reference: dict, labels: List[str], settings) -> Dict[str, dict]:
    """prediction_drift, confidence and low_confidence_share of the window's answers
    against the eval split's (reference.json's "eval"); `settings` a MonitorSettings."""
    evaluated = reference["eval"]
    window_classes, window_confidence = _answers(predicted, confidence, labels)
    eval_classes, eval_confidence = _answers(evaluated["predicted"], evaluated["confidence"],
                                             labels)
    found = {"prediction_drift": prediction_drift(window_classes, eval_classes,
                                                  settings.prediction_drift),
             "low_confidence_share": {
                 **_measured(low_share(confidence, settings.low_confidence),
                             "no answer in the window has a confidence"),
                 "threshold": settings.low_confidence_rise,
                 "reference": low_share(evaluated["confidence"], settings.low_confidence)}}
    drift = confidence_drift(window_confidence, eval_confidence, settings.confidence_drift)
    if drift is not None:
        found["confidence"] = drift
    return found
