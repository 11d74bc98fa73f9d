"""Leakage: eval images with an exact or near copy in the train split."""
import collections
from typing import Dict, List, Optional

from components.contract import EVAL, TRAIN
from components.data_health.groups import HealthItem, NearLists, near_lists


def leaked_pairs(items: List[HealthItem], near: Optional[NearLists] = None) -> List[dict]:
    """{"eval", "train": [paths], "kind"} per leaked eval image, in path order.

    An exact copy is looked up by content hash; failing that, near copies by
    perceptual hash (`near`: groups.near_lists', when the caller has them).
    One query an image, so the cost is linear, never eval x train.
    """
    near = _eval_near_train(items) if near is None else near
    by_content: Dict[str, List[str]] = collections.defaultdict(list)
    for item in items:
        if item.split == TRAIN:
            by_content[item.content].append(item.relpath)
    pairs = []
    for i in sorted((i for i, it in enumerate(items) if it.split == EVAL),
                    key=lambda i: items[i].relpath):
        item = items[i]
        exact = by_content.get(item.content)
        copies = None if exact else [items[j].relpath for j in near.get(i, ())
                                     if items[j].split == TRAIN]
        if exact or copies:
            pairs.append({"eval": item.relpath, "train": sorted(exact or copies),
                          "kind": "exact" if exact else "near"})
    return pairs


def _eval_near_train(items: List[HealthItem]) -> NearLists:
    """near_lists of the eval images among the train images only."""
    return {i: [j for j in found if items[j].split == TRAIN]
            for i, found in near_lists(items).items() if items[i].split == EVAL}


def leakage_summary(pairs: List[dict], eval_images: int) -> dict:
    """The report's "leakage" (pairs uncapped; report.py caps them).

    "eval_paths" lists every leaked eval image, never capped: the audit's accuracy
    without them must leave all of them out, not only the pairs the report lists.
    """
    return {"count": len(pairs),
            "share": round(len(pairs) / eval_images, 4) if eval_images else 0.0,
            "eval_paths": [pair["eval"] for pair in pairs],
            "pairs": pairs}
