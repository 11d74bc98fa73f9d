"""detect_format with the Hugging Face and TFDS checks in its check lists: each layout is
found from file names, and the formats detected before are detected as before.

The datasets are written from the bundled digits to the documented formats
(tests/support/foreign_datasets.py).
"""
import pytest

from components.image_example_gen.readers import formats
from tests.support import foreign_datasets as fd


def test_each_layout_is_detected(tmp_path):
    rows = {"train": fd.digit_rows(1), "test": fd.digit_rows(1, 1)}
    version = fd.write_tfds(tmp_path / "tfds", rows)
    hub = fd.write_hub_parquet(tmp_path / "hub", rows)
    found = {
        "tfds version": formats.detect_format(str(version)),
        "tfds config": formats.detect_format(str(version.parent)),
        "hub": formats.detect_format(str(hub)),
        "hub split folders": formats.detect_format(str(fd.write_hub_parquet(
            tmp_path / "split_dirs", rows, layout="split_dirs"))),
        "one parquet file": formats.detect_format(str(next((hub / "data").iterdir()))),
        "dataset dict": formats.detect_format(str(fd.write_save_to_disk(tmp_path / "dd",
                                                                        rows))),
        "dataset": formats.detect_format(str(fd.write_save_to_disk(
            tmp_path / "d", {None: rows["train"]}))),
    }
    assert found == {"tfds version": "tfds", "tfds config": "tfds", "hub": "hf-parquet",
                     "hub split folders": "hf-parquet", "one parquet file": "hf-parquet",
                     "dataset dict": "hf-disk", "dataset": "hf-disk"}


@pytest.mark.parametrize("names, expected", [
    (["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"], "idx"),
    (["mnist.npz"], "npz"),
    (["data-00000-of-00002.tfrecord.gz"], "tfrecord"),
    (["train/", "train/data-00000-of-00001.tfrecord.gz", "eval/",
      "eval/data-00000-of-00001.tfrecord.gz"], "tfrecord"),
    (["cat/", "dog/"], "folder"),
    (["train/", "train/cat/", "test/", "test/cat/"], "folder"),
])
def test_other_formats_are_detected_as_before(tmp_path, names, expected):
    for name in names:
        (tmp_path / name).mkdir() if name.endswith("/") else (tmp_path / name).write_bytes(b"")
    assert formats.detect_format(str(tmp_path)) == expected
