"""probe_shape: the default image size and channels, from image headers."""
import pytest

from components.image_example_gen.folder_tree import DatasetError, list_class_folders
from pipeline.data_probe import probe_shape


def test_mnist_digits_are_28_pixels_and_grayscale(mnist_subset):
    assert probe_shape(str(mnist_subset), list_class_folders(str(mnist_subset))) == (28, 1)


def test_most_common_side_and_channels_win(tmp_path, make_image):
    for i in range(3):
        make_image(tmp_path / "a" / f"{i}.jpg", size=(40, 30), mode="RGB", fmt="JPEG")
    make_image(tmp_path / "b" / "x.png", size=(8, 8), mode="L")
    assert probe_shape(str(tmp_path), list_class_folders(str(tmp_path))) == (40, 3)


def test_no_readable_image_is_a_dataset_error(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.png").write_bytes(b"not a png")
    with pytest.raises(DatasetError, match="could be opened"):
        probe_shape(str(tmp_path), list_class_folders(str(tmp_path)))
