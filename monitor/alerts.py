"""Which measures alert: a value strictly over its threshold (a value equal to it does not).

Input drift, prediction drift and the confidence drift compare the value with the
threshold itself. The low-confidence share and the accuracy compare their change
from the eval split's own value ("reference") with the allowed rise or drop, as the
Prometheus rules do (monitor/prometheus.py pushes that line). Each
comparison is exact on the figures monitor.json reports (core/limits.py):
0.8 - 0.6 is 0.2 here, where float64 makes it 0.20000000000000007 and would alert. A
measure that could not be computed (value None) raises no alert: it is "not measured".
"""
from fractions import Fraction
from typing import Dict, List, Optional

from core import limits

# monitor.json measure key -> (alert kind, measure name in the alert)
_SINGLE = {"prediction_drift": ("prediction_drift", "prediction_drift"),
           "confidence": ("confidence", "confidence_drift"),
           "low_confidence_share": ("confidence", "low_confidence_share"),
           "accuracy": ("accuracy", "accuracy")}
_CHANGES = ("low_confidence_share", "accuracy")  # alert on a change from the eval split's


def excess(key: str, measure: dict) -> Fraction:
    """How far a measure is past its threshold, exactly: over 0 alerts, 0 or under does not."""
    value = limits.exact(measure["value"])
    if key == "low_confidence_share":
        moved = value - limits.exact(measure["reference"])
    elif key == "accuracy":
        moved = limits.exact(measure["reference"]) - value
    else:
        moved = value
    return moved - limits.exact(measure["threshold"])


def measured(key: str, measure: Optional[dict]) -> bool:
    """Whether a measure has the figures its comparison needs (its value, and the eval
    split's own where it alerts on a change)."""
    needed = ("value", "reference") if key in _CHANGES else ("value",)
    return measure is not None and all(measure.get(name) is not None for name in needed)


def alerting(key: str, measure: dict) -> bool:
    """Whether a measured value is past its threshold (never one that was not measured)."""
    return measured(key, measure) and limits.exceeds(excess(key, measure), 0)


def _alert(kind: str, name: str, key: str, measure: dict) -> Optional[dict]:
    if not alerting(key, measure):
        return None
    found = {"kind": kind, "measure": name, "value": measure["value"],
             "threshold": measure["threshold"]}
    if "reference" in measure and key in _CHANGES:
        found["reference"] = measure["reference"]
    return found


def alerts(measures: Dict[str, object]) -> List[dict]:
    """The alerts of monitor.json's "measures", input drift first."""
    found = [_alert("input_drift", feature, "input_drift", measure)
             for feature, measure in measures.get("input_drift", {}).items()]
    found += [_alert(kind, name, key, measures[key]) for key, (kind, name) in _SINGLE.items()
              if measures.get(key) is not None]
    return [alert for alert in found if alert is not None]
