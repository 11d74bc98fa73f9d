"""Class counts and imbalance: how far the largest class outnumbers the smallest."""
import statistics
from typing import Dict

# Above this max/min ratio the Trainer should weigh classes (the remedy recorded).
IMBALANCE_RATIO = 3.0
# A class is tiny below TINY_IMAGES images, or below TINY_MEDIAN_SHARE of the
# median class: too few to learn or to measure its accuracy on.
TINY_IMAGES = 10
TINY_MEDIAN_SHARE = 0.1
REMEDY = "class weights"


def imbalance(class_counts: Dict[str, int]) -> dict:
    """{"ratio", "tiny_classes", "remedy"} of per-class image counts.

    The ratio is largest / smallest non-empty class (1.0 without classes);
    an empty class is tiny, and makes the remedy "class weights" too.
    """
    counts = list(class_counts.values())
    present = [c for c in counts if c > 0]
    ratio = max(present) / min(present) if present else 1.0
    median = statistics.median(counts) if counts else 0
    tiny = sorted(name for name, count in class_counts.items()
                  if count < TINY_IMAGES or count < TINY_MEDIAN_SHARE * median)
    weigh = ratio > IMBALANCE_RATIO or len(present) < len(counts)
    return {"ratio": round(ratio, 3), "tiny_classes": tiny,
            "remedy": REMEDY if weigh else "none"}
