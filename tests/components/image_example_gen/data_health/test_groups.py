"""near_index and groups: multi-index search, exact-before-near groups, stars, conflicts."""
import random

from components.image_example_gen.data_health.groups import (HealthItem, duplicate_groups,
                                                             exact_groups, is_conflict)
from components.image_example_gen.data_health.near_index import (MAX_BUCKET, NEAR_THRESHOLD,
                                                                 near_lists)


def _item(path, content, phash, label="a", split="train"):
    return HealthItem(path, content, phash, split, label)


def _brute_force(hashes):
    return [sorted(j for j, other in enumerate(hashes)
                   if j != i and (value ^ other).bit_count() <= NEAR_THRESHOLD)
            for i, value in enumerate(hashes)]


def test_near_lists_find_exactly_the_hashes_within_the_threshold():
    rng = random.Random(0)
    hashes = [rng.getrandbits(64) for _ in range(2000)]
    base = hashes[0]
    for flips in range(NEAR_THRESHOLD + 3):  # plant hashes 0..threshold+2 bits away
        value = base
        for bit in rng.sample(range(64), flips):
            value ^= 1 << bit
        hashes.append(value)
    found = list(near_lists(hashes))
    expected = _brute_force(hashes)
    assert found == expected and len(expected[0]) >= NEAR_THRESHOLD + 1
    assert 2 ** 63 <= max(hashes)  # the top bit set: uint64, not int64


def test_clusters_of_copies_match_a_comparison_of_all_pairs():
    rng = random.Random(1)
    originals = [rng.getrandbits(64) for _ in range(40)]
    hashes = []
    for _ in range(600):
        value = rng.choice(originals)
        for bit in rng.sample(range(64), rng.choice([0, 1, 3, 4, 5, 9])):
            value ^= 1 << bit
        hashes.append(value)
    assert list(near_lists(hashes)) == _brute_force(hashes)
    assert list(near_lists([])) == [] and list(near_lists([7])) == [[]]


def test_identical_hashes_never_flood_a_bucket():
    blank = [0] * (5 * MAX_BUCKET)  # blank images: one value, whatever the count
    found = near_lists(blank + [0b111])
    assert all(len(near) == 5 * MAX_BUCKET for near in found)
    # More distinct values than MAX_BUCKET in one band's bucket: that bucket is not
    # searched; these differ only in the lowest band, so no other band links them.
    crowded = list(range(2 * MAX_BUCKET))
    assert list(near_lists(crowded)) == [[] for _ in crowded]


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
