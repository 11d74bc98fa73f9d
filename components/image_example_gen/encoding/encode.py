"""Turn one image file's bytes into a validated `tf.train.Example`.

Every image is decoded fully once here (not just its header), so a truncated
or corrupt file is caught at ingestion, with its path, instead of crashing
Transform or training hours later. The decoded image also gives the pixel
statistics that drift detection compares between spans (`pixel_measures`): the
ingest report counts them, and each example carries its mean luminance
(BRIGHTNESS_KEY) and grayscale slice for StatisticsGen to profile. A
JPEG is decoded at a reduced scale (`decode_scaled`): the file is still read
to its end, and the stored bytes are the original's. This
module runs in ingestion's worker processes, so it must not import TensorFlow
(see example_wire.py). The same pass takes the data-health hashes
(components/image_example_gen/data_health/hashing.py): the bytes' content hash, and a
perceptual hash of the decoded pixels.
"""
import io
import warnings
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from PIL import Image, ImageChops, UnidentifiedImageError

from components.image_example_gen.data_health import hashing
from components.image_example_gen.data_health.slices import slice_features
from components.image_example_gen.encoding.example_wire import serialize_example
from core.contract import (BRIGHTNESS_KEY, CHANNELS_KEY, CLASS_TEXT_KEY,
                           FILENAME_KEY, FORMAT_KEY, HEIGHT_KEY, IMAGE_KEY,
                           LABEL_KEY, SPLITS, WIDTH_KEY)
from components.image_example_gen.options import split_index
from components.image_example_gen.readers.manifests.manifest_paths import image_path

# Formats kept byte-for-byte; anything else is re-encoded losslessly as PNG,
# because tf.io.decode_image cannot be trusted on every BMP/GIF variant.
_KEPT_FORMATS = {"JPEG": "jpeg", "PNG": "png"}
_CHANNELS_BY_MODE = {"1": 1, "L": 1, "P": 3, "I": 1, "I;16": 1, "I;16B": 1, "F": 1,
                     "LA": 2, "RGB": 3, "YCbCr": 3, "RGBA": 4, "CMYK": 4, "PA": 4}

# Pixel statistics (`pixel_stats`) are taken on a thumbnail of at most this
# side (`_thumbnail`).
THUMBNAIL_SIDE = 32
# The brightness histogram: mean luminance 0..255 in buckets of 16 levels.
BRIGHTNESS_BUCKETS = 16
BUCKET_WIDTH = 256 // BRIGHTNESS_BUCKETS
# Ingestion decodes a JPEG at the smallest of libjpeg's DCT scales (1/2, 1/4,
# 1/8) that keeps both sides at least this many pixels (`decode_scaled`):
# decoding, pixel statistics and the perceptual hash all get cheaper, and the
# image stays well above what they reduce it to (the 64 px grid of
# `_thumbnail`, the hash's 9 x 8 cells). Smaller scales moved resized copies'
# hashes too far (docs/data_health.md).
DECODE_SIDE = 96
# What the pixel statistics and perceptual hashes are computed on, derived from
# DECODE_SIDE so that changing it changes this. Part of each span-store entry's
# key (span_store.entry_key): spans ingested under another basis are ingested
# again rather than compared with these (drift, leakage).
PIXEL_BASIS = f"jpeg-dct-scaled-{DECODE_SIDE}"
# How far apart a grey image's colour channels may be on the thumbnail (0..255).
GRAY_TOLERANCE = 8
# Modes converted before the thumbnail is averaged: those Image.reduce refuses,
# and those with alpha, which reduce would weigh pixels by (alpha does not count).
_CONVERTED_FIRST = {"1": "L", "P": "RGB", "I;16": "I", "I;16B": "I", "I;16L": "I", "I;16N": "I",
                    "LA": "L", "La": "L", "PA": "RGB", "RGBA": "RGB", "RGBa": "RGB"}


class BadImageError(ValueError):
    """An image file that cannot be decoded; the message says why."""


