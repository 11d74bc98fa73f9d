"""Leakage: eval images with an exact or near copy in the train split."""
import collections
from typing import Dict, List

from components.contract import EVAL, TRAIN
from components.data_health.groups import HealthItem
from components.data_health.near_index import NearIndex


def leaked_pairs(items: List[HealthItem]) -> List[dict]:
    """{"eval", "train": [paths], "kind"} per leaked eval image, in path order.

    An exact copy is looked up by content hash; failing that, near copies by
    perceptual hash (near_index). Each eval image is one query, so the cost
    is linear in the eval split, never eval x train.
    """
    train = [i for i, item in enumerate(items) if item.split == TRAIN]
    hashed = [i for i in train if items[i].phash is not None]
    by_content: Dict[str, List[str]] = collections.defaultdict(list)
    for i in train:
        by_content[items[i].content].append(items[i].relpath)
    index = NearIndex((i, items[i].phash) for i in hashed)
    pairs = []
    for item in sorted((it for it in items if it.split == EVAL), key=lambda it: it.relpath):
        exact = by_content.get(item.content)
        near = None if exact or item.phash is None else \
            [items[i].relpath for i in index.near(item.phash)]
        if exact or near:
            pairs.append({"eval": item.relpath, "train": sorted(exact or near),
                          "kind": "exact" if exact else "near"})
    return pairs


def leakage_summary(pairs: List[dict], eval_images: int) -> dict:
    """The report's "leakage" (pairs uncapped; report.py caps them)."""
    return {"count": len(pairs),
            "share": round(len(pairs) / eval_images, 4) if eval_images else 0.0,
            "pairs": pairs}
