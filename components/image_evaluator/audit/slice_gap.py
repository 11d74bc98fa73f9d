"""The accuracy gap between the whole eval split and its worst slice (TFMA's figures).

Every slice's accuracy carries its 95% Wilson interval (core/intervals.py).
The rule: a slice with fewer than MIN_SLICE_EXAMPLES eval images is listed but not
judged; each larger one is judged by the *upper* bound of its interval, so a slice
counts as worse than the whole only as far as it is convincingly worse.
`judged_gap` = overall accuracy - the lowest upper bound among the judged slices
(negative: no slice is convincingly below the overall accuracy). `gap` stays the
point gap to the least accurate judged slice (`worst`), as the report shows it.
"""
from typing import Dict, Optional

from core.intervals import CONFIDENCE, wilson_of

# A slice with fewer eval images is reported but not judged: with an interval 0.3 wide
# at 20 images, and one slice in a few dozen below its bound by chance, a smaller one
# says nothing a gate should act on.
MIN_SLICE_EXAMPLES = 20

# {feature key: {value: {"accuracy": float, "examples": int}}}
ByFeature = Dict[str, Dict[str, dict]]


def with_intervals(by_feature: ByFeature) -> ByFeature:
    """A copy of `by_feature` whose cells also carry "interval": [low, high] (None for a
    cell without an accuracy or examples)."""
    return {feature: {value: {**cell, "interval": _interval(cell)}
                      for value, cell in values.items()}
            for feature, values in by_feature.items()}


def _interval(cell: dict) -> Optional[list]:
    if cell.get("accuracy") is None or not cell.get("examples"):
        return None
    return list(wilson_of(cell["accuracy"], cell["examples"]))


def _slice(feature: str, value: str, cell: dict) -> dict:
    return {"feature": feature, "value": value, "accuracy": cell["accuracy"],
            "examples": cell["examples"], "interval": cell["interval"]}


def slice_gap(overall: Optional[float], by_feature: ByFeature,
              min_examples: int = MIN_SLICE_EXAMPLES) -> dict:
    """audit.json's "slices": every slice with its interval, the worst slice of at least
    `min_examples` and the gap to it, and the gap judged (module docstring).

    "judged" is the slice with the lowest upper bound, "judged_gap" the overall accuracy
    minus that bound; both None where no slice is large enough (or no overall accuracy,
    for the gaps).
    """
    cells = with_intervals(by_feature)
    judged = [_slice(feature, value, cell)
              for feature, values in sorted(cells.items())
              for value, cell in sorted(values.items())
              if cell["examples"] >= min_examples and cell["interval"] is not None]
    worst = min(judged, key=lambda s: s["accuracy"]) if judged else None
    bound = min(judged, key=lambda s: s["interval"][1]) if judged else None
    known = overall is not None
    return {"overall": overall, "min_examples": min_examples, "confidence": CONFIDENCE,
            "worst": worst,
            "gap": overall - worst["accuracy"] if worst and known else None,
            "judged": bound,
            "judged_gap": overall - bound["interval"][1] if bound and known else None,
            "by_feature": cells}
