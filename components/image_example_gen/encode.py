"""Turn one image file's bytes into a validated `tf.train.Example`.

Every image is decoded fully once here (not just its header), so a truncated
or corrupt file is caught at ingestion, with its path, instead of crashing
Transform or training hours later.
"""
import io
import warnings
from typing import Tuple

import tensorflow as tf
from PIL import Image

from components.image_example_gen.options import DEFAULT_MAX_PIXELS

# Keys of the output examples: the tensorflow/tpu convention, 0-based labels.
IMAGE_KEY = "image/encoded"
FORMAT_KEY = "image/format"
HEIGHT_KEY = "image/height"
WIDTH_KEY = "image/width"
CHANNELS_KEY = "image/channels"
LABEL_KEY = "image/class/label"
CLASS_TEXT_KEY = "image/class/text"
FILENAME_KEY = "image/filename"

# Formats kept byte-for-byte; anything else is re-encoded losslessly as PNG,
# because tf.io.decode_image cannot be trusted on every BMP/GIF variant.
_KEPT_FORMATS = {"JPEG": "jpeg", "PNG": "png"}
_CHANNELS_BY_MODE = {"1": 1, "L": 1, "P": 3, "I": 1, "I;16": 1, "I;16B": 1, "F": 1,
                     "LA": 2, "RGB": 3, "YCbCr": 3, "RGBA": 4, "CMYK": 4, "PA": 4}


class BadImageError(ValueError):
    """An image file that cannot be decoded; the message says why."""


def decode_fully(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Decodes every pixel of `data`, raising BadImageError if that fails.

    The pixel count is checked from the header, before any pixel is decoded:
    a tiny PNG can declare 100,000 x 100,000 pixels (a decompression bomb).
    """
    if not data:
        raise BadImageError("empty file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            width, height = image.size
            if width * height > max_pixels:
                raise BadImageError(f"too large: {width}x{height} pixels is over the "
                                    f"limit of {max_pixels} (--max-pixels)")
            image.load()
    except BadImageError:
        raise
    except Image.DecompressionBombError as e:  # PIL's own limit, hit inside open()
        raise BadImageError(f"too large: {e} (--max-pixels {max_pixels})") from None
    except Exception as e:  # PIL raises many types for corrupt data.
        raise BadImageError(f"cannot decode: {e}") from None
    return image


def _encoded(image: Image.Image, data: bytes) -> Tuple[bytes, str]:
    """The bytes to store and their format: the original JPEG/PNG, else PNG."""
    kept = _KEPT_FORMATS.get(image.format or "")
    if kept:
        return data, kept
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    elif image.mode not in ("L", "RGB", "RGBA", "I;16"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue(), "png"


def _bytes(value: bytes) -> tf.train.Feature:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _int(value: int) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def make_example(encoded: bytes, fmt: str, shape: Tuple[int, int, int], relpath: str,
                 label: int, class_name: str) -> tf.train.Example:
    """The output example from already validated bytes and their (height, width, channels)."""
    height, width, channels = shape
    feature = {
        IMAGE_KEY: _bytes(encoded),
        FORMAT_KEY: _bytes(fmt.encode()),
        HEIGHT_KEY: _int(height),
        WIDTH_KEY: _int(width),
        CHANNELS_KEY: _int(channels),
        LABEL_KEY: _int(label),
        CLASS_TEXT_KEY: _bytes(class_name.encode("utf-8")),
        FILENAME_KEY: _bytes(relpath.encode("utf-8")),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))


def image_to_example(data: bytes, relpath: str, label: int, class_name: str,
                     max_pixels: int = DEFAULT_MAX_PIXELS) -> tf.train.Example:
    """Builds the example for one image file, after decoding it fully.

    Args:
      data: the file's bytes.
      relpath: path relative to the dataset root, stored as `image/filename`
        and used to hash the example into a split.
      label: 0-based class id.
      class_name: the class's name, stored as `image/class/text`.
      max_pixels: images with more pixels are refused.

    Raises:
      BadImageError: the bytes are not a decodable image, or too large.
    """
    image = decode_fully(data, max_pixels)
    encoded, fmt = _encoded(image, data)
    width, height = image.size
    shape = (height, width, _CHANNELS_BY_MODE.get(image.mode, 3))
    return make_example(encoded, fmt, shape, relpath, label, class_name)
