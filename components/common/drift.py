"""Drift between two spans' data: which ingest-report statistics moved, and how far.

Pure Python on two ingest reports (ingest.ingest_report), so continuous
training can decide before it trains, without TensorFlow or another pass over
the images. The measures are TFDV's (tensorflow_data_validation/anomalies/
metrics.cc): `LInftyDistance` for categorical features (its drift_comparator's
infinity_norm) and `JensenShannonDivergence` for numeric ones, whose
Kullback-Leibler terms use std::log2, so here too the divergence is base 2 and
lies in 0..1.
"""
import dataclasses
import math
from typing import Callable, Dict, List, Optional, Tuple

from components.common.contract import SPLITS

FEATURES = ("label", "brightness", "size", "grayscale")
# How describe() names each feature's measure.
_MEASURES = {"label": "L-inf", "brightness": "JS", "size": "|log2 ratio|",
             "grayscale": "share difference"}
# A measure's value (None: not measured) and its detail sentence.
Measured = Tuple[Optional[float], str]


@dataclasses.dataclass(frozen=True)
class DriftThresholds:
    """A feature drifts when its measure is over its threshold; defaults: pipeline/config.py."""

    label: float  # L-infinity distance between the class distributions
    brightness: float  # Jensen-Shannon divergence (base 2) of the brightness histograms
    size: float  # |log2(newest median pixel count / previous median pixel count)|
    grayscale: float  # absolute difference of the grayscale shares

    def __post_init__(self):
        for name, value in dataclasses.asdict(self).items():
            if not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"drift threshold {name} must be a number >= 0, got {value!r}")


def l_infinity(p: Dict[str, float], q: Dict[str, float]) -> Tuple[str, float]:
    """(key, distance): the largest |p - q| over both keys (absent: 0), and where it is."""
    return max(((key, abs(p.get(key, 0.0) - q.get(key, 0.0))) for key in sorted({*p, *q})),
               key=lambda pair: pair[1], default=("", 0.0))


def _normalized(counts: List[float]) -> List[float]:
    total = sum(counts)
    return [count / total for count in counts]


def jensen_shannon(p: List[float], q: List[float]) -> float:
    """Base-2 Jensen-Shannon divergence (0..1) of two histograms with the same buckets.

    Each is normalized first, so both need a count. As in TFDV, a bucket
    empty on one side adds nothing to that side's Kullback-Leibler term.
    """
    p, q = _normalized(p), _normalized(q)
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]
    kl_p = sum(a * math.log2(a / b) for a, b in zip(p, m) if a > 0)
    kl_q = sum(a * math.log2(a / b) for a, b in zip(q, m) if a > 0)
    return (kl_p + kl_q) / 2


def _without_pixels(feature: str, previous: dict, newest: dict) -> Optional[str]:
    """Why `feature` cannot be compared when a report predates pixel statistics, else None."""
    missing = [which for which, report in (("previous", previous), ("newest", newest))
               if report.get("pixels") is None]
    if not missing:
        return None
    return (f"{feature} not measured: the {' and the '.join(missing)} span's ingest report "
            "has no pixel statistics (written before they were)")


def class_shares(report: dict) -> Dict[str, float]:
    """Each class name's share of the examples, over every split."""
    counts = {}
    for split in SPLITS:
        for name, count in report["per_class"].get(split, {}).items():
            counts[name] = counts.get(name, 0) + count
    total = sum(counts.values())
    return {name: count / total for name, count in counts.items()} if total else {}


def _label(previous: dict, newest: dict) -> Measured:
    before, after = class_shares(previous), class_shares(newest)
    if not before or not after:
        return None, "class shares not measured: a span has no examples"
    name, value = l_infinity(before, after)
    return value, f"class {name!r} {before.get(name, 0.0):.2f} -> {after.get(name, 0.0):.2f}"


def _brightness(previous: dict, newest: dict) -> Measured:
    missing = _without_pixels("brightness", previous, newest)
    if missing:
        return None, missing
    before, after = previous["pixels"], newest["pixels"]
    if not sum(before["brightness"]) or not sum(after["brightness"]):
        return None, "brightness not measured: a span has no examples"
    value = jensen_shannon(before["brightness"], after["brightness"])
    return value, f"mean brightness {before['mean']:.0f} -> {after['mean']:.0f} of 255"


