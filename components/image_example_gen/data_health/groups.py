"""Duplicate groups (exact, then near) and the label conflicts among them.

An image is in at most one group. Exact groups (same content hash) come
first; their members join no near group. A near group is a star: taking
the images in sorted path order, each image not yet grouped gathers every
ungrouped image within NEAR_THRESHOLD bits of it. Stars, not transitive
closure, so a chain of slightly different images (a burst of photos) never
merges into one huge group; every member is a near copy of the first path.
"""
import collections
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from components.image_example_gen.data_health import near_index


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


class NearLists:
    """Each image with a perceptual hash (`i in near`), and the item indices within
    NEAR_THRESHOLD bits of it (`near[i]`), built when asked (near_index.NearCopies)."""

    def __init__(self, hashed: List[int], copies: near_index.NearCopies):
        self._hashed, self._copies = hashed, copies
        self._position = {item: position for position, item in enumerate(hashed)}

    def __contains__(self, item: int) -> bool:
        return item in self._position

    def __getitem__(self, item: int) -> List[int]:
        return [self._hashed[p] for p in self._copies[self._position[item]]]

    def links(self) -> Iterator[Tuple[int, int]]:
        """Item index pairs joining every near copy to the others (NearCopies.links)."""
        return ((self._hashed[a], self._hashed[b]) for a, b in self._copies.links())


def near_lists(items: List[HealthItem]) -> NearLists:
    """Every image with a perceptual hash, and the others within NEAR_THRESHOLD bits of it.

    One search over all the hashes (near_index), shared by the near groups and leakage.
    """
    hashed = [i for i, item in enumerate(items) if item.phash is not None]
    return NearLists(hashed, near_index.near_lists([items[i].phash for i in hashed]))


def near_groups(items: List[HealthItem], taken: set,
                near: Optional[NearLists] = None) -> List[Group]:
    """Stars of near copies among the images not in `taken` (see the module docstring)."""
    near = near_lists(items) if near is None else near
    free = [i for i in _sorted_indices(items) if i not in taken and i in near]
    grouped, groups = set(taken), []
    for i in free:
        if i in grouped:
            continue
        copies = [j for j in near[i] if j not in grouped]
        if copies:
            members = sorted([i, *copies], key=lambda j: items[j].relpath)
            grouped.update(members)
            groups.append(Group("near", members))
    return groups


def duplicate_groups(items: List[HealthItem], near: Optional[NearLists] = None) -> List[Group]:
    """Exact groups, then near groups of the images left (`near`: near_lists', if known)."""
    exact = exact_groups(items)
    taken = {i for group in exact for i in group.members}
    return exact + near_groups(items, taken, near)


def is_conflict(group: Group, items: List[HealthItem]) -> bool:
    """Whether the group's members carry two or more labels."""
    return len({items[i].label for i in group.members}) > 1
