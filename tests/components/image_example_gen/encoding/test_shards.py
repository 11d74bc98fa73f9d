"""Shards: class-mixing order independent of listing order; lossless manifest."""
import random

import pytest

from components.image_example_gen.encoding import shards
from components.image_example_gen.readers.arrays import ArrayChunk
from components.image_example_gen.readers.folder_tree import ImageFile
from components.image_example_gen.readers.tfrecords import RecordFile


def _files(count):
    return [ImageFile(f"class_{i % 4}/{i:05d}.png", i % 4) for i in range(count)]


def test_shards_mix_classes_whatever_the_listing_order(monkeypatch):
    monkeypatch.setattr(shards, "SHARD_FILES", 100)
    files = _files(1000)  # listed class by class would put one class per shard
    shuffled = random.Random(0).sample(files, len(files))
    plan = shards.plan_shards(sorted(files, key=lambda f: f.label))
    assert plan == shards.plan_shards(shuffled)
    assert [(index, count) for index, count, _ in plan] == [(i, 10) for i in range(10)]
    for _, _, units in plan:
        assert {u.label for u in units} == {0, 1, 2, 3}


@pytest.mark.parametrize("files, processes, sizes", [
    (3119, 2, [390] * 7 + [389]),  # 7 shards of up to 512 would leave one worker 4 of them
    (3119, 1, [446] * 4 + [445] * 3),
    (1000, 2, [500, 500]),
    (3, 4, [1, 1, 1]),  # never an empty shard
])
def test_shards_are_equal_and_a_multiple_of_the_workers(files, processes, sizes):
    plan = shards.plan_shards(_files(files), processes)
    assert sorted((len(units) for _, _, units in plan), reverse=True) == sizes
    assert {count for _, count, _ in plan} == {len(sizes)}


def test_manifest_round_trips_every_unit_type(tmp_path):
    units = [[ImageFile("猫/ä b.png", 1, "eval"), ImageFile("x/y.jpg", 0)],
             [ArrayChunk("idx", "train-images-idx3-ubyte", "train-images-idx3-ubyte",
                         "train-labels-idx1-ubyte", 0, 10, "train", (28, 28))],
             [RecordFile("part-0.tfrecord", None)]]
    plan = [(i, len(units), group) for i, group in enumerate(units)]
    path = str(tmp_path / shards.MANIFEST_FILE)
    shards.write_manifest(path, plan)
    assert [shards.parse_shard(line) for line in shards.manifest_lines(path)] == plan


@pytest.mark.parametrize("processes, expected", [
    (1, [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]),  # at most 4 units a shard
    (2, [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]),  # 4 shards: a multiple of the workers
])
def test_row_units_are_dealt_from_across_the_dataset(monkeypatch, processes, expected):
    monkeypatch.setattr(shards, "SHARD_ROW_UNITS", 4)
    units = [RecordFile(f"part-{i}.tfrecord", None) for i in range(10)]
    plan = shards.plan_shards(units, processes)
    assert [[units.index(u) for u in group] for _, _, group in plan] == expected
    assert {count for _, count, _ in plan} == {len(expected)}


def test_array_chunks_stay_a_shard_each():
    chunks = [ArrayChunk("npz", "a.npz", "x", "y", start, start + 10, None, (28, 28))
              for start in range(0, 50, 10)]
    assert [group for _, _, group in shards.plan_shards(chunks, 2)] == [[c] for c in chunks]
