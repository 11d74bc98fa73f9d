"""pixel_stats: brightness bucket and grayscale of decoded images, as ingestion records them."""
import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from components.image_example_gen.encoding import encode
from tests.support.paths import MNIST_PNG, REPO


def _decoded(image: Image.Image, fmt: str, **save) -> Image.Image:
    """The image as ingestion sees it: saved as `fmt`, then decoded fully."""
    buf = io.BytesIO()
    image.save(buf, format=fmt, **save)
    return encode.decode_fully(buf.getvalue(), 10**8)


def _noisy(colour, size=(96, 64), spread=20, seed=0) -> Image.Image:
    """An RGB image of `colour` with per-pixel noise of +-spread/2 on each channel."""
    rng = np.random.default_rng(seed)
    noise = rng.integers(-spread // 2, spread // 2 + 1, (size[1], size[0], 3))
    return Image.fromarray(np.clip(np.array(colour) + noise, 0, 255).astype(np.uint8))


def test_a_dark_colour_jpeg_is_in_a_low_bucket_and_not_grayscale():
    image = _decoded(_noisy((10, 20, 60)), "JPEG")  # luminance 0.299*10+0.587*20+0.114*60 = 21.6
    assert encode.pixel_stats(image) == (1, 0)


def test_a_bright_colour_jpeg_is_in_a_high_bucket_and_not_grayscale():
    image = _decoded(_noisy((250, 245, 190), spread=6), "JPEG")  # luminance 240.9
    assert encode.pixel_stats(image) == (15, 0)


def test_a_grey_photo_saved_as_rgb_jpeg_is_grayscale():
    digit = Image.open(min((MNIST_PNG / "3").iterdir()))  # a real digit, mode L
    as_rgb = _decoded(digit.convert("RGB").resize((280, 280)), "JPEG", quality=75)
    assert as_rgb.mode == "RGB"
    bucket, grayscale = encode.pixel_stats(as_rgb)
    assert grayscale == 1
    assert bucket == encode.pixel_stats(_decoded(digit.resize((280, 280)), "PNG"))[0]


def test_a_true_colour_image_is_not_grayscale():
    rng = np.random.default_rng(1)
    pixels = rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)
    assert encode.pixel_stats(_decoded(Image.fromarray(pixels), "PNG"))[1] == 0


def test_a_small_coloured_patch_survives_the_thumbnail():
    pixels = np.full((64, 64, 3), 128, np.uint8)
    pixels[:8, :8] = (255, 0, 0)  # 4 x 4 pixels of the 32 x 32 thumbnail
    assert encode.pixel_stats(Image.fromarray(pixels)) == (7, 0)


@pytest.mark.parametrize("size", [(1000, 700), (4000, 3000), (65, 64), (64, 65), (30, 20)])
def test_the_thumbnail_keeps_the_mean_of_any_size_of_image(size):
    rng = np.random.default_rng(2)
    pixels = rng.integers(0, 256, size[::-1], dtype=np.uint8) // 2 + 40  # mean ~103.5
    image = Image.fromarray(pixels)
    assert max(encode._thumbnail(image).size) <= encode.THUMBNAIL_SIDE
    assert encode.pixel_stats(image) == (int(pixels.mean() // 16), 1)


@pytest.mark.parametrize("mode, value, bucket", [
    ("I;16", 60000, 14),  # 16-bit: scaled from 0..65535, not clipped at 255
    ("I", 30000, 7),
    ("F", 0.5, 7),  # floats within 0..1 are scaled
    ("F", 200.0, 12),
    ("1", 1, 15),
])
def test_one_band_modes_are_grayscale_and_scaled_to_0_255(mode, value, bucket):
    assert encode.pixel_stats(Image.new(mode, (50, 40), value)) == (bucket, 1)


def test_a_16_bit_png_is_scaled_as_it_decodes():
    image = _decoded(Image.new("I;16", (20, 20), 65535), "PNG")
    assert encode.pixel_stats(image) == (15, 1)


@pytest.mark.parametrize("mode, fmt", [("P", "GIF"), ("CMYK", "JPEG"), ("RGBA", "PNG")])
def test_colour_modes_are_converted_before_measuring(mode, fmt):
    image = _decoded(Image.new("RGB", (30, 30), (200, 40, 40)).convert(mode), fmt)
    bucket, grayscale = encode.pixel_stats(image)
    assert grayscale == 0 and bucket == int((0.299 * 200 + 0.587 * 40 + 0.114 * 40) // 16)


@pytest.mark.parametrize("mode, colour", [("RGBA", (90, 90, 90, 0)), ("LA", (90, 0))])
def test_alpha_is_ignored(mode, colour):
    image = Image.new(mode, (300, 200), colour)  # transparent, and large enough to reduce
    assert encode.pixel_stats(image) == (5, 1)


def test_brightness_buckets_cover_0_to_255():
    assert [encode.brightness_bucket(v) for v in (0, 15.9, 16, 127.5, 255, 300, -1)] == [
        0, 0, 1, 7, 15, 15, 0]


def test_the_fact_of_an_encoded_image_ends_with_its_pixel_stats():
    buf = io.BytesIO()
    _noisy((10, 20, 60)).save(buf, format="JPEG")
    _, _, fact, _ = encode.encode_image(buf.getvalue(), "train", "c/a.jpg", 2, "c", 10**8)
    assert fact == ("train", 2, "c", "64x96x3", 1, 0)


def test_encoding_workers_measure_pixels_without_tensorflow_or_numpy():
    # Workers start once per core; TensorFlow would cost each of them seconds.
    code = ("import sys; from PIL import Image; "
            "from components.image_example_gen.encoding import encode_worker, encode; "
            "encode.pixel_stats(Image.new('RGB', (300, 200))); "
            "print(sorted({'tensorflow', 'numpy', 'apache_beam'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_each_example_carries_its_mean_luminance_as_a_float_feature():
    """StatisticsGen profiles image/brightness, which the DistributionValidator compares."""
    import tensorflow as tf
    image = Image.fromarray(np.full((40, 60), 200, np.uint8))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    _, record, fact, _ = encode.encode_image(buf.getvalue(), "train", "c/a.png", 0, "c", 10**8)
    feature = tf.train.Example.FromString(record).features.feature[encode.BRIGHTNESS_KEY]
    assert feature.float_list.value[0] == pytest.approx(200.0)
    assert fact[4] == encode.brightness_bucket(200.0) == 12
    assert encode.pixel_measures(image) == (pytest.approx(200.0), 1)


def test_without_a_brightness_the_example_has_no_such_feature():
    import tensorflow as tf
    _, record, _, _ = encode.encoded_example("train", b"x", "png", (2, 2, 1), "a", 0, "c", (0, 1))
    assert encode.BRIGHTNESS_KEY not in tf.train.Example.FromString(record).features.feature
