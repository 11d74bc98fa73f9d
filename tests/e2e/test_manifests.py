"""`imagepipe run` on the bundled digits in each dataset layout, against the same digits as
folders.

The folders are a train/, val/ and test/ tree of the digits (tests/support/manifests.py's
split: every fifth image of a class held out, alternately validation and test). Each layout
holds the same images with the same labels in the same splits, and test unused: the
manifests (Vertex AI CSV and JSON Lines, a headed CSV) sit at the root of the tree and name
each image by its path there; the Hugging Face Parquet shards, save_to_disk DatasetDict and
TFDS folder (tests/support/foreign_datasets.py, with the digits as ClassLabel names) carry
the same PNG bytes in train, validation and test splits.

A seeded run must then reach the folders run's accuracy, within a point, but only from the
same examples in the same order: ingestion takes image files in the order of a hash of
their paths (encoding/shards.py plan_shards) and a dataset's rows file by file, each output
file interleaving a few files' rows (a split written as one file keeps its order), and with a
few epochs the order moves the accuracy by several points (measured: the foreign layouts
in class order, 0.775; in the folders' order but in two interleaved shards, 0.716; the
folders, 0.804). So the foreign layouts are written in the folders' order, one shard a
split. The folders run is done once for the module. A few epochs and no time budget keep
each run short and the same on every machine.
"""
import pytest

from tests.support import foreign_datasets
from tests.support.cli import run_pipeline
from tests.support.manifests import (CLASSES, RUN_FLAGS, split_datasets, write_digit_tree,
                                     write_headed_csv, write_vertex_csv, write_vertex_jsonl)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """(train/, val/ and test/ folders of the digits, their rows by relative path there)."""
    root = tmp_path_factory.mktemp("tree") / "digits"
    return root, write_digit_tree(root)


@pytest.fixture(scope="module")
def from_folders(tree, tmp_path_factory):
    """The folders run's summary.json."""
    summary, _ = run_pipeline(tree[0], tmp_path_factory.mktemp("folders") / "run", *RUN_FLAGS)
    return summary


# Each layout's writer, by its format: (tree root, tree rows, a fresh folder) -> --data.
LAYOUTS = {
    "vertex-csv": lambda root, rows, _: write_vertex_csv(root / "import.csv", rows),
    "vertex-jsonl": lambda root, rows, _: write_vertex_jsonl(root / "import.jsonl", rows),
    "csv": lambda root, rows, _: write_headed_csv(root / "labels.csv", rows),
    "hf-parquet": lambda root, rows, folder: foreign_datasets.write_hub_parquet(
        folder, split_datasets(rows), shards=1),
    "hf-disk": lambda root, rows, folder: foreign_datasets.write_save_to_disk(
        folder, split_datasets(rows), files=1),
    "tfds": lambda root, rows, folder: foreign_datasets.write_tfds(
        folder, split_datasets(rows), shards=1),
}


@pytest.mark.parametrize("fmt", list(LAYOUTS))
def test_a_layout_trains_as_the_same_digits_in_folders(fmt, tree, from_folders, tmp_path,
                                                       monkeypatch):
    # The foreign writers name their classes foreign_datasets.NAMES: here the ten digits.
    monkeypatch.setattr(foreign_datasets, "NAMES", tuple(CLASSES))
    root, rows = tree
    data = LAYOUTS[fmt](root, rows, tmp_path / fmt)
    summary, printed = run_pipeline(data, tmp_path / "run", *RUN_FLAGS)
    splits = {"train": sum(use == "training" for *_, use in rows),
              "eval": sum(use == "validation" for *_, use in rows)}
    assert summary["data"]["format"] == fmt
    assert summary["data"]["splits"] == splits == from_folders["data"]["splits"]
    assert summary["data"]["classes"] == CLASSES == from_folders["data"]["classes"]
    assert summary["data"]["skipped_files"] == []
    accuracy = summary["eval"]["accuracy"], from_folders["eval"]["accuracy"]
    assert abs(accuracy[0] - accuracy[1]) <= 0.01, (accuracy, printed[-2000:])
    assert accuracy[0] > 0.5, printed[-2000:]  # it learned: the comparison is the point
