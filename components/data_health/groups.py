"""Duplicate groups (exact, then near) and the label conflicts among them.

An image is in at most one group. Exact groups (same content hash) come
first; their members join no near group. A near group is a star: taking
the images in sorted path order, each image not yet grouped gathers every
ungrouped image within NEAR_THRESHOLD bits of it. Stars, not transitive
closure, so a chain of slightly different images (a burst of photos) never
merges into one huge group; every member is a near copy of the first path.
"""
import collections
from typing import Dict, List, NamedTuple, Optional

from components.data_health.near_index import NearIndex


class HealthItem(NamedTuple):
    """One ingested image: what the checks need to know of it."""

    relpath: str  # image/filename
    content: str  # hashing.content_hash
    phash: Optional[int]  # hashing.perceptual_hash; None: a small image, exact matches only
    split: str
    label: str  # class name


class Group(NamedTuple):
    """A duplicate group: "exact" or "near", member indices in sorted path order."""

    kind: str
    members: List[int]


def _sorted_indices(items: List[HealthItem]) -> List[int]:
    return sorted(range(len(items)), key=lambda i: items[i].relpath)


def exact_groups(items: List[HealthItem]) -> List[Group]:
    """Images sharing a content hash, two or more, first path first."""
    by_content: Dict[str, List[int]] = collections.defaultdict(list)
    for i in _sorted_indices(items):
        by_content[items[i].content].append(i)
    return [Group("exact", members) for members in by_content.values() if len(members) > 1]


def near_groups(items: List[HealthItem], taken: set) -> List[Group]:
    """Stars of near copies among the images not in `taken` (see the module docstring)."""
    free = [i for i in _sorted_indices(items) if i not in taken and items[i].phash is not None]
    index = NearIndex((i, items[i].phash) for i in free)
    grouped, groups = set(), []
    for i in free:
        if i in grouped:
            continue
        near = [j for j in index.near(items[i].phash) if j != i and j not in grouped]
        if near:
            members = sorted([i, *near], key=lambda j: items[j].relpath)
            grouped.update(members)
            groups.append(Group("near", members))
    return groups


def duplicate_groups(items: List[HealthItem]) -> List[Group]:
    """Exact groups, then near groups of the images left."""
    exact = exact_groups(items)
    taken = {i for group in exact for i in group.members}
    return exact + near_groups(items, taken)


def is_conflict(group: Group, items: List[HealthItem]) -> bool:
    """Whether the group's members carry two or more labels."""
    return len({items[i].label for i in group.members}) > 1
