"""IDX and .npz: validated listing, chunked reading, lossless PNG encoding."""
import gzip
import io
import shutil

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from components.image_example_gen.readers import arrays
from components.image_example_gen.readers.folder_tree import DatasetError
from tests.support.paths import MNIST_IDX



def _idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.astype(np.uint8).tobytes()


def test_bundled_mnist_idx_lists_train_and_t10k_splits():
    listing = arrays.list_idx(str(MNIST_IDX))
    assert listing.classes == [str(i) for i in range(10)]
    assert [(u.split, u.start, u.stop) for u in listing.files] == [("train", 0, 800),
                                                                   ("eval", 0, 200)]
    images, labels, name = arrays.read_chunk(listing.files[1], str(MNIST_IDX))
    assert images.shape == (200, 28, 28) and labels.shape == (200,)
    assert name == "t10k-images-idx3-ubyte.gz"


@pytest.mark.parametrize("data, message", [
    (b"", "bad magic number empty"),
    (b"\x00\x00\x08\x03\x00\x00", "truncated IDX header"),
    (b"\x01\x02\x08\x01\x00\x00\x00\x01\x00", "bad magic"),
    (bytes([0, 0, 8, 1, 0, 0, 0, 5, 1, 2]), "says (5,) (5 bytes of data), file has 2"),
])
def test_broken_idx_files_are_named_with_the_reason(data, message):
    with pytest.raises(DatasetError, match=r"x.idx: .*" + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        arrays.parse_idx(data, "x.idx")


def test_mismatched_image_and_label_counts_are_refused(tmp_path):
    (tmp_path / "train-images-idx3-ubyte").write_bytes(_idx_bytes(np.zeros((3, 4, 4))))
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(_idx_bytes(np.zeros(2))))
    with pytest.raises(DatasetError, match="has 3 images but .* has 2 labels"):
        arrays.list_idx(str(tmp_path))


def test_idx_without_t10k_is_hash_split_and_chunked(tmp_path, monkeypatch):
    monkeypatch.setattr(arrays, "CHUNK", 4)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(_idx_bytes(np.zeros((10, 4, 4))))
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(_idx_bytes(np.arange(10) % 3))
    listing = arrays.list_idx(str(tmp_path))
    assert [(u.start, u.stop, u.split) for u in listing.files] == [
        (0, 4, None), (4, 8, None), (8, 10, None)]
    assert listing.classes == ["0", "1", "2"]


def test_missing_label_file_is_named(tmp_path):
    shutil.copy(MNIST_IDX / "train-images-idx3-ubyte.gz", tmp_path)
    with pytest.raises(DatasetError, match="train-images-idx3-ubyte.gz needs its labels"):
        arrays.list_idx(str(tmp_path))


def _npz(path, **arrays_):
    np.savez_compressed(path, **arrays_)
    return str(path)


def test_npz_with_keras_keys_lists_both_splits(tmp_path):
    path = _npz(tmp_path / "d.npz", x_train=np.zeros((5, 6, 6, 3), np.uint8),
                y_train=np.array([0, 1, 2, 1, 0]), x_test=np.zeros((2, 6, 6, 3), np.uint8),
                y_test=np.array([[2], [1]]))
    listing = arrays.list_npz(path)
    assert [(u.split, u.stop, u.image_shape) for u in listing.files] == [
        ("train", 5, (6, 6, 3)), ("eval", 2, (6, 6, 3))]
    images, labels, name = arrays.read_chunk(listing.files[1], path)
    assert labels.tolist() == [2, 1] and name == "d.npz:x_test"


@pytest.mark.parametrize("contents, message", [
    ({"images": np.zeros((2, 4, 4), np.uint8)}, r"expected arrays x_train, y_train.*\['images'\]"),
    ({"x_train": np.zeros((2, 4, 4), np.float32), "y_train": np.zeros(2, np.int64)},
     "expected uint8 images"),
    ({"x_train": np.zeros((2, 4, 4), np.uint8), "y_train": np.zeros(3, np.int64)},
     "has 2 images but .* has 3 labels"),
    ({"x_train": np.zeros((2, 4, 4), np.uint8), "y_train": np.array(["a", "b"])},
     "1-D integer label array"),
])
def test_npz_with_wrong_keys_or_dtypes_is_refused(tmp_path, contents, message):
    with pytest.raises(DatasetError, match=message):
        arrays.list_npz(_npz(tmp_path / "d.npz", **contents))


def test_npz_object_arrays_are_refused_without_unpickling(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.array([object()] * 2, dtype=object), y_train=np.zeros(2, int))
    with pytest.raises(DatasetError, match="cannot load x_train"):
        arrays.list_npz(str(path))


@pytest.mark.parametrize("shape", [(5, 7), (5, 7, 1), (5, 7, 3), (5, 7, 4)])
def test_png_encoding_is_lossless(shape):
    pixels = np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8)
    decoded = np.asarray(Image.open(io.BytesIO(arrays.encode_png(pixels))))
    np.testing.assert_array_equal(decoded, pixels.reshape(decoded.shape))


def test_array_examples_record_the_array_shape_without_decoding(tmp_path):
    from settings.config import PipelineConfig
    from components.image_example_gen.readers.units import read_unit
    path = _npz(tmp_path / "d.npz", x_train=np.zeros((3, 5, 7, 3), np.uint8),
                y_train=np.array([0, 1, 0]))
    listing = arrays.list_npz(path)
    (split, record, fact, _), *_ = read_unit(
        listing.files[0], path, listing.classes, PipelineConfig.from_values().ingest_options(),
        lambda relpath: "hashed")
    assert (split, fact) == ("hashed", ("hashed", 0, "0", "5x7x3", 0, 1))  # black, grey
    feature = tf.train.Example.FromString(record).features.feature
    assert [feature[k].int64_list.value[0] for k in
            ("image/height", "image/width", "image/channels")] == [5, 7, 3]
    assert feature["image/filename"].bytes_list.value[0] == b"d.npz:x_train#0"


def test_arrays_over_the_pixel_limit_fail_naming_the_file(tmp_path):
    from settings.config import PipelineConfig
    from components.image_example_gen.readers.units import read_unit
    path = _npz(tmp_path / "d.npz", x_train=np.zeros((2, 12, 12), np.uint8),
                y_train=np.array([0, 1]))
    listing = arrays.list_npz(path)
    with pytest.raises(DatasetError, match=r"d.npz:x_train: 12x12 .* limit of 100"):
        options = PipelineConfig.from_values(max_pixels=100).ingest_options()
        list(read_unit(listing.files[0], path, listing.classes, options,
                       lambda relpath: "hashed"))
