"""The drift verdict: its shape, its sentences and its gate, which TFDV has no notion of.

TFDV measures drift: StatisticsGen profiles the newest span and the one before
it (two splits of ImageExampleGen's examples), and TFX's DistributionValidator
compares them (components/drift_validator/). What stays here is ours, because
TFDV's anomalies speak of features and comparators, not of what users set:

- the four features users give thresholds for (`--drift-*`), `size` being two
  TFDV features, the height and the width;
- the verdict, one JSON shape (`judged`, `not_compared`) that the
  DistributionValidator writes and the Evaluator, the Pusher, the model card
  and the run report read;
- the sentences users read (`describe`), and the gate (`drift_gate`) that
  --allow-drift opens.

Pure Python, no TFX: the Pusher, the model card and the report import it.
"""
from typing import Dict, Optional, Tuple

FEATURES = ("label", "brightness", "size", "grayscale")
# How describe() names each feature's measure: TFDV's comparator for it.
_MEASURES = {"label": "L-inf", "brightness": "JS", "size": "JS", "grayscale": "L-inf"}
OK, DRIFT, NOT_COMPARED = "ok", "drift", "not compared"


def feature_result(value: Optional[float], threshold: float, drifted: bool,
                   detail: str) -> dict:
    """One feature's entry: TFDV's measure (None: not measured), its threshold, whether
    TFDV found it over, and what moved, in words."""
    return {"value": value, "threshold": threshold, "drifted": bool(drifted),
            "detail": detail}


def judged(span: int, previous_span: int, features: Dict[str, dict]) -> dict:
    """The verdict of a comparison: {"verdict": "ok" or "drift", "span", "previous_span",
    "drifted": [names], "features": {name: feature_result}}, in FEATURES order."""
    ordered = {name: features[name] for name in FEATURES}
    drifted = [name for name in FEATURES if ordered[name]["drifted"]]
    return {"verdict": DRIFT if drifted else OK, "span": span, "previous_span": previous_span,
            "drifted": drifted, "features": ordered}


def not_compared(span: Optional[int], previous_span: Optional[int], reason: str) -> dict:
    """The verdict when the spans were not compared (a first span, one never ingested,
    data without spans): never a reason to block."""
    return {"verdict": NOT_COMPARED, "span": span, "previous_span": previous_span,
            "drifted": [], "reason": reason}


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


def drift_gate(drift: Optional[dict], allow_drift: bool) -> Tuple[Optional[str], Optional[str]]:
    """(why the push is blocked, or None; the drift it pushes despite, or None).

    `drift` is a verdict (DRIFT_FILE), or None without one. Only "drift" counts:
    "ok" and "not compared" (a first span) push.
    """
    if not drift or drift.get("verdict") != DRIFT:
        return None, None
    line = " ".join(describe(drift).split())  # one line, whatever the details hold
    if allow_drift:
        return None, f"pushed despite {line} (--allow-drift)"
    return f"not pushed: {line} {ALLOW_DRIFT_HINT}", None