def decode_fully(data: bytes, max_pixels: int) -> Image.Image:
    """Decodes every pixel of `data`, raising BadImageError if that fails.

    The pixel count is checked from the header, before any pixel is decoded:
    a tiny PNG can declare 100,000 x 100,000 pixels (a decompression bomb).
    """
    return _decode(data, max_pixels, scaled=False)[0]


def decode_scaled(data: bytes, max_pixels: int) -> Tuple[Image.Image, Tuple[int, int]]:
    """(image, its full (width, height)): `decode_fully`, but a JPEG at DECODE_SIDE.

    libjpeg's scaled decoding still decodes every coefficient of the file (a
    truncated or corrupt JPEG fails as in a full decode; tested); only the
    inverse DCT is smaller, its 1/n output close to each n x n block's average.
    """
    return _decode(data, max_pixels, scaled=True)


def _decode(data: bytes, max_pixels: int, scaled: bool) -> Tuple[Image.Image, Tuple[int, int]]:
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
            if scaled and image.format == "JPEG":
                image.draft(image.mode, (DECODE_SIDE, DECODE_SIDE))
            image.load()
    except BadImageError:
        raise
    except UnidentifiedImageError:  # its message names a BytesIO object's address
        raise BadImageError("cannot decode: not an image format PIL recognises") from None
    except Image.DecompressionBombError as e:  # PIL's own limit, hit inside open()
        raise BadImageError(f"too large: {e} (--max-pixels {max_pixels})") from None
    except Exception as e:  # PIL raises many types for corrupt data.
        raise BadImageError(f"cannot decode: {e}") from None
    return image, (width, height)


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


# (split, label, class text, "HxWxC", brightness bucket 0..15, grayscale 0 or 1)
# of one written example: what the ingest report counts. The last two are
# `pixel_stats`; a tuple, so that Beam can count facts as keys.
Fact = Tuple[str, int, str, str, int, int]
# (relpath, content hash, perceptual hash or None) of one image:
# components/image_example_gen/data_health/.
Health = Tuple[str, str, Optional[int]]
# What encoding yields per input: a skipped record {"path", "reason"}, or
# (split, serialized tf.Example, fact, health or None when hashing is off).
Encoded = Union[dict, Tuple[str, bytes, Fact, Optional[Health]]]


