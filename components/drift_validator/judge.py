"""Whether the newest span can be compared with the previous one, and the verdict if so.

Plain functions on ImageExampleGen's drift entry (contract.drift_entry), the
statistics' split names, TFX's Anomalies and the two splits' statistics; the
TFX adapter (executor.py) reads and writes them.
"""
import dataclasses
from typing import List, Optional

from tensorflow_metadata.proto.v0 import anomalies_pb2

from components.drift_validator import verdict as drift

from core import limits
from core.contract import NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT
from components.drift_validator import comparators, span_statistics
from components.drift_validator.settings import DriftSettings

NOT_SPANS = "the data is not a span pattern ({SPAN}): there is no earlier span to compare with"


def why_not_compared(entry: Optional[dict], split_names: List[str]) -> Optional[str]:
    """Why there is nothing to compare, or None when both spans' splits were profiled.

    ImageExampleGen writes the two splits only when the previous span's examples are
    at hand, and says why not otherwise (a first span; a span no run ever ingested).
    """
    if entry is None:
        return NOT_SPANS
    if not entry["compared"]:
        return entry["reason"] or "ImageExampleGen did not write both spans' splits"
    missing = [s for s in (NEWEST_SPAN_SPLIT, PREVIOUS_SPAN_SPLIT) if s not in split_names]
    if missing:
        return f"the statistics have no {' and no '.join(missing)} split"
    return None


def not_compared(entry: Optional[dict], reason: str) -> dict:
    """The "not compared" verdict, with the spans the entry names (None without one)."""
    entry = entry or {}
    return drift.not_compared(entry.get("span"), entry.get("previous_span"), reason)


def _unmeasured(feature: str, previous, newest) -> str:
    missing = [key for key in comparators.PATHS[feature]
               if key not in comparators.feature_names(previous)
               or key not in comparators.feature_names(newest)]
    return (f"{feature} not measured: the examples have no statistics for "
            f"{', '.join(missing) or 'it'}")


def verdict(entry: dict, anomalies: anomalies_pb2.Anomalies, previous, newest,
            settings: DriftSettings) -> dict:
    """The verdict from TFX's Anomalies for the newest span's split against the previous
    span's; each detail from the two splits' statistics (span_statistics)."""
    found = comparators.measures(anomalies)
    thresholds = dataclasses.asdict(settings)
    features = {}
    for feature in drift.FEATURES:
        measured = comparators.combined(found, comparators.PATHS[feature])
        if measured is None:
            features[feature] = drift.feature_result(
                None, thresholds[feature], False, _unmeasured(feature, previous, newest))
            continue
        # Judged by the one rule (a measure equal to its threshold is no drift), not by
        # TFDV's own float comparison, so that every gate in the product agrees at the edge.
        features[feature] = drift.feature_result(
            measured[0], thresholds[feature], limits.exceeds(measured[0], thresholds[feature]),
            span_statistics.detail(feature, previous, newest))
    return drift.judged(entry["span"], entry["previous_span"], features)
