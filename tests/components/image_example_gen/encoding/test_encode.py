"""encode_image: full decode, lossless storage, recorded metadata."""
import functools
import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from components.image_example_gen.encoding import encode
from settings.config import DEFAULT_MAX_PIXELS

_encode = functools.partial(encode.encode_image, max_pixels=DEFAULT_MAX_PIXELS)


def _features(encoded):
    f = tf.train.Example.FromString(encoded[1]).features.feature
    return {k: getattr(v, v.WhichOneof("kind")).value[0] for k, v in f.items()}


@pytest.mark.parametrize("name, fmt", [("a.png", "PNG"), ("a.jpg", "JPEG")])
def test_png_and_jpeg_bytes_are_kept_as_they_are(tmp_path, make_image, name, fmt):
    data = make_image(tmp_path / name, size=(6, 4), fmt=fmt).read_bytes()
    got = _features(_encode(data, "train", "c/" + name, 2, "c"))
    assert got[encode.IMAGE_KEY] == data
    assert got[encode.FORMAT_KEY] == fmt.lower().replace("jpeg", "jpeg").encode()
    assert (got[encode.HEIGHT_KEY], got[encode.WIDTH_KEY]) == (4, 6)
    assert (got[encode.LABEL_KEY], got[encode.CLASS_TEXT_KEY]) == (2, b"c")
    assert got[encode.FILENAME_KEY] == ("c/" + name).encode()


@pytest.mark.parametrize("fmt", ["BMP", "GIF"])
def test_other_formats_are_reencoded_losslessly_as_png(tmp_path, make_image, fmt):
    path = make_image(tmp_path / f"a.{fmt.lower()}", mode="L", fmt=fmt)
    got = _features(_encode(path.read_bytes(), "train", "c/a", 0, "c"))
    assert got[encode.FORMAT_KEY] == b"png"
    stored = np.asarray(Image.open(io.BytesIO(got[encode.IMAGE_KEY])).convert("L"))
    np.testing.assert_array_equal(stored, np.asarray(Image.open(path).convert("L")))


@pytest.mark.parametrize("mode, fmt, channels", [
    ("L", "PNG", 1), ("RGB", "PNG", 3), ("RGBA", "PNG", 4), ("CMYK", "JPEG", 4),
    ("P", "PNG", 3), ("I;16", "PNG", 1)])
def test_channel_count_is_recorded(tmp_path, make_image, mode, fmt, channels):
    data = make_image(tmp_path / "a", mode=mode, fmt=fmt).read_bytes()
    got = _features(_encode(data, "train", "a", 0, "c"))
    assert got[encode.CHANNELS_KEY] == channels


@pytest.mark.parametrize("data, reason", [
    (b"", "empty file"),
    (b"hello, not an image", "cannot decode"),
])
def test_undecodable_bytes_raise_with_reason(data, reason):
    with pytest.raises(encode.BadImageError, match=reason):
        _encode(data, "train", "a", 0, "c")


def test_truncated_jpeg_is_rejected(tmp_path, make_image):
    data = make_image(tmp_path / "a.jpg", size=(64, 64), fmt="JPEG").read_bytes()
    with pytest.raises(encode.BadImageError):
        _encode(data[: len(data) // 2], "train", "a", 0, "c")


def _photo_jpeg(size=(800, 600), progressive=False) -> bytes:
    """A noisy RGB JPEG large enough to be decoded at a reduced DCT scale."""
    pixels = np.random.default_rng(0).integers(0, 256, (size[1], size[0], 3), np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=85, progressive=progressive)
    return buf.getvalue()


@pytest.mark.parametrize("progressive", [False, True])
def test_a_large_jpeg_is_decoded_scaled_but_recorded_at_full_size(progressive):
    data = _photo_jpeg(progressive=progressive)
    image, size = encode.decode_scaled(data, DEFAULT_MAX_PIXELS)
    assert size == (800, 600) and image.size == (200, 150)  # 1/8 would be 75 px high
    got = _features(_encode(data, "train", "c/a.jpg", 0, "c"))
    assert (got[encode.HEIGHT_KEY], got[encode.WIDTH_KEY]) == (600, 800)
    assert got[encode.IMAGE_KEY] == data


@pytest.mark.parametrize("mode, channels", [("L", 1), ("CMYK", 4)])
def test_grey_and_cmyk_jpegs_keep_their_mode_and_statistics_when_scaled(mode, channels):
    pixels = np.random.default_rng(1).integers(0, 256, (600, 800, 3), np.uint8) // 4 + 96
    buf = io.BytesIO()
    Image.fromarray(pixels).convert(mode).save(buf, format="JPEG", quality=90)
    image, size = encode.decode_scaled(buf.getvalue(), DEFAULT_MAX_PIXELS)
    assert (image.mode, image.size, size) == (mode, (200, 150), (800, 600))
    got = _features(_encode(buf.getvalue(), "train", "c/a.jpg", 0, "c"))
    assert got[encode.CHANNELS_KEY] == channels
    full = encode.decode_fully(buf.getvalue(), DEFAULT_MAX_PIXELS)
    assert encode.pixel_stats(image) == encode.pixel_stats(full)


@pytest.mark.parametrize("progressive", [False, True])
@pytest.mark.parametrize("kept", [0.5, 0.9, 0.99])
def test_a_truncated_jpeg_fails_even_when_decoded_scaled(progressive, kept):
    data = _photo_jpeg(progressive=progressive)
    with pytest.raises(encode.BadImageError, match="cannot decode"):
        _encode(data[:int(len(data) * kept)], "train", "a", 0, "c")


def _bomb_png(width, height):
    """A valid 1x1 PNG whose header claims width x height (a decompression bomb)."""
    import struct
    import zlib
    buf = io.BytesIO()
    Image.new("L", (1, 1)).save(buf, format="PNG")
    data = bytearray(buf.getvalue())
    ihdr = 8 + 4  # signature, chunk length
    data[ihdr + 4:ihdr + 12] = struct.pack(">II", width, height)
    crc = zlib.crc32(bytes(data[ihdr:ihdr + 17]))
    data[ihdr + 17:ihdr + 21] = struct.pack(">I", crc)
    return bytes(data)


@pytest.mark.parametrize("side", [12_000, 100_000])  # under and over PIL's own limit
def test_decompression_bomb_is_refused_from_its_header(side):
    with pytest.raises(encode.BadImageError, match="too large"):
        _encode(_bomb_png(side, side), "train", "a", 0, "c")


def test_pixel_limit_is_configurable(tmp_path, make_image):
    data = make_image(tmp_path / "a.png", size=(10, 10)).read_bytes()
    _encode(data, "train", "a", 0, "c", max_pixels=100)
    with pytest.raises(encode.BadImageError, match="over the limit of 99"):
        _encode(data, "train", "a", 0, "c", max_pixels=99)
