"""The accuracy gap between the whole eval split and its worst slice (TFMA's figures)."""
from typing import Dict, Optional

# A slice with fewer eval examples is reported but not judged: its accuracy is noise.
MIN_SLICE_EXAMPLES = 20

# {feature key: {value: {"accuracy": float, "examples": int}}}
ByFeature = Dict[str, Dict[str, dict]]


def slice_gap(overall: Optional[float], by_feature: ByFeature,
              min_examples: int = MIN_SLICE_EXAMPLES) -> dict:
    """audit.json's "slices": the worst slice of at least `min_examples`, and the gap to it."""
    judged = [(figures["accuracy"], feature, value, figures["examples"])
              for feature, values in sorted(by_feature.items())
              for value, figures in sorted(values.items())
              if figures["examples"] >= min_examples and figures["accuracy"] is not None]
    worst = min(judged, key=lambda slice_: slice_[0]) if judged else None
    return {"overall": overall, "min_examples": min_examples,
            "worst": None if worst is None else {
                "feature": worst[1], "value": worst[2], "accuracy": worst[0],
                "examples": worst[3]},
            "gap": None if worst is None or overall is None else overall - worst[0],
            "by_feature": by_feature}
