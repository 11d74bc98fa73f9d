"""together.moves: copies, exact and near, transitively, go to their first path's split."""
import random

from components.image_example_gen.data_health.groups import HealthItem, near_lists
from components.image_example_gen.data_health.together import emptied_split, moves

FAR = 0xFFFFFFFF00000000  # 32 bits from 0


def _item(path, content, phash, split):
    return HealthItem(path, content, phash, split, "a")


def _moves(items):
    return moves(items, near_lists(items))


def test_copies_move_to_the_split_of_their_first_path():
    items = [_item("b/copy.png", "x", None, "train"), _item("a/orig.png", "x", None, "eval"),
             _item("c/alone.png", "y", None, "train")]
    assert _moves(items) == {"b/copy.png": "eval"}


def test_a_chain_of_near_copies_is_one_group_and_blank_images_stay_linear():
    chain = [_item(f"p/{i}.jpg", f"c{i}", (1 << i) - 1, "eval" if i % 2 else "train")
             for i in range(12)]  # each 1 bit from the next, the ends 11 apart
    blanks = [_item(f"z/{i}.png", f"b{i}", FAR, "eval" if i % 3 else "train")
              for i in range(3000)]
    found = _moves(chain + blanks)
    assert {found.get(item.relpath, item.split) for item in chain} == {"train"}
    assert {found.get(item.relpath, item.split) for item in blanks} == {"train"}  # z/0.png's


def test_data_without_copies_moves_nothing():
    rng = random.Random(0)
    items = [_item(f"a/{i}.png", str(i), rng.getrandbits(64), "eval" if i % 2 else "train")
             for i in range(200)]
    assert _moves(items) == {}


def test_a_move_that_would_empty_a_split_is_reported():
    # One picture under many names: one group, which would leave eval empty.
    items = [_item(f"a/{i}.png", "x", None, "eval" if i % 2 else "train") for i in range(6)]
    found = _moves(items)
    assert emptied_split(items, {}) is None
    assert emptied_split(items, found) == "eval"
