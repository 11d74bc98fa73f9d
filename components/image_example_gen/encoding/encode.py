"""Turn one image file's bytes into a validated `tf.train.Example`.

Every image is decoded fully once here (not just its header), so a truncated
or corrupt file is caught at ingestion, with its path, instead of crashing
Transform or training hours later. This module runs in ingestion's worker
processes, so it must not import TensorFlow (see example_wire.py).
"""
import io
import os
import warnings
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from PIL import Image, UnidentifiedImageError

from components.image_example_gen.encoding.example_wire import serialize_example
from components.contract import (CHANNELS_KEY, CLASS_TEXT_KEY, FILENAME_KEY, FORMAT_KEY,
                                 HEIGHT_KEY, IMAGE_KEY, LABEL_KEY, SPLITS, WIDTH_KEY)
from components.image_example_gen.options import split_index

# Formats kept byte-for-byte; anything else is re-encoded losslessly as PNG,
# because tf.io.decode_image cannot be trusted on every BMP/GIF variant.
_KEPT_FORMATS = {"JPEG": "jpeg", "PNG": "png"}
_CHANNELS_BY_MODE = {"1": 1, "L": 1, "P": 3, "I": 1, "I;16": 1, "I;16B": 1, "F": 1,
                     "LA": 2, "RGB": 3, "YCbCr": 3, "RGBA": 4, "CMYK": 4, "PA": 4}


class BadImageError(ValueError):
    """An image file that cannot be decoded; the message says why."""


def decode_fully(data: bytes, max_pixels: int) -> Image.Image:
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
    except UnidentifiedImageError:  # its message names a BytesIO object's address
        raise BadImageError("cannot decode: not an image format PIL recognises") from None
    except Image.DecompressionBombError as e:  # PIL's own limit, hit inside open()
        raise BadImageError(f"too large: {e} (--max-pixels {max_pixels})") from None
    except Exception as e:  # PIL raises many types for corrupt data.
        raise BadImageError(f"cannot decode: {e}") from None
    return image


def stored_encoding(image: Image.Image, data: bytes) -> Tuple[bytes, str]:
    """The bytes to store and their format: the original JPEG/PNG, else lossless PNG."""
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


def channels_of(image: Image.Image) -> int:
    """The channel count recorded as image/channels (Transform converts to the model's)."""
    return _CHANNELS_BY_MODE.get(image.mode, 3)


# (split, label, class text, "HxWxC") of one written example: what the ingest
# report counts.
Fact = Tuple[str, int, str, str]
# What encoding yields per input: a skipped record {"path", "reason"}, or
# (split, serialized tf.Example, fact).
Encoded = Union[dict, Tuple[str, bytes, Fact]]


def encoded_example(split: str, encoded: bytes, fmt: str, shape: Tuple[int, int, int],
                    relpath: str, label: int, class_name: str) -> Encoded:
    """(split, serialized example, fact) from validated bytes and their (height, width, channels)."""
    height, width, channels = shape
    record = serialize_example({
        IMAGE_KEY: encoded,
        FORMAT_KEY: fmt.encode(),
        HEIGHT_KEY: height,
        WIDTH_KEY: width,
        CHANNELS_KEY: channels,
        LABEL_KEY: label,
        CLASS_TEXT_KEY: class_name.encode("utf-8"),
        FILENAME_KEY: relpath.encode("utf-8"),
    })
    return split, record, (split, label, class_name, f"{height}x{width}x{channels}")


def encode_image(data: bytes, split: str, relpath: str, label: int, class_name: str,
                 max_pixels: int) -> Encoded:
    """Decodes one image fully and returns (split, serialized example, fact).

    Args:
      data: the file's bytes.
      split: the split it goes to.
      relpath: path relative to the dataset root, stored as `image/filename`.
      label: 0-based class id.
      class_name: the class's name, stored as `image/class/text`.
      max_pixels: images with more pixels are refused.

    Raises:
      BadImageError: the bytes are not a decodable image, or too large.
    """
    image = decode_fully(data, max_pixels)
    encoded, fmt = stored_encoding(image, data)
    width, height = image.size
    return encoded_example(split, encoded, fmt, (height, width, channels_of(image)),
                           relpath, label, class_name)


class FileJob(NamedTuple):
    """One image file to encode: its bytes, a local path to read them from, or an error."""

    relpath: str
    label: int
    class_name: str
    split: str
    data: Optional[bytes] = None
    error: str = ""
    path: str = ""


def local_file_job(root: str, relpath: str, label: int, split: Optional[str],
                   classes: List[str], buckets: Sequence[int]) -> FileJob:
    """The job for a local image file, read by whoever encodes it.

    `split` None means "hash the path into a split" (options.split_index).
    """
    return FileJob(relpath, label, classes[label], split or SPLITS[split_index(relpath, buckets)],
                   path=os.path.join(root, relpath))


def _job_bytes(job: FileJob) -> bytes:
    """The job's bytes; raises OSError if its file cannot be read."""
    if job.data is not None:
        return job.data
    if job.error:
        raise OSError(job.error)
    with open(job.path, "rb") as f:
        return f.read()


def encode_files(jobs: Iterable[FileJob], max_pixels: int) -> Iterator[Encoded]:
    """Decodes and encodes files, in order; a bad file becomes a skipped record."""
    for job in jobs:
        try:
            yield encode_image(_job_bytes(job), job.split, job.relpath, job.label,
                               job.class_name, max_pixels)
        except (BadImageError, OSError) as e:
            yield {"path": job.relpath, "reason": str(e)}
