"""detect_format and list_dataset: auto detection from names; explicit override."""
import numpy as np
import pytest

from components.image_example_gen.readers.folder_tree import DatasetError
from components.image_example_gen.readers.formats import detect_format, list_dataset
from settings.config import PipelineConfig


@pytest.mark.parametrize("names, expected", [
    (["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"], "idx"),
    (["mnist.npz"], "npz"),
    (["data-00000-of-00002.tfrecord.gz"], "tfrecord"),
    (["cat", "dog"], "folder"),
])
def test_format_is_detected_from_names(tmp_path, names, expected):
    for name in names:
        (tmp_path / name).mkdir() if "." not in name else (tmp_path / name).write_bytes(b"")
    assert detect_format(str(tmp_path)) == expected


def test_a_single_npz_file_is_a_dataset(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.zeros((4, 3, 3), np.uint8), y_train=np.arange(4))
    listing = list_dataset(str(path), PipelineConfig.from_values().ingest_options())
    assert (listing.format, listing.classes) == ("npz", ["0", "1", "2", "3"])


def test_explicit_format_overrides_detection(tmp_path, make_image):
    make_image(tmp_path / "a" / "1.png")
    with pytest.raises(DatasetError, match="expected train-images-idx3-ubyte"):
        list_dataset(str(tmp_path), PipelineConfig.from_values(format="idx").ingest_options())


def test_an_ingest_output_is_detected_as_tfrecords(tmp_path):
    for split in ("train", "eval"):
        (tmp_path / split).mkdir()
        (tmp_path / split / "data-00000-of-00001.tfrecord.gz").write_bytes(b"")
    assert detect_format(str(tmp_path)) == "tfrecord"


def test_groups_rows_are_checked_against_array_examples(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.zeros((4, 3, 3), np.uint8), y_train=np.arange(4))
    groups = tmp_path / "groups.csv"

    def listed(rows):
        groups.write_text(rows)
        return list_dataset(str(path), PipelineConfig.from_values(
            groups=str(groups)).ingest_options())
    assert listed("d.npz:x_train#0,a\nd.npz:x_train#3,b\n").groups == {
        "d.npz:x_train#0": "a", "d.npz:x_train#3": "b"}
    for row in ("d.npz:x_train#4,a", "d.npz:x_test#0,a", "d.npz:x_train,a", "x_train#1,a",
                "d.npz:x_train#03,a", "d.npz:x_train#²,a"):
        with pytest.raises(DatasetError, match=f"groups.csv, line 1: {row[:-2]} is not an"):
            listed(row + "\n")
