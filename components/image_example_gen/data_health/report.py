"""The ingest report's "data_health" section, and which examples --dedupe drops."""
import collections
import contextlib
import gc
from typing import Dict, List, Optional, Set, Tuple

from core.contract import EVAL
from components.image_example_gen.data_health.groups import (Group, HealthItem, NearLists,
                                                             duplicate_groups, is_conflict,
                                                             near_lists)
from components.image_example_gen.data_health.imbalance import imbalance
from components.image_example_gen.data_health.leakage import leaked_pairs, leakage_summary

# Entries kept in each list of the section, so that the report stays small;
# the counts always cover everything. leakage's eval_paths is the exception:
# the audit must leave out every leaked image (leakage.leakage_summary).
MAX_LISTED = 500
# Train copies named in each listed leakage pair (a blank eval image can have
# thousands); "copies" counts them all.
MAX_COPIES_LISTED = 10


def _group_object(group: Group, items: List[HealthItem]) -> dict:
    return {"kind": group.kind, "paths": [items[i].relpath for i in group.members],
            "labels": [items[i].label for i in group.members]}


def dropped_paths(groups: List[Group], conflicts: List[Group], pairs: List[dict],
                  items: List[HealthItem]) -> Set[str]:
    """What --dedupe drops: every copy after a group's first path, every member of a
    conflicting group, and every eval image whose train copy survives (no leakage)."""
    dropped, conflicting = set(), {id(group) for group in conflicts}
    for group in groups:
        members = group.members if id(group) in conflicting else group.members[1:]
        dropped.update(items[i].relpath for i in members)
    survives: Dict[int, bool] = {}  # by train list: eval images with one hash share theirs
    for pair in pairs:
        train = pair["train"]
        if id(train) not in survives:
            survives[id(train)] = not set(train) <= dropped
        if survives[id(train)]:
            dropped.add(pair["eval"])
    return dropped


def listed_pairs(pairs: List[dict]) -> Tuple[List[dict], bool]:
    """The leakage pairs the report lists, each naming at most MAX_COPIES_LISTED train
    copies and counting them all ("copies"); whether anything was cut."""
    capped, cut = _cap(pairs)
    listed = [{**pair, "train": pair["train"][:MAX_COPIES_LISTED], "copies": len(pair["train"])}
              for pair in capped]
    return listed, cut or any(pair["copies"] > MAX_COPIES_LISTED for pair in listed)


@contextlib.contextmanager
def without_gc():
    """The cyclic garbage collector paused: the checks allocate many small objects, which
    set off full collections over everything the process holds (TensorFlow, Beam), costing
    more than the checks themselves (docs/data_health.md#cost). Nothing they build is
    cyclic, so nothing waits for the collector."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _cap(values: list) -> Tuple[list, bool]:
    return values[:MAX_LISTED], len(values) > MAX_LISTED


def data_health(items: List[HealthItem], dedupe: bool, classes: Optional[List[str]] = None,
                near: Optional[NearLists] = None) -> Tuple[dict, Set[str]]:
    """(the "data_health" section, the paths to drop: empty without `dedupe`).

    `classes` lists every class (an empty one counts in the imbalance).
    class_counts are of the examples kept. `near`: near_lists(items), if the caller
    has it (it depends on the hashes only, not on the splits).
    """
    with without_gc():
        near = near_lists(items) if near is None else near
        groups = duplicate_groups(items, near)
        conflicts = [g for g in groups if is_conflict(g, items)]
        pairs = leaked_pairs(items, near)
    dropped = dropped_paths(groups, conflicts, pairs, items) if dedupe else set()
    counts: Dict[str, int] = dict.fromkeys(classes or [], 0)
    for item in items:
        if item.relpath not in dropped:
            counts[item.label] = counts.get(item.label, 0) + 1
    duplicates, cut_groups = _cap([_group_object(g, items) for g in groups])
    conflicting, cut_conflicts = _cap([_group_object(g, items) for g in conflicts])
    leakage = leakage_summary(pairs, sum(item.split == EVAL for item in items))
    leakage["pairs"], cut_pairs = listed_pairs(leakage["pairs"])
    listed_drops, cut_drops = _cap(sorted(dropped))
    kinds = collections.Counter(g.kind for g in groups)
    return {
        "images": len(items), "duplicates": duplicates, "label_conflicts": conflicting,
        "leakage": leakage, "class_counts": counts, "imbalance": imbalance(counts),
        "dropped": listed_drops,
        "counts": {"exact_groups": kinds["exact"], "near_groups": kinds["near"],
                   "duplicate_images": sum(len(g.members) - 1 for g in groups),
                   "conflict_groups": len(conflicts), "leaked": len(pairs),
                   "dropped": len(dropped)},
        "truncated": cut_groups or cut_conflicts or cut_pairs or cut_drops,
    }, dropped


def problems(health: dict) -> Optional[str]:
    """What --strict refuses, with up to 5 paths; None when the data is clean."""
    counts = health["counts"]
    if not (counts["exact_groups"] or counts["near_groups"] or counts["leaked"]):
        return None
    paths = [p for g in health["duplicates"] for p in g["paths"]]
    paths += [p["eval"] for p in health["leakage"]["pairs"]]
    return (f"{counts['exact_groups']} exact and {counts['near_groups']} near duplicate "
            f"group(s), {counts['conflict_groups']} with conflicting labels, "
            f"{counts['leaked']} eval image(s) leaked from train; first: "
            f"{', '.join(list(dict.fromkeys(paths))[:5])}")
