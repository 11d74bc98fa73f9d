"""Data health inside ingestion: the health rows workers send, the report section, hashes.tsv.

A health row is [relpath, content hash, perceptual hash, *encode.Fact] per
written example (shard_writer.write_shard). HASHES_FILE keeps the kept
examples' hashes beside the report, so that a span window can look for
leakage across spans without decoding any image again (span_store.py).
"""
import csv
import io
import json
import os
from typing import Dict, List, Optional, Set, Tuple

from core.contract import DATA_HEALTH_KEY, SPLITS, TRAIN
from components.image_example_gen.data_health import together
from components.image_example_gen.data_health.groups import HealthItem, NearLists, near_lists
from components.image_example_gen.data_health.hashing import hash_from_hex, hash_hex
from components.image_example_gen.data_health.imbalance import imbalance
from components.image_example_gen.data_health.leakage import leaked_pairs, leakage_summary
from components.image_example_gen.data_health.report import (MAX_LISTED, data_health, listed_pairs,
                                                             without_gc)
from core.storage import files

# relpath, split, class name, content hash, perceptual hash (hashing.hash_hex)
HASHES_FILE = "hashes.tsv"


def rows_text(rows: List[list]) -> str:
    """One shard's health rows as the JSON text ingestion passes through Beam: nested
    lists there would have Beam's state cache walk every object to size the side input
    (objsize), which cost more than the checks themselves (docs/data_health.md#cost)."""
    return json.dumps(rows, ensure_ascii=False)


def ingest_health(texts: List[str], dedupe: bool, classes: List[str], out_dir: str,
                  regroup: bool) -> Tuple[dict, List[list], Set[str], Dict[str, str]]:
    """(report.data_health of the shards' rows_text, their rows, the paths to drop, the
    copies to move: {relpath: split}); writes HASHES_FILE.

    With `regroup` (the splits were hashed, not given), every copy moves to its
    group's split (data_health/together.py) and the checks see the splits after the
    move. The garbage collector is paused from the first row parsed: on a large
    dataset, parsing and listing the rows set off full collections over everything the
    process holds (docs/data_health.md#cost)."""
    with without_gc():
        rows = [row for text in texts for row in json.loads(text)]
        items = items_of(rows)
        near = near_lists(items)
        items, moves, rule = split_together(items, near, regroup)
        section, dropped = data_health(items, dedupe, classes, near)
        section["split"] = {"rule": rule, "moved": len(moves)}
        write_hashes(out_dir, items, dropped)
    return section, rows, dropped, moves


def split_together(items: List[HealthItem], near: NearLists, regroup: bool
                   ) -> Tuple[List[HealthItem], Dict[str, str], str]:
    """(the items with every copy in its group's split, the moves: {relpath: split},
    data_health.split.rule): ingestion's split rule, which `imagepipe inspect` shows too.
    Without `regroup` (splits given), or where moving would empty a split, none move."""
    moves = together.moves(items, near) if regroup else {}
    emptied = together.emptied_split(items, moves)
    if emptied:
        moves = {}
    items = [item._replace(split=moves[item.relpath]) if item.relpath in moves else item
             for item in items]
    return items, moves, _split_rule(regroup, emptied)


def _split_rule(regroup: bool, emptied: Optional[str]) -> str:
    """data_health.split.rule: how the examples were split."""
    if not regroup:
        return "given"
    if emptied:
        return (f"by path: keeping copies together would leave the {emptied} split empty, "
                "so copies across the splits are reported as leaks")
    return "copies together"


def items_of(rows: List[list]) -> List[HealthItem]:
    """HealthItems of health rows (the fact's split and class text)."""
    return [HealthItem(row[0], row[1], row[2], row[3], row[5]) for row in rows]


def write_hashes(out_dir: str, items: List[HealthItem], dropped: Set[str]) -> None:
    """HASHES_FILE of the examples kept, sorted by path."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    for item in sorted(items, key=lambda item: item.relpath):
        if item.relpath not in dropped:
            writer.writerow([item.relpath, item.split, item.label, item.content,
                             hash_hex(item.phash)])
    files.write_text(os.path.join(out_dir, HASHES_FILE), buffer.getvalue())


def read_hashes(entry: str) -> Optional[List[HealthItem]]:
    """An ingestion's HASHES_FILE as HealthItems; None if it has none."""
    path = os.path.join(entry, HASHES_FILE)
    if not files.exists(path):
        return None
    rows = list(csv.reader(io.StringIO(files.read_text(path)), delimiter="\t"))
    return [HealthItem(path, content, hash_from_hex(phash), split, label)
            for path, split, label, content, phash in rows]


def _window_leakage(hashes: List[Optional[List[HealthItem]]],
                    newest: int) -> Tuple[Optional[dict], bool]:
    """(Leakage of the newest span's eval against the train split of every span, whether
    its listed pairs were cut); None without every span's hashes."""
    if any(h is None for h in hashes):
        return None, False
    items = [i for k, h in enumerate(hashes) for i in h
             if i.split == TRAIN or k == newest]
    pairs = leaked_pairs(items)
    evals = sum(i.split != TRAIN for i in hashes[newest])
    summary = leakage_summary(pairs, evals)
    summary["pairs"], cut = listed_pairs(pairs)
    return summary, cut


def window_health(sections: List[dict], per_class: Dict[str, Dict[str, int]],
                  hashes: List[Optional[List[HealthItem]]], newest: int) -> dict:
    """The combined report's data_health: the spans' lists and counts summed, class
    counts of the window's examples, and leakage across spans (the newest span's eval
    against every span's train), when every entry kept its HASHES_FILE."""
    counts = {name: sum(s["counts"][name] for s in sections) for name in sections[-1]["counts"]}
    class_counts = {c: sum(per_class[s].get(c, 0) for s in SPLITS) for c in per_class[TRAIN]}
    lists = {key: [x for s in sections for x in s[key]][:MAX_LISTED]
             for key in ("duplicates", "label_conflicts", "dropped")}
    leakage, cut = _window_leakage(hashes, newest)
    leakage = leakage or sections[newest]["leakage"]
    counts["leaked"] = leakage["count"]
    return {"images": sum(s["images"] for s in sections), **lists, "leakage": leakage,
            "class_counts": class_counts, "imbalance": imbalance(class_counts),
            "counts": counts, "truncated": cut or any(s["truncated"] for s in sections)
            or any(len(v) >= MAX_LISTED for v in lists.values())}


def health_sections(reports: list) -> Optional[List[dict]]:
    """Each report's data_health, or None if any lacks one (hashing was off)."""
    sections = [r.get(DATA_HEALTH_KEY) for r in reports]
    return None if any(s is None for s in sections) else sections
