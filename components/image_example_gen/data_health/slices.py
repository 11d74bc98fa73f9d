"""The slice features each example carries, for per-slice evaluation (TFMA slices on them).

Size is the ORIGINAL image's longer side, before any resizing: small images
are where a model trained on large ones fails first. Buckets follow common
sources: thumbnails and MNIST-like data (<= 64 px), small web images
(<= 256), photos shrunk for the web (<= 1024), camera originals (> 1024).
"""
from typing import Dict, Optional

from core.contract import ASPECT_SLICE_KEY, COLOR_SLICE_KEY, GROUP_KEY, SIZE_SLICE_KEY

# (largest longer side, name) in increasing order; larger images are ">1024px".
SIZE_BUCKETS = ((64, "<=64px"), (256, "65-256px"), (1024, "257-1024px"))
LARGEST = ">1024px"
# An image is "square" when its sides differ by at most this share of the shorter.
SQUARE_TOLERANCE = 0.10


def size_slice(height: int, width: int) -> str:
    """The size bucket of an image's longer side."""
    side = max(height, width)
    return next((name for top, name in SIZE_BUCKETS if side <= top), LARGEST)


def aspect_slice(height: int, width: int) -> str:
    """"portrait", "square" or "landscape"."""
    if abs(width - height) <= SQUARE_TOLERANCE * min(width, height):
        return "square"
    return "portrait" if height > width else "landscape"


def slice_features(height: int, width: int, grayscale: int,
                   group: Optional[str] = None) -> Dict[str, bytes]:
    """Slice features of one example; the group only when it has one (--groups)."""
    features = {SIZE_SLICE_KEY: size_slice(height, width).encode(),
                COLOR_SLICE_KEY: b"grayscale" if grayscale else b"colour",
                ASPECT_SLICE_KEY: aspect_slice(height, width).encode()}
    if group:
        features[GROUP_KEY] = group.encode("utf-8")
    return features
