"""The audit's blessing gates: a figure past its limit blocks the blessing.

Every gate compares through core/limits.py: a figure that is a count
ratio (k of n images right) is the exact fraction, the limit is the decimal typed,
and a figure equal to a lower bound passes, one equal to an upper bound does not fail.
"""
from typing import Dict, List, Optional, Tuple

from core import limits
from components.image_evaluator.settings import AuditSettings

# The share of eval images right, recovered as a count: TFMA's float32 accuracy times its
# example count, or the audit's float64 mean times its examples (exact for any split size
# a float32 can count, 2**24 images).
Figure = Tuple[float, int]


def counted(share: Optional[float], examples: Optional[int]):
    """The exact ratio a share of `examples` stands for; the share itself without a count;
    None without a share."""
    if share is None:
        return None
    if not examples:
        return limits.exact(share)
    return limits.ratio(round(share * examples), examples)


def _gate(limit: Optional[float], value, below: bool, shown: Optional[float] = None) -> dict:
    """Passed when there is no limit, no figure, or the figure is on the right side of it
    (`below`: a lower bound). `value` may be exact; `shown` is the float audit.json keeps."""
    failed = limit is not None and value is not None and (
        not limits.meets(value, limit) if below else limits.exceeds(value, limit))
    if shown is None and value is not None:
        shown = limits.as_float(value)
    return {"limit": limit, "value": shown, "passed": not failed}


def leak_free(audit: dict) -> Optional[dict]:
    """The accuracy without leaked eval images and how many are left ({"value",
    "examples", "leaked"}), when any were leaked and any are left; else None."""
    leakage = audit["leakage"]
    if not leakage.get("leaked") or leakage.get("accuracy_without") is None:
        return None
    return {"value": leakage["accuracy_without"], "leaked": leakage["leaked"],
            "examples": audit["examples"] - leakage["leaked"]}


def judged_on(audit: dict, overall: Optional[float], threshold: Optional[float]) -> dict:
    """audit.json's "judged_on": the accuracy the blessing's threshold is held to.

    TFMA holds every eval image's accuracy to the threshold; when some eval images have
    a copy in train, that figure is inflated, so the audit holds the accuracy without
    them to it as well (the "min_leak_free_accuracy" gate): that is the figure judged.
    """
    clean = leak_free(audit)
    if clean is None:
        return {"figure": "accuracy", "value": overall, "examples": audit["examples"],
                "threshold": threshold}
    return {"figure": "accuracy_without_leaked", **clean, "threshold": threshold,
            "with_leaked": overall}


def _slice_gap(slices: dict, examples: Optional[int]):
    """The gap the slice gate judges (slice_gap.py's "judged_gap": the overall accuracy
    minus the lowest 95% upper bound of a slice large enough to judge), with the overall
    accuracy as its exact count; None where there is none."""
    judged = slices.get("judged") or {}
    if slices.get("judged_gap") is None:
        return None
    if slices.get("overall") is None or not judged.get("interval"):
        return limits.exact(slices["judged_gap"])
    return counted(slices["overall"], examples) - limits.exact(judged["interval"][1])


def apply_gates(settings: AuditSettings, audit: dict,
                accuracy_threshold: Optional[float] = None) -> Tuple[dict, List[str]]:
    """(audit.json's "gates", the reasons the model must not be blessed).

    `accuracy_threshold`: the blessing's bound on accuracy as typed (the settings'
    own when None), which the accuracy without leaked eval images must reach too.
    """
    threshold = settings.accuracy_threshold if accuracy_threshold is None else accuracy_threshold
    slices, clean = audit["slices"], leak_free(audit) or {}
    gap = _slice_gap(slices, audit.get("examples"))
    gates = {
        "min_leak_free_accuracy": _gate(threshold, counted(clean.get("value"),
                                                           clean.get("examples")),
                                        True, clean.get("value")),
        "max_leakage_gain": _gate(settings.max_leakage_gain, audit["leakage"]["gain"], False),
        "min_robust_accuracy": _gate(settings.min_robust_accuracy,
                                     audit["robustness"]["mean"], True),
        "max_slice_gap": _gate(settings.max_slice_gap, gap, False, slices.get("judged_gap"))}
    worst = slices.get("judged") or {}
    why = {
        "min_leak_free_accuracy": "accuracy without the {leaked} eval image(s) that have a "
                                  "copy in train {value:.4f} (n={examples}) below "
                                  "--accuracy-threshold {limit}",
        "max_leakage_gain": "leakage gain (accuracy minus accuracy without eval images "
                            "copied in train) {value:.4f} above --max-leakage-gain {limit}",
        "min_robust_accuracy": "robust accuracy (mean under common corruptions) {value:.4f} "
                               "below --min-robust-accuracy {limit}",
        "max_slice_gap": "slice gap {value:.4f} (overall accuracy minus the 95% upper "
                         f"bound of {worst.get('feature')}={worst.get('value')}'s accuracy, "
                         f"{worst.get('accuracy') or 0:.4f} on {worst.get('examples')} images) "
                         "above --max-slice-gap {limit}"}
    blocked = [why[name].format(**{**clean, **gate}) for name, gate in gates.items()
               if not gate["passed"]]
    return gates, blocked


def accuracy_gates(settings: AuditSettings, figures: Dict[str, Figure]
                   ) -> Tuple[dict, List[str]]:
    """(the gates on TFMA's overall accuracy, the reasons they block).

    TFMA's validator compares floats (its bounds, pipeline/dag.py, are on the safe side
    so that it never refuses what this passes); these gates decide exactly:
    "min_accuracy", the candidate's k/n against --accuracy-threshold, and
    "min_change_vs_baseline", (k - k_baseline)/n against -(--baseline-tolerance) when a
    baseline was evaluated on the same images. `figures`: accuracy.overall_figures.
    """
    gates, blocked = {}, []
    candidate, baseline = figures.get("candidate"), figures.get("baseline")
    if candidate is None:
        return gates, blocked
    right = counted(*candidate)
    gates["min_accuracy"] = _gate(settings.accuracy_threshold, right, True, candidate[0])
    if not gates["min_accuracy"]["passed"]:
        blocked.append(f"accuracy {candidate[0]:.4f} ({round(candidate[0] * candidate[1])} "
                       f"of {candidate[1]}) below --accuracy-threshold "
                       f"{settings.accuracy_threshold}")
    if baseline is not None and baseline[1] == candidate[1]:
        change = right - counted(*baseline)
        tolerance = settings.baseline_tolerance
        gates["min_change_vs_baseline"] = _gate(
            None if tolerance is None else -limits.exact(tolerance), change, True)
        gates["min_change_vs_baseline"]["limit"] = None if tolerance is None else -tolerance
        if not gates["min_change_vs_baseline"]["passed"]:
            blocked.append(f"accuracy {candidate[0]:.4f} is {float(change):+.4f} from the "
                           f"last blessed model's {baseline[0]:.4f} on the same "
                           f"{candidate[1]} images, below -(--baseline-tolerance {tolerance})")
    return gates, blocked
