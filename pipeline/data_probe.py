"""Pick the default image size and channels from the data, before the DAG is built.

The model's input shape must be static (TPUs, TFLite and the exported
signatures need it), so it is fixed at pipeline construction. Arrays declare
their shape; for image files PIL reads only headers here, not pixels.
"""
import collections
import io
import os
import random
from typing import Callable, Iterable, Tuple

from PIL import Image

from components.image_example_gen.folder_tree import DatasetError, Listing
from components.image_example_gen.options import IngestOptions

_GRAY_MODES = {"1", "L", "LA", "I", "I;16", "I;16B", "F"}


def _array_shape(listing: Listing) -> Tuple[int, int]:
    """Arrays declare their shape: HxW is grayscale, HxWxC has C channels."""
    shape = listing.files[0].image_shape
    channels = 1 if len(shape) == 2 or shape[-1] == 1 else 3
    return max(shape[0], shape[1]), channels


def _most_common(openers: Iterable[Callable[[], Image.Image]], root: str) -> Tuple[int, int]:
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
    return sides.most_common(1)[0][0], channels.most_common(1)[0][0]


def probe_shape(root: str, listing: Listing, options: IngestOptions = IngestOptions(),
                sample: int = 200, seed: int = 0) -> Tuple[int, int]:
    """(image_size, channels): the most common side and channel count in a sample.

    The side is the larger of height and width, so non-square images are
    resized down rather than up on their long side. Unreadable files are
    skipped here: ingestion reports them properly.

    Raises:
      DatasetError: no sampled image could be opened.
    """
    if listing.format in ("idx", "npz"):
        return _array_shape(listing)
    if listing.format == "tfrecord":
        from components.image_example_gen.tfrecords import sample_images  # imports TF
        blobs = sample_images(root, listing, options, sample)
        return _most_common([lambda b=b: Image.open(io.BytesIO(b)) for b in blobs], root)
    files = listing.files
    if len(files) > sample:
        files = random.Random(seed).sample(files, sample)
    return _most_common([lambda f=f: Image.open(os.path.join(root, f.relpath)) for f in files],
                        root)
