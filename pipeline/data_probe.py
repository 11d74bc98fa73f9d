"""Pick the default image size and channels from the data, before the DAG is built.

The model's input shape must be static (TPUs, TFLite and the exported
signatures need it), so it is fixed at pipeline construction from a sample of
image headers; PIL reads only the header here, not the pixels.
"""
import collections
import os
import random
from typing import Tuple

from PIL import Image

from components.image_example_gen.folder_tree import DatasetError, Listing

_GRAY_MODES = {"1", "L", "LA", "I", "I;16", "I;16B", "F"}


def probe_shape(root: str, listing: Listing, sample: int = 200, seed: int = 0) -> Tuple[int, int]:
    """(image_size, channels): the most common side and channel count in a sample.

    The side is the larger of height and width, so non-square images are
    resized down rather than up on their long side. Unreadable files are
    skipped here: ingestion reports them properly.

    Raises:
      DatasetError: no sampled file could be opened as an image.
    """
    files = listing.files
    if len(files) > sample:
        files = random.Random(seed).sample(files, sample)
    sides, channels = collections.Counter(), collections.Counter()
    for item in files:
        try:
            with Image.open(os.path.join(root, item.relpath)) as image:
                sides[max(image.size)] += 1
                channels[1 if image.mode in _GRAY_MODES else 3] += 1
        except (OSError, ValueError):
            continue
    if not sides:
        raise DatasetError(f"--data {root}: none of {len(files)} sampled images could be "
                           "opened; is this an image dataset?")
    return sides.most_common(1)[0][0], channels.most_common(1)[0][0]
