"""The audit's blessing gates: a figure past its limit blocks the blessing."""
from typing import List, Optional, Tuple

from components.image_evaluator.settings import AuditSettings


def _gate(limit: Optional[float], value: Optional[float], below: bool) -> dict:
    """Passed when there is no limit, no figure, or the figure is on the right side."""
    failed = limit is not None and value is not None and (
        value < limit if below else value > limit)
    return {"limit": limit, "value": value, "passed": not failed}


def apply_gates(settings: AuditSettings, audit: dict) -> Tuple[dict, List[str]]:
    """(audit.json's "gates", the reasons the model must not be blessed)."""
    slices = audit["slices"]
    gates = {
        "max_leakage_gain": _gate(settings.max_leakage_gain, audit["leakage"]["gain"], False),
        "min_robust_accuracy": _gate(settings.min_robust_accuracy,
                                     audit["robustness"]["mean"], True),
        "max_slice_gap": _gate(settings.max_slice_gap, slices["gap"], False)}
    worst = slices["worst"] or {}
    why = {
        "max_leakage_gain": "leakage gain (accuracy minus accuracy without eval images "
                            "copied in train) {value:.3f} above --max-leakage-gain {limit}",
        "min_robust_accuracy": "robust accuracy (mean under common corruptions) {value:.3f} "
                               "below --min-robust-accuracy {limit}",
        "max_slice_gap": "slice gap {value:.3f} (overall accuracy minus that of "
                         f"{worst.get('feature')}={worst.get('value')}) above "
                         "--max-slice-gap {limit}"}
    blocked = [why[name].format(**gate) for name, gate in gates.items() if not gate["passed"]]
    return gates, blocked
