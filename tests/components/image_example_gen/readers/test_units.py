"""array_pixel_stats and array_health: array datasets get the pixel statistics and hashes
that image files get."""
import numpy as np
import pytest
from PIL import Image

from components.image_example_gen.data_health import hashing
from components.image_example_gen.encoding.encode import perceptual_hash, pixel_stats
from components.image_example_gen.readers import arrays
from components.image_example_gen.readers.units import array_health, array_pixel_stats, read_unit
from settings.config import PipelineConfig
from tests.support.paths import MNIST_IDX



def _mnist_eval() -> np.ndarray:
    """The 200 real digits of the bundled t10k IDX file, 28 x 28 uint8."""
    listing = arrays.list_idx(str(MNIST_IDX))
    return arrays.read_chunk(listing.files[1], str(MNIST_IDX))[0]


def test_idx_digits_get_what_their_images_would_get():
    digits = _mnist_eval()
    assert array_pixel_stats(digits) == [pixel_stats(Image.fromarray(d)) for d in digits]
    assert {gray for _, gray in array_pixel_stats(digits)} == {1}
    inverted = array_pixel_stats(255 - digits)
    assert min(bucket for bucket, _ in inverted) > max(b for b, _ in array_pixel_stats(digits))


@pytest.mark.parametrize("channels", [3, 4])
def test_colour_arrays_agree_with_pil(channels):
    rng = np.random.default_rng(0)
    colour = rng.integers(0, 256, (6, 9, 11, channels), dtype=np.uint8)
    grey = np.repeat(rng.integers(0, 240, (6, 9, 11, 1), dtype=np.uint8), channels, axis=3)
    grey[..., :3] += rng.integers(0, 9, grey[..., :3].shape, dtype=np.uint8) // 5  # JPEG-like
    for images, gray in ((colour, 0), (grey, 1)):
        stats = array_pixel_stats(images)
        assert stats == [pixel_stats(Image.fromarray(image)) for image in images]
        assert {g for _, g in stats} == {gray}


def test_single_channel_arrays_are_grayscale():
    images = np.stack([np.full((4, 5, 1), v, np.uint8) for v in (0, 15, 16, 255)])
    assert array_pixel_stats(images) == [(0, 1), (0, 1), (1, 1), (15, 1)]


def test_npz_examples_carry_their_pixel_stats(tmp_path):
    digits = _mnist_eval()[:20]
    path = tmp_path / "d.npz"
    np.savez(path, x_train=digits, y_train=np.arange(20) % 3)
    listing = arrays.list_npz(str(path))
    items = list(read_unit(listing.files[0], str(path), listing.classes,
                           PipelineConfig.from_values().ingest_options(), lambda relpath: "train"))
    assert [fact[4:] for _, _, fact, _ in items] == array_pixel_stats(digits)


@pytest.mark.parametrize("shape", [(28, 28), (28, 28, 1), (80, 66, 3), (66, 80, 1)])
def test_array_health_hashes_as_an_image_file_would(shape):
    pixels = np.random.default_rng(5).integers(0, 256, shape, dtype=np.uint8)
    relpath, content, phash = array_health("x.npz#3", pixels)
    image = Image.fromarray(pixels[..., 0] if pixels.ndim == 3 and pixels.shape[2] == 1
                            else pixels)
    assert (relpath, content) == ("x.npz#3", hashing.content_hash(pixels.tobytes()))
    assert phash == perceptual_hash(image)
    assert (phash is None) == (max(shape[:2]) <= hashing.SMALL_SIDE)
