"""The default split rule's second half: every copy goes to its duplicate group's split.

Workers hash each path into a split (options.split_index) before any image's
copies are known; this pass, after the last shard, moves the copies that
landed apart. Copies join transitively here, unlike the report's groups (a
star per first path): a burst of slightly different photos is one group, since
any two neighbours on opposite sides would be a leak. A group goes to the split
its first path was hashed into, so data without copies splits as before.
"""
import collections
from typing import Dict, Iterable, List, Optional, Tuple

from components.image_example_gen.data_health.groups import HealthItem, NearLists


def _links(items: List[HealthItem], near: NearLists) -> Iterable[Tuple[int, int]]:
    """Item index pairs joining every exact and near copy to the others, transitively."""
    first: Dict[str, int] = {}
    for i, item in enumerate(items):
        j = first.setdefault(item.content, i)
        if j != i:
            yield j, i
    yield from near.links()


def _roots(links: Iterable[Tuple[int, int]]) -> Dict[int, int]:
    """Union-find over the linked indices only: {index: its group's root}."""
    parent: Dict[int, int] = {}

    def find(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving keeps the trees flat
            i = parent[i]
        return i

    for a, b in links:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)
    return {i: find(i) for i in list(parent)}


def moves(items: List[HealthItem], near: NearLists) -> Dict[str, str]:
    """{relpath: split} of the copies to move so that each group shares one split.

    `near`: groups.near_lists(items), the search data health runs anyway.
    """
    roots = _roots(_links(items, near))
    first: Dict[int, int] = {}  # root: the member whose path sorts first
    for i, root in roots.items():
        if root not in first or items[i].relpath < items[first[root]].relpath:
            first[root] = i
    return {items[i].relpath: items[first[root]].split for i, root in roots.items()
            if items[i].split != items[first[root]].split}


def emptied_split(items: List[HealthItem], moved: Dict[str, str]) -> Optional[str]:
    """The split that `moved` would leave without images, or None.

    Data made mostly of copies (a tree of one picture, uniform patches whose perceptual
    hashes all agree) joins into one group; moving it whole would leave nothing to
    train or evaluate on, so the caller keeps the path split and reports the leak.
    """
    before = collections.Counter(item.split for item in items)
    after = collections.Counter(moved.get(item.relpath, item.split) for item in items)
    return next((split for split in sorted(before) if not after[split]), None)
