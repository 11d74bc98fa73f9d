"""near_index and groups: multi-index search, exact-before-near groups, stars, conflicts."""
import random

from components.data_health.groups import (HealthItem, duplicate_groups, exact_groups,
                                           is_conflict)
from components.data_health.near_index import MAX_BUCKET, NEAR_THRESHOLD, NearIndex


def _item(path, content, phash, label="a", split="train"):
    return HealthItem(path, content, phash, split, label)


def test_near_index_finds_exactly_the_hashes_within_the_threshold():
    rng = random.Random(0)
    hashes = [rng.getrandbits(64) for _ in range(2000)]
    base = hashes[0]
    for flips in range(NEAR_THRESHOLD + 3):  # plant hashes 0..threshold+2 bits away
        value = base
        for bit in rng.sample(range(64), flips):
            value ^= 1 << bit
        hashes.append(value)
    index = NearIndex(enumerate(hashes))
    expected = {i for i, h in enumerate(hashes) if (h ^ base).bit_count() <= NEAR_THRESHOLD}
    assert set(index.near(base)) == expected and len(expected) >= NEAR_THRESHOLD + 2


def test_identical_hashes_never_flood_a_bucket():
    index = NearIndex((i, 0) for i in range(5 * MAX_BUCKET))  # blank images
    assert len(index.near(0)) == 5 * MAX_BUCKET
    assert len(index.near(0b111)) == 5 * MAX_BUCKET


def test_exact_groups_come_first_and_near_groups_are_stars():
    items = [_item("b.png", "x", 0), _item("a.png", "x", 0), _item("c.png", "y", 0),
             _item("d.png", "z", 0b11), _item("e.png", "w", 0b111111),  # d~c, e~d, e !~ c
             _item("f.png", "v", 0xFFFFFFFF00000000)]
    groups = duplicate_groups(items)
    named = [(g.kind, [items[i].relpath for i in g.members]) for g in groups]
    assert named == [("exact", ["a.png", "b.png"]), ("near", ["c.png", "d.png"])]


def test_a_group_with_two_labels_is_a_conflict():
    items = [_item("a", "x", 0, "cat"), _item("b", "x", 0, "dog"), _item("c", "y", 9, "cat"),
             _item("d", "y", 9, "cat")]
    groups = exact_groups(items)
    assert [is_conflict(g, items) for g in groups] == [True, False]
