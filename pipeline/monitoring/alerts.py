"""Which measures alert: a value strictly over its threshold (a value equal to it does not).

Input drift, prediction drift and the confidence drift compare the value with the
threshold itself. The low-confidence share and the accuracy compare their change
from the eval split's own value ("reference") with the allowed rise or drop, as the
Prometheus rules do (pipeline/monitoring/prometheus.py pushes that line).
"""
from typing import Dict, List, Optional

from pipeline.monitoring.measures import DIGITS

# monitor.json measure key -> (alert kind, measure name in the alert)
_SINGLE = {"prediction_drift": ("prediction_drift", "prediction_drift"),
           "confidence": ("confidence", "confidence_drift"),
           "low_confidence_share": ("confidence", "low_confidence_share"),
           "accuracy": ("accuracy", "accuracy")}


def excess(key: str, measure: dict) -> float:
    """How far a measure is past its threshold: over 0 alerts, 0 or under does not."""
    if key == "low_confidence_share":
        moved = measure["value"] - measure["reference"]
    elif key == "accuracy":
        moved = measure["reference"] - measure["value"]
    else:
        moved = measure["value"]
    # rounded as the values are: 0.3 - 0.2 is 0.1 here, not 0.09999999999999998
    return round(round(moved, DIGITS) - measure["threshold"], DIGITS)


def _alert(kind: str, name: str, key: str, measure: dict) -> Optional[dict]:
    if excess(key, measure) <= 0:
        return None
    found = {"kind": kind, "measure": name, "value": measure["value"],
             "threshold": measure["threshold"]}
    if "reference" in measure and key in ("low_confidence_share", "accuracy"):
        found["reference"] = measure["reference"]
    return found


def alerts(measures: Dict[str, object]) -> List[dict]:
    """The alerts of monitor.json's "measures", input drift first."""
    found = [_alert("input_drift", feature, "input_drift", measure)
             for feature, measure in measures.get("input_drift", {}).items()]
    found += [_alert(kind, name, key, measures[key]) for key, (kind, name) in _SINGLE.items()
              if measures.get(key) is not None]
    return [alert for alert in found if alert is not None]
