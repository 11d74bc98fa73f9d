"""Class weights: the Trainer's answer to a train split whose classes are far apart in size.

Light (no TensorFlow): the weights come from the ingest report's counts.
"""
from typing import Dict, List, Optional

from core.contract import TRAIN, ingest_report


def train_counts(examples_uri: str, labels: List[str]) -> Optional[List[int]]:
    """Train images per class, in label order, from the ingest report; None without one
    (examples another ExampleGen wrote)."""
    report = ingest_report(examples_uri)
    if not report:
        return None
    per_class = report.get("per_class", {}).get(TRAIN, {})
    return [int(per_class.get(name, 0)) for name in labels]


def class_weights(counts: Optional[List[int]], ratio: float) -> Optional[Dict[int, float]]:
    """{label: n / (k * n_c)} when the largest class has over `ratio` times the smallest
    (present) class's images; None otherwise, or with `ratio` 0.

    Every label gets a key, as Keras requires; a class absent from the train
    split keeps weight 1.0 (it contributes no loss anyway).
    """
    present = [n for n in counts or [] if n > 0]
    if ratio <= 0 or len(present) < 2 or max(present) <= ratio * min(present):
        return None
    total, k = sum(present), len(present)
    return {label: (total / (k * n) if n else 1.0) for label, n in enumerate(counts)}


def describe(counts: List[int], weights: Optional[Dict[int, float]], ratio: float) -> str:
    """One line for the Trainer's log: the imbalance and what was done about it."""
    present = [n for n in counts if n > 0]
    if not present:
        return "class weights: no train counts"
    spread = f"largest class {max(present)} train images, smallest {min(present)}"
    if weights is None:
        return f"class weights: none ({spread}; weighted beyond {ratio:g}x)"
    return (f"class weights: {spread}, over {ratio:g}x: each class weighted n/(k*n_c), "
            f"{min(weights.values()):.2f} to {max(weights.values()):.2f}")
