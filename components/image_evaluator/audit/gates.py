"""The audit's blessing gates: a figure past its limit blocks the blessing."""
from typing import List, Optional, Tuple

from components.image_evaluator.settings import AuditSettings


def _gate(limit: Optional[float], value: Optional[float], below: bool) -> dict:
    """Passed when there is no limit, no figure, or the figure is on the right side."""
    failed = limit is not None and value is not None and (
        value < limit if below else value > limit)
    return {"limit": limit, "value": value, "passed": not failed}


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


def apply_gates(settings: AuditSettings, audit: dict,
                accuracy_threshold: Optional[float] = None) -> Tuple[dict, List[str]]:
    """(audit.json's "gates", the reasons the model must not be blessed).

    `accuracy_threshold`: TFMA's bound on accuracy (the eval config's), which the
    accuracy without leaked eval images must reach too.
    """
    slices, clean = audit["slices"], leak_free(audit) or {}
    gates = {
        "min_leak_free_accuracy": _gate(accuracy_threshold, clean.get("value"), True),
        "max_leakage_gain": _gate(settings.max_leakage_gain, audit["leakage"]["gain"], False),
        "min_robust_accuracy": _gate(settings.min_robust_accuracy,
                                     audit["robustness"]["mean"], True),
        "max_slice_gap": _gate(settings.max_slice_gap, slices["gap"], False)}
    worst = slices["worst"] or {}
    why = {
        "min_leak_free_accuracy": "accuracy without the {leaked} eval image(s) that have a "
                                  "copy in train {value:.3f} (n={examples}) below "
                                  "--accuracy-threshold {limit}",
        "max_leakage_gain": "leakage gain (accuracy minus accuracy without eval images "
                            "copied in train) {value:.3f} above --max-leakage-gain {limit}",
        "min_robust_accuracy": "robust accuracy (mean under common corruptions) {value:.3f} "
                               "below --min-robust-accuracy {limit}",
        "max_slice_gap": "slice gap {value:.3f} (overall accuracy minus that of "
                         f"{worst.get('feature')}={worst.get('value')}) above "
                         "--max-slice-gap {limit}"}
    blocked = [why[name].format(**{**clean, **gate}) for name, gate in gates.items()
               if not gate["passed"]]
    return gates, blocked
