"""summary.json's uncertainty: each accuracy's count and 95% Wilson interval, the paired
change from the baseline, and whether the threshold lies within chance of the figure judged.

Pure functions of what the Evaluator wrote (TFMA's figures, audit.json): summary.py
reads the files, the report and the console show the fields
(core/intervals.py says why each method).
"""
from typing import Dict, List, Optional, Tuple

from core.intervals import contains, wilson_of

Figure = Tuple[float, int]  # (accuracy, examples), as accuracy.overall_figures gives them


def interval_of(accuracy: Optional[float], examples: Optional[int]) -> Optional[list]:
    """[low, high] of an accuracy over `examples` images; None without either."""
    if accuracy is None or not examples:
        return None
    return list(wilson_of(accuracy, examples))


def accuracy_fields(figures: Dict[str, Figure]) -> dict:
    """`eval.examples` and `eval.accuracy_interval` of the candidate's overall accuracy."""
    candidate = figures.get("candidate")
    return {"examples": candidate[1] if candidate else None,
            "accuracy_interval": interval_of(*candidate) if candidate else None}


def per_class_intervals(cells: Dict[str, dict], classes: List[str]
                        ) -> Dict[str, Optional[dict]]:
    """`eval.per_class_interval`: {class name: {"examples", "interval"}}, None for a class
    without eval images. `cells`: TFMA's label slices, {label id as text: {"accuracy",
    "examples"}} (accuracy.slice_accuracies)."""
    found: Dict[str, Optional[dict]] = {}
    for label, name in enumerate(classes):
        cell = cells.get(str(label)) or {}
        interval = interval_of(cell.get("accuracy"), cell.get("examples"))
        found[name] = {"examples": cell["examples"], "interval": interval} if interval else None
    return found


def leak_free_fields(audit: Optional[dict]) -> dict:
    """The count and interval of `eval.accuracy_without_leaked`, as the audit wrote them."""
    leakage = (audit or {}).get("leakage") or {}
    return {"accuracy_without_leaked_examples": leakage.get("examples_without"),
            "accuracy_without_leaked_interval": leakage.get("interval")}


def baseline_difference(audit: Optional[dict], figures: Dict[str, Figure]) -> Optional[dict]:
    """`eval.baseline_difference`: candidate - baseline; None without a baseline.

    Paired (the audit scored both models on the same images): {"value", "interval",
    "examples", "paired": true, "method", "candidate_only", "baseline_only"}. Else TFMA's
    totals only: the value, no interval, and the reason in "reason".
    """
    paired = (audit or {}).get("baseline") or {}
    if paired.get("examples"):
        return {"value": paired["difference"], "interval": paired["interval"],
                "examples": paired["examples"], "paired": True, "method": paired["method"],
                "candidate_only": paired["candidate_only"],
                "baseline_only": paired["baseline_only"]}
    candidate, baseline = figures.get("candidate"), figures.get("baseline")
    if candidate is None or baseline is None:
        return None
    examples = candidate[1]
    value = ((round(candidate[0] * examples) - round(baseline[0] * examples)) / examples
             if examples and examples == baseline[1] else candidate[0] - baseline[0])
    return {"value": value, "interval": None, "examples": examples, "paired": False,
            "method": None, "reason": paired.get("reason")
            or "the audit did not score the baseline on the same images"}


def threshold_check(evaluation: dict, threshold: Optional[float]) -> Optional[dict]:
    """`eval.threshold`: {"value", "figure", "within_chance"} for the figure the blessing
    holds to the threshold (the accuracy without leaked eval images when some leaked, as
    audit/gates.py judged_on says); within chance when the threshold lies inside its 95%
    interval (None: no interval). None without a threshold.

    The blessing stays a point comparison: this only says how far to trust it.
    """
    if threshold is None:
        return None
    leak_free = evaluation.get("leaked") and evaluation.get("accuracy_without_leaked") is not None
    figure = "accuracy_without_leaked" if leak_free else "accuracy"
    interval = evaluation.get(f"{figure}_interval")
    return {"value": threshold, "figure": figure,
            "within_chance": None if interval is None else contains(interval, threshold)}