def _median_side(report: dict, side: str) -> Optional[int]:
    return report.get("shapes", {}).get(side, {}).get("median")


def _size(previous: dict, newest: dict) -> Measured:
    sides = [(_median_side(r, "height"), _median_side(r, "width")) for r in (previous, newest)]
    if None in sides[0] + sides[1]:
        return None, "median size not measured: a span has no shapes"
    (h0, w0), (h1, w1) = sides
    value = abs(math.log2((h1 * w1) / (h0 * w0)))
    return value, f"median size {h0}x{w0} -> {h1}x{w1} pixels"


def _grayscale_share(report: dict) -> Optional[float]:
    total = sum(report["pixels"]["brightness"])
    return report["pixels"]["grayscale"] / total if total else None


def _grayscale(previous: dict, newest: dict) -> Measured:
    missing = _without_pixels("grayscale", previous, newest)
    if missing:
        return None, missing
    before, after = _grayscale_share(previous), _grayscale_share(newest)
    if before is None or after is None:
        return None, "grayscale share not measured: a span has no examples"
    return abs(after - before), f"grayscale share {before:.2f} -> {after:.2f}"


_COMPARISONS: Dict[str, Callable[[dict, dict], Measured]] = {
    "label": _label, "brightness": _brightness, "size": _size, "grayscale": _grayscale}


def compare_spans(previous: dict, newest: dict, thresholds: DriftThresholds,
                  previous_span: int, newest_span: int) -> dict:
    """Compares the newest span's ingest report with the previous span's.

    Args:
      previous, newest: ingest reports (ingest.ingest_report), all splits counted.
      thresholds: a feature drifts when its value is over its threshold.
      previous_span, newest_span: the spans' numbers, for the result and messages.

    Returns:
      {"previous_span", "span", "features": {name: {"value", "threshold",
      "drifted", "detail"}}, "drifted": [names], "verdict": "drift" or "ok"},
      features in FEATURES order. A statistic missing from a report (one
      written before it was measured) gives value None, not drifted.
    """
    limits = dataclasses.asdict(thresholds)
    features = {}
    for name in FEATURES:
        value, detail = _COMPARISONS[name](previous, newest)
        features[name] = {"value": value, "threshold": limits[name],
                          "drifted": value is not None and value > limits[name],
                          "detail": detail}
    drifted = [name for name in FEATURES if features[name]["drifted"]]
    return {"previous_span": previous_span, "span": newest_span, "features": features,
            "drifted": drifted, "verdict": "drift" if drifted else "ok"}


def describe(drift: dict) -> str:
    """One line: "drift in brightness (JS 0.92 > 0.10), ... (span 1 -> 2)", or "no drift ..."."""
    features = drift["features"]
    spans = f"(span {drift['previous_span']} -> {drift['span']})"
    unmeasured = [name for name in FEATURES if features[name]["value"] is None]
    note = f"; not measured: {', '.join(unmeasured)}" if unmeasured else ""
    if not drift["drifted"]:
        return f"no drift {spans}{note}"
    moved = ", ".join(f"{name} ({_MEASURES[name]} {features[name]['value']:.2f} > "
                      f"{features[name]['threshold']:.2f}: {features[name]['detail']})"
                      for name in drift["drifted"])
    return f"drift in {moved} {spans}{note}"


ALLOW_DRIFT_HINT = "(--allow-drift pushes anyway)"


def drift_gate(report: dict, allow_drift: bool) -> Tuple[Optional[str], Optional[str]]:
    """(why the push is blocked, or None; the drift it pushes despite, or None).

    Only a "drift" verdict counts: "ok" and "not compared" (a first span) push.
    """
    verdict = report.get("drift") or {}
    if verdict.get("verdict") != "drift":
        return None, None
    line = " ".join(describe(verdict).split())  # one line, whatever the details hold
    if allow_drift:
        return None, f"pushed despite {line} (--allow-drift)"
    return f"not pushed: {line} {ALLOW_DRIFT_HINT}", None