def _thumbnail(image: Image.Image) -> Image.Image:
    """At most THUMBNAIL_SIDE pixels a side: a grid sample at twice that, averaged 2 x 2.

    Sampling (nearest neighbour) costs the same for any image size, where
    averaging every pixel cost a third of a small photo's decode; the 2 x 2
    average hides the chroma noise JPEG leaves on grey photos saved as RGB.
    """
    width, height = image.size
    step = -(-max(width, height) // (2 * THUMBNAIL_SIDE))
    if step > 1:
        image = image.resize((-(-width // step), -(-height // step)), Image.NEAREST)
    if image.mode in _CONVERTED_FIRST:
        image = image.convert(_CONVERTED_FIRST[image.mode])
    return image.reduce(2) if max(image.size) > THUMBNAIL_SIDE else image


def _to_8bit(thumb: Image.Image) -> Image.Image:
    """The thumbnail as L (one colour band) or RGB, values 0..255.

    convert("L") clips 16-bit and float values instead of scaling them: I
    (16-bit PNGs) is scaled from 0..65535, and F from 0..1 when its values
    stay within it (else they are taken as 0..255).
    """
    if thumb.mode in ("I", "F"):
        top = thumb.getextrema()[1]
        scale = 255 / 65535 if thumb.mode == "I" else (255.0 if top <= 1.0 else 1.0)
        return thumb.point(lambda value: value * scale).convert("L")
    return thumb if thumb.mode in ("L", "RGB") else thumb.convert("RGB")


def brightness_bucket(mean_luminance: float) -> int:
    """The brightness histogram's bucket (0..15) of a mean luminance in 0..255."""
    return min(BRIGHTNESS_BUCKETS - 1, max(0, int(mean_luminance // BUCKET_WIDTH)))


def pixel_measures(image: Image.Image) -> Tuple[float, int]:
    """(mean luminance 0..255, grayscale) of a decoded image, from a small thumbnail.

    The luminance is the thumbnail's mean (ITU-R 601, PIL's "L"). Grayscale is
    1 for a one-band image or one whose colour channels differ by at most
    GRAY_TOLERANCE everywhere on the thumbnail, else 0. Alpha is ignored.
    """
    pixels = _to_8bit(_thumbnail(image))
    # Box-averaged to one float pixel: the thumbnail's exact mean, at a third
    # of ImageStat's cost (which sums a histogram in Python).
    luminance = pixels.convert("F").reduce(pixels.size).getpixel((0, 0))
    return float(luminance), int(pixels.mode == "L" or _channels_agree(pixels))


def pixel_stats(image: Image.Image) -> Tuple[int, int]:
    """(brightness bucket, grayscale): `pixel_measures`, the luminance bucketed by
    `brightness_bucket` as the ingest report counts it."""
    luminance, grayscale = pixel_measures(image)
    return brightness_bucket(luminance), grayscale


def _channels_agree(rgb: Image.Image) -> bool:
    """Whether no pixel's channels differ by more than GRAY_TOLERANCE.

    Colour images usually fail on the first pair, so the others are skipped.
    """
    bands = rgb.split()
    return all(ImageChops.difference(bands[a], bands[b]).getextrema()[1] <= GRAY_TOLERANCE
               for a, b in ((0, 1), (1, 2), (0, 2)))


def encoded_example(split: str, encoded: bytes, fmt: str, shape: Tuple[int, int, int],
                    relpath: str, label: int, class_name: str,
                    pixels: Tuple[int, int], group: Optional[str] = None,
                    health: Optional[Health] = None,
                    brightness: Optional[float] = None) -> Encoded:
    """(split, serialized example, fact, health) from validated bytes.

    `shape` is (height, width, channels); `pixels` is `pixel_stats`'
    (brightness bucket, grayscale); `group` is the --groups group, if any;
    `brightness` the mean luminance (`pixel_measures`), stored as BRIGHTNESS_KEY
    when given. The example carries the slice features
    (components/image_example_gen/data_health/slices.py).
    """
    height, width, channels = shape
    extra = {} if brightness is None else {BRIGHTNESS_KEY: float(brightness)}
    record = serialize_example({
        **slice_features(height, width, pixels[1], group), **extra,
        IMAGE_KEY: encoded,
        FORMAT_KEY: fmt.encode(),
        HEIGHT_KEY: height,
        WIDTH_KEY: width,
        CHANNELS_KEY: channels,
        LABEL_KEY: label,
        CLASS_TEXT_KEY: class_name.encode("utf-8"),
        FILENAME_KEY: relpath.encode("utf-8"),
    })
    return (split, record, (split, label, class_name, f"{height}x{width}x{channels}", *pixels),
            health)


def encode_image(data: bytes, split: str, relpath: str, label: int, class_name: str,
                 max_pixels: int, group: Optional[str] = None,
                 hashes: bool = True) -> Encoded:
    """Decodes one image fully and returns (split, serialized example, fact, health).

    Args:
      data: the file's bytes.
      split: the split it goes to.
      relpath: path relative to the dataset root, stored as `image/filename`.
      label: 0-based class id.
      class_name: the class's name, stored as `image/class/text`.
      max_pixels: images with more pixels are refused.
      group: its --groups group, or None.
      hashes: take the data-health hashes (health is None without).

    Raises:
      BadImageError: the bytes are not a decodable image, or too large.
    """
    image, (width, height) = decode_scaled(data, max_pixels)
    encoded, fmt = stored_encoding(image, data)
    health = ((relpath, hashing.content_hash(data), perceptual_hash(image, (width, height)))
              if hashes else None)
    luminance, grayscale = pixel_measures(image)
    return encoded_example(split, encoded, fmt, (height, width, channels_of(image)),
                           relpath, label, class_name, (brightness_bucket(luminance), grayscale),
                           group, health, brightness=luminance)


def image_hashes(data: bytes, max_pixels: int) -> Tuple[str, Optional[int]]:
    """(content hash, perceptual hash) of an image file, decoded as encode_image does.

    `imagepipe inspect`'s path: the same hashes, no example.
    """
    image, size = decode_scaled(data, max_pixels)
    return hashing.content_hash(data), perceptual_hash(image, size)


# Modes PIL cannot box-resize, converted first (full size, but rare: 1-bit,
# palette and 16-bit images).
_UNRESIZABLE = {"1", "P", "I;16", "I;16B", "I;16L", "I;16N"}


def perceptual_hash(image: Image.Image, size: Optional[Tuple[int, int]] = None) -> Optional[int]:
    """hashing.perceptual_hash of any decoded image; 16-bit and float scaled as pixel_stats.

    None for an image of at most hashing.SMALL_SIDE pixels a side, judged on
    `size`, the file's own (width, height), when it was decoded scaled.
    """
    if not hashing.gets_perceptual_hash(size or image.size):
        return None
    if image.mode in _UNRESIZABLE:
        image = image.convert(_CONVERTED_FIRST[image.mode])
    if image.mode in ("I", "F"):  # scaled to 8 bits after the resize (cheap on 9 x 8)
        image = _to_8bit(image.resize((hashing.HASH_SIDE + 1, hashing.HASH_SIDE), Image.BOX))
    return hashing.perceptual_hash(image)


class FileJob(NamedTuple):
    """One image file to encode: its bytes, a local path to read them from, or an error."""

    relpath: str
    label: int
    class_name: str
    split: str
    data: Optional[bytes] = None
    error: str = ""
    path: str = ""
    group: Optional[str] = None


def local_file_job(root: str, relpath: str, label: int, split: Optional[str],
                   classes: List[str], buckets: Sequence[int]) -> FileJob:
    """The job for an image file, read by whoever encodes it (a remote one: see
    readers/units.py read_file_job).

    `root` is the dataset's folder or manifest file; `relpath` is relative to that folder,
    or an absolute path or URI (a manifest's, readers/manifests/manifest_paths.py image_path).
    `split` None means "hash the path into a split" (options.split_index).
    """
    return FileJob(relpath, label, classes[label], split or SPLITS[split_index(relpath, buckets)],
                   path=image_path(root, relpath))


def _job_bytes(job: FileJob) -> bytes:
    """The job's bytes; raises OSError if its file cannot be read."""
    if job.data is not None:
        return job.data
    if job.error:
        raise OSError(job.error)
    with open(job.path, "rb") as f:
        return f.read()


def encode_files(jobs: Iterable[FileJob], max_pixels: int,
                 hashes: bool = True) -> Iterator[Encoded]:
    """Decodes and encodes files, in order; a bad file becomes a skipped record."""
    for job in jobs:
        try:
            yield encode_image(_job_bytes(job), job.split, job.relpath, job.label,
                               job.class_name, max_pixels, job.group, hashes)
        except (BadImageError, OSError) as e:
            yield {"path": job.relpath, "reason": str(e)}


def hash_files(jobs: Iterable[FileJob], max_pixels: int) -> Iterator[Union[dict, list]]:
    """[relpath, content hash, perceptual hash, split, class name] per file, in order;
    a bad file becomes a skipped record. Decodes as encode_files does, writes nothing."""
    for job in jobs:
        try:
            yield [job.relpath, *image_hashes(_job_bytes(job), max_pixels), job.split,
                   job.class_name]
        except (BadImageError, OSError) as e:
            yield {"path": job.relpath, "reason": str(e)}
