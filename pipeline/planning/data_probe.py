"""Read image sizes and channels from a sample of the data, before the DAG is built.

The model's input shape must be static (TPUs, TFLite and the exported
signatures need it), so it is fixed at pipeline construction. Arrays declare
their shape; for image files PIL reads only headers here, not pixels (in a
bucket, the first bytes of each sampled object, read in parallel).
"""
import collections
import dataclasses
import io
import random
from typing import Callable, Iterable, Optional

from PIL import Image

from components.image_example_gen.readers.folder_tree import DatasetError, Listing
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.manifests.manifest_paths import image_path
from core.storage import files

_GRAY_MODES = {"1", "L", "LA", "I", "I;16", "I;16B", "F"}
# Bytes read of each sampled object in a bucket: enough for the header of
# PNG, GIF, BMP and most JPEGs; a longer header falls back to the whole file.
HEAD_BYTES = 64 << 10


@dataclasses.dataclass(frozen=True)
class ImageSample:
    """What a sample of the images looks like: long sides in pixels, and channels."""

    side: int  # the most common long side
    side_median: int
    side_max: int
    channels: int  # what most images have: 1 or 3
    sampled: int


def _array_sample(listing: Listing) -> ImageSample:
    """Arrays declare their shape: HxW is grayscale, HxWxC has C channels."""
    shape = listing.files[0].image_shape
    channels = 1 if len(shape) == 2 or shape[-1] == 1 else 3
    side = max(shape[0], shape[1])
    return ImageSample(side, side, side, channels, sum(f.stop - f.start for f in listing.files))


def _summarize(openers: Iterable[Callable[[], Image.Image]], root: str) -> ImageSample:
    sides, channels, tried = collections.Counter(), collections.Counter(), 0
    for open_image in openers:
        tried += 1
        try:
            with open_image() as image:
                sides[max(image.size)] += 1
                channels[1 if image.mode in _GRAY_MODES else 3] += 1
        except (OSError, ValueError):
            continue
    if not sides:
        raise DatasetError(f"--data {root}: none of {tried} sampled images could be "
                           "opened; is this an image dataset?")
    ordered = sorted(sides.elements())
    return ImageSample(sides.most_common(1)[0][0], ordered[len(ordered) // 2], ordered[-1],
                       channels.most_common(1)[0][0], len(ordered))


def probe_images(root: str, listing: Listing, options: IngestOptions,
                 sample: int = 200, seed: int = 0) -> ImageSample:
    """Side and channel statistics of a sample of the images (headers only).

    The side is the larger of height and width, so non-square images are
    resized down rather than up on their long side. Unreadable files are
    skipped here: ingestion reports them properly.

    Raises:
      DatasetError: no sampled image could be opened.
    """
    if listing.format in ("idx", "npz"):
        return _array_sample(listing)
    if listing.format == "tfrecord":
        from components.image_example_gen.readers.tfrecords import sample_images  # imports TF
        blobs = sample_images(root, listing, options, sample)
        return _summarize([lambda b=b: Image.open(io.BytesIO(b)) for b in blobs], root)
    if listing.format in ("hf-parquet", "hf-disk", "tfds"):
        blobs = _foreign_sample(root, listing, sample, options)
        return _summarize([lambda b=b: Image.open(io.BytesIO(b)) for b in blobs], root)
    chosen = listing.files
    if len(chosen) > sample:
        chosen = random.Random(seed).sample(chosen, sample)
    paths = [image_path(root, f.relpath) for f in chosen]
    if not any(files.is_remote(p) for p in paths):  # PIL reads only a local file's header
        return _summarize([lambda p=p: Image.open(p) for p in paths], root)
    return _summarize([lambda p=p, h=h: _open_head(p, h)
                       for p, h in zip(paths, files.read_heads(paths, HEAD_BYTES))], root)


def _open_head(path: str, head: Optional[bytes]) -> Image.Image:
    """The image's header from its first bytes; the whole file if they were too few
    (a JPEG's size can follow a large EXIF block)."""
    if head is None:
        raise OSError(f"{path}: cannot be read")
    try:
        return Image.open(io.BytesIO(head))
    except (OSError, SyntaxError):
        if len(head) < HEAD_BYTES:
            raise
        return Image.open(io.BytesIO(files.read_bytes(path)))


def _foreign_sample(root: str, listing: Listing, sample: int, options: IngestOptions) -> list:
    """The first encoded images of a Hugging Face or TFDS dataset."""
    if listing.format == "tfds":
        from components.image_example_gen.readers.hub_datasets.tfds_folders import (
            sample_tfds_images)
        return sample_tfds_images(root, listing, sample)
    from components.image_example_gen.readers.hub_datasets.hf_rows import sample_hf_images
    return sample_hf_images(root, listing, sample, options)
