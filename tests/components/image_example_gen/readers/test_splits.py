"""One rule picks train, eval and the unused splits, whatever layout names them: the same
split names, as folders, a manifest's split column, Hugging Face and TFDS splits, must give
the same eval split and the same unused ones."""
import shutil

import pytest

from components.image_example_gen.readers import splits
from components.image_example_gen.readers.formats import list_dataset
from core.contract import EVAL, TRAIN
from settings.config import PipelineConfig
from tests.support import foreign_datasets
from tests.support.paths import MNIST_PNG

# Each split gets its own number of images per class, so the eval count says which it was.
SIZES = {"train": 5, "eval": 1, "validation": 2, "val": 3, "test": 4}


@pytest.mark.parametrize("names, chosen", [
    ({"train", "validation", "test"}, ("train", "validation", ["test"])),
    ({"train", "val", "test"}, ("train", "val", ["test"])),
    ({"train", "test"}, ("train", "test", [])),
    ({"train", "eval", "validation", "extra"}, ("train", "eval", ["extra", "validation"])),
    ({"validation", "test"}, (None, "validation", ["test"])),
    ({"train"}, ("train", None, [])),
    (set(), (None, None, [])),
])
def test_the_rule(names, chosen):
    choice = splits.choose(names)
    assert (choice.train, choice.eval, choice.unused) == chosen


def _digits(label: str, count: int, start: int):
    return sorted((MNIST_PNG / label).iterdir())[start:start + count]


def _as_folders(root, names):
    for offset, name in enumerate(names):
        for label in ("0", "1"):
            (root / name / label).mkdir(parents=True)
            for path in _digits(label, SIZES[name], 10 * offset):
                shutil.copy(path, root / name / label / path.name)
    return root


def _as_manifest(root, names):
    _as_folders(root, names)
    lines = [f"{path.relative_to(root)},{path.parent.name},{path.parent.parent.name}"
             for path in sorted(root.glob("*/*/*.png"))]
    (root / "labels.csv").write_text("image,label,split\n" + "\n".join(lines) + "\n")
    return root / "labels.csv"


def _as_hub_parquet(root, names):
    rows = {name: foreign_datasets.digit_rows(SIZES[name], 10 * offset)
            for offset, name in enumerate(names)}
    return foreign_datasets.write_hub_parquet(root, rows, shards=1)


def _as_tfds(root, names):
    rows = {name: foreign_datasets.digit_rows(SIZES[name], 10 * offset)
            for offset, name in enumerate(names)}
    return foreign_datasets.write_tfds(root, rows, shards=1)


def _counts(listing) -> dict:
    """{split: images} of a listing's units."""
    counts = {TRAIN: 0, EVAL: 0}
    for unit in listing.files:
        counts[unit.split] += getattr(unit, "stop", 1) - getattr(unit, "start", 0)
    return counts


@pytest.mark.parametrize("names", [("train", "validation", "test"), ("train", "val", "test"),
                                   ("train", "test"), ("train", "eval", "validation")])
@pytest.mark.parametrize("layout", [_as_folders, _as_manifest, _as_hub_parquet, _as_tfds])
def test_every_layout_follows_it(tmp_path, layout, names):
    listing = list_dataset(str(layout(tmp_path, names)), PipelineConfig().ingest_options())
    choice = splits.choose(names)
    classes = 2 if layout in (_as_folders, _as_manifest) else len(foreign_datasets.NAMES)
    assert _counts(listing) == {TRAIN: SIZES["train"] * classes,
                                EVAL: SIZES[choice.eval] * classes}
    assert [name.split(" (")[0] for name in listing.unused] == choice.unused
