"""Leakage: eval images with an exact or near copy in the train split."""
import collections
from typing import Dict, List, Optional

from core.contract import EVAL, TRAIN
from components.image_example_gen.data_health.groups import HealthItem, NearLists, near_lists


def leaked_pairs(items: List[HealthItem], near: Optional[NearLists] = None) -> List[dict]:
    """{"eval", "train": [paths], "kind"} per leaked eval image, in path order.

    An exact copy is looked up by content hash; failing that, near copies by
    perceptual hash (`near`: groups.near_lists', when the caller has them).
    Eval images with the same content or perceptual hash share one "train"
    list, so that many identical images (blank ones) cost one list, not one each.
    """
    near = near_lists(items) if near is None else near
    by_content: Dict[str, List[str]] = collections.defaultdict(list)
    for item in sorted(items, key=lambda item: item.relpath):
        if item.split == TRAIN:
            by_content[item.content].append(item.relpath)
    by_phash: Dict[int, List[str]] = {}
    pairs = []
    for i in sorted((i for i, it in enumerate(items) if it.split == EVAL),
                    key=lambda i: items[i].relpath):
        item = items[i]
        exact = by_content.get(item.content)
        copies = None
        if not exact and i in near:
            if item.phash not in by_phash:  # the same for every eval image with this hash
                by_phash[item.phash] = sorted(items[j].relpath for j in near[i]
                                              if items[j].split == TRAIN)
            copies = by_phash[item.phash]
        if exact or copies:
            pairs.append({"eval": item.relpath, "train": exact or copies,
                          "kind": "exact" if exact else "near"})
    return pairs


def leakage_summary(pairs: List[dict], eval_images: int) -> dict:
    """The report's "leakage" (pairs uncapped; report.py caps them).

    "eval_paths" lists every leaked eval image, never capped: the audit's accuracy
    without them must leave all of them out, not only the pairs the report lists.
    """
    return {"count": len(pairs),
            "share": round(len(pairs) / eval_images, 4) if eval_images else 0.0,
            "eval_paths": [pair["eval"] for pair in pairs],
            "pairs": pairs}
