"""Pushes a monitor result to a Prometheus Pushgateway (`imagepipe monitor --pushgateway`).

Each measure goes out beside its threshold, so the alert rules
(kubeflow/alert_rules/alerts.rules.yml) compare two series and hold no number of their own.
"""
import datetime
import http.client
from typing import Dict

from prometheus_client import CollectorRegistry, Gauge, push_to_gateway

from core import limits
from core.errors import PipelineFailed
from monitor import alerts

JOB = "imagepipe_monitor"
PREFIX = "imagepipe_monitor_"
# A scheduled monitor should fail soon when the gateway is down, not hang a cron slot.
PUSH_TIMEOUT_S = 10.0

# Measures pushed with a threshold: monitor.json key -> (metric name, help text).
_MEASURES = {
    "prediction_drift": ("prediction_drift", "L-infinity distance of the predicted class "
                         "shares, window against the eval split"),
    "confidence": ("confidence_drift", "Jensen-Shannon divergence of the top probability, "
                   "window against the eval split"),
    "low_confidence_share": ("low_confidence_ratio", "Share of the window's answers below "
                             "the low-confidence probability"),
    "accuracy": ("accuracy_ratio", "Accuracy on the window's labelled records"),
}
# Window counts: monitor.json "window" key -> (metric name, help text).
_COUNTS = {
    "records": ("window_records", "Records read from the window"),
    "bad": ("window_bad_records", "Records that could not be read or scored"),
}


class PushError(OSError):
    """The Pushgateway did not take the metrics."""


def push_metrics(url: str, result: Dict) -> None:
    """Pushes one completed monitor result (monitor.json's content) to a Pushgateway.

    The group is job "imagepipe_monitor" and the model's name; a push replaces the
    group's earlier metrics, so a version or a measure that is gone stops being reported.

    Args:
        url: the Pushgateway, e.g. http://pushgateway:9091 (no scheme means http).
        result: the monitor's result, as written to monitor.json.

    Raises:
        PipelineFailed: the push failed; the message names --pushgateway and the URL.
    """
    registry = metrics_registry(result)
    try:
        push_to_gateway(url, job=JOB, registry=registry, grouping_key={"model": result["model"]},
                        timeout=PUSH_TIMEOUT_S)
    # urllib's errors are OSErrors; a malformed URL is http.client's or a ValueError.
    except (OSError, ValueError, http.client.HTTPException) as e:
        raise PipelineFailed("monitor", PushError(
            f"--pushgateway {url}: the Pushgateway did not take the metrics ({e}); "
            "check the URL and that the gateway is up")) from e


def metrics_registry(result: Dict) -> CollectorRegistry:
    """The gauges of one monitor result, in a registry of their own."""
    registry = CollectorRegistry()
    labels = {"model": str(result["model"]), "version": str(result["version"])}
    measures = result["measures"]
    drift = _pair(registry, "input_drift", "Input drift of one image feature (TFDV's "
                  "comparator on brightness, size or grayscale share), window against "
                  "the training split", [*labels, "feature"])
    # A measure that could not be computed is not pushed: no series reads as "no drift".
    for feature, measure in sorted(measures.get("input_drift", {}).items()):
        if alerts.measured("input_drift", measure):
            _set_pair(drift, measure, {**labels, "feature": feature})
    for key, (name, text) in _MEASURES.items():
        if alerts.measured(key, measures.get(key)):
            _set_pair(_pair(registry, name, text, list(labels)), _bound(key, measures[key]),
                      labels)
    for key, (name, text) in _COUNTS.items():
        _gauge(registry, name, text, labels, result["window"][key])
    _gauge(registry, "alerts", "Alerts the monitor raised", labels, len(result["alerts"]))
    _gauge(registry, "duration_seconds", "Time the monitor took", labels, result["seconds"])
    _gauge(registry, "last_success_timestamp_seconds", "When the monitor last completed "
           "(healthy or alerting), in Unix time", labels, _unix_time(result["time"]))
    return registry


def _bound(key: str, measure: Dict) -> Dict:
    """The measure with the threshold its value is compared with, as an absolute value.

    Low confidence and accuracy alert on a change from the eval split's own value, so
    their line is that reference moved by the allowed rise or drop, summed exactly
    (core/limits.py) and then made a float: the rule's float comparison of
    two decimals of at most a dozen digits then agrees with monitor/alerts.py's
    exact one (0.97 - 0.05 is 0.92 here, as it is there).
    """
    if key == "low_confidence_share":
        line = limits.exact(measure["reference"]) + limits.exact(measure["threshold"])
    elif key == "accuracy":
        line = limits.exact(measure["reference"]) - limits.exact(measure["threshold"])
    else:
        return measure
    return {**measure, "threshold": limits.as_float(line)}


def _pair(registry: CollectorRegistry, name: str, text: str, labelnames) -> tuple:
    return (Gauge(PREFIX + name, text, labelnames, registry=registry),
            Gauge(f"{PREFIX}{name}_threshold", f"Threshold of {PREFIX}{name}", labelnames,
                  registry=registry))


def _set_pair(pair: tuple, measure: Dict, labels: Dict[str, str]) -> None:
    value, threshold = pair
    value.labels(**labels).set(measure["value"])
    threshold.labels(**labels).set(measure["threshold"])


def _gauge(registry: CollectorRegistry, name: str, text: str, labels: Dict[str, str],
           value: float) -> None:
    Gauge(PREFIX + name, text, list(labels), registry=registry).labels(**labels).set(value)


def _unix_time(iso: str) -> float:
    """monitor.json's "time" (ISO 8601, UTC with a Z) in Unix seconds."""
    return datetime.datetime.fromisoformat(iso).timestamp()
