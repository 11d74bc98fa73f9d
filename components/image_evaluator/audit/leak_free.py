"""Accuracy without the eval images that have a copy in train (the ingest report's leakage).

A model that saw an eval image's copy in training scores it from memory;
the gain is how much of the eval accuracy that is worth.
"""
from typing import Iterable, Optional, Set

import numpy as np

from core.contract import DATA_HEALTH_KEY


def leaked_paths(report: dict) -> Optional[Set[str]]:
    """Every eval relpath the ingest report finds leaked; None if it has no leakage check.

    Reports written before "eval_paths" give only their listed pairs (at most
    report.MAX_LISTED of them).
    """
    leakage = (report.get(DATA_HEALTH_KEY) or {}).get("leakage")
    if leakage is None:
        return None
    if "eval_paths" in leakage:
        return set(leakage["eval_paths"])
    return {pair["eval"] for pair in leakage.get("pairs", [])}


def leakage(correct: np.ndarray, paths: Iterable[str], leaked: Optional[Set[str]]) -> dict:
    """audit.json's "leakage": `correct` per example, its relpath, the leaked relpaths.

    Without a leakage check (older data) or with every image leaked, the
    accuracy without them and the gain are None.
    """
    if leaked is None:
        return {"leaked": 0, "accuracy_without": None, "gain": None}
    keep = np.array([path not in leaked for path in paths], bool)
    without = float(np.mean(correct[keep])) if keep.any() else None
    gain = None if without is None else float(np.mean(correct)) - without
    return {"leaked": int((~keep).sum()), "accuracy_without": without, "gain": gain}
