"""`imagepipe run` on a Vertex AI CSV of the bundled digits, against the same digits as folders.

The manifest sits at the root of a train/, val/ and test/ tree of the digits, naming each
image by its path there with the ML_USE of its folder: both runs then see the same images
under the same names in the same splits (test/ and the test rows unused), so a seeded run
must reach the same accuracy, within a point. A few epochs and no time budget keep it short
and the same on every machine.
"""
import pathlib
import shutil

import pytest

from tests.support.cli import run_pipeline
from tests.support.manifests import digit_rows, write_vertex_csv
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.slow

FLAGS = ["--epochs", "4", "--time-budget", "none"]
FOLDERS = {"training": "train", "validation": "val", "test": "test"}


def digits_tree(root: pathlib.Path) -> pathlib.Path:
    """train/, val/ and test/ folders of the digits, and import.csv naming them."""
    rows = []
    for image, label, use in digit_rows():
        relpath = f"{FOLDERS[use]}/{image}"
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MNIST_PNG / image, root / relpath)
        rows.append((relpath, label, use))
    return pathlib.Path(write_vertex_csv(root / "import.csv", rows))


def test_a_vertex_csv_trains_as_the_same_digits_in_folders(tmp_path):
    manifest = digits_tree(tmp_path / "digits")
    from_csv, printed = run_pipeline(manifest, tmp_path / "csv", *FLAGS)
    from_folders, _ = run_pipeline(tmp_path / "digits", tmp_path / "folders", *FLAGS)
    rows = digit_rows()
    splits = {"train": sum(use == "training" for *_, use in rows),
              "eval": sum(use == "validation" for *_, use in rows)}
    assert from_csv["data"]["format"] == "vertex-csv"
    assert from_csv["data"]["splits"] == splits == from_folders["data"]["splits"]
    assert from_csv["data"]["classes"] == [str(d) for d in range(10)]
    assert from_csv["data"]["skipped_files"] == []
    accuracy = from_csv["eval"]["accuracy"], from_folders["eval"]["accuracy"]
    assert abs(accuracy[0] - accuracy[1]) <= 0.01, (accuracy, printed[-2000:])
    assert accuracy[0] > 0.5, printed[-2000:]  # it learned: the comparison is the point
