"""The two hashes of each image: its bytes' (exact copies) and its pixels' (near copies).

Runs in ingestion's encoding workers, so it imports PIL and hashlib only
(no TensorFlow, see components/image_example_gen/encoding/encode.py).
"""
import hashlib
import operator
from typing import Optional, Tuple

from PIL import Image

# Switched off only by bench/ingestion/data_health_cost.py, to time ingestion without the checks.
ENABLED = True
# blake2b digest size of the content hash: 128 bits, so that two different
# files never share one in any dataset (the birthday bound is ~10^19 files).
CONTENT_BYTES = 16
# dHash on a (HASH_SIDE + 1) x HASH_SIDE grey grid: HASH_SIDE^2 = 64 bits, one
# per pair of horizontal neighbours (is the right one brighter?).
HASH_SIDE = 8
HASH_BITS = HASH_SIDE * HASH_SIDE
# Images whose longer side is at most this get no perceptual hash, so no near
# matches (exact ones still): on a 28 px item 9 x 8 cells are its silhouette,
# and distinct garments of one kind matched (Fashion-MNIST: 57% of the test
# set "near" the train set; docs/data_health.md).
SMALL_SIDE = 64
_DIGITS = bytes.maketrans(b"\x00\x01", b"01")


def gets_perceptual_hash(size: Tuple[int, int]) -> bool:
    """Whether an image of this (width, height) gets a perceptual hash (SMALL_SIDE)."""
    return max(size) > SMALL_SIDE


def content_hash(data: bytes) -> str:
    """Hex blake2b digest of a file's bytes (or an array image's raw pixels)."""
    return hashlib.blake2b(data, digest_size=CONTENT_BYTES).hexdigest()


def perceptual_hash(image: Image.Image) -> int:
    """64-bit difference hash (dHash) of a decoded 8-bit image, as an int.

    Small images are left out by its callers (gets_perceptual_hash).

    One band (L; other modes are converted to L) is box-averaged to 9 x 8
    cells in one step: every pixel counts. Measured on photos
    (docs/data_health.md): re-encoding or resizing a photo then moves the
    hash by 0-5 bits; reducing by an integer factor first, or sampling a grid
    (as pixel_stats' thumbnail does) was cheaper and moved resized copies by
    up to 16.
    """
    # On the pixel cores (Image.im), not Image objects: on a photo decoded small, the
    # Image each step makes and tobytes' encoder cost about as much as the steps
    # (docs/data_health.md#cost). The values are the same. Modes other than L and RGB
    # take Image.convert, which routes some (CMYK) through RGB itself.
    image.load()  # an image only opened has no core yet
    grey = (image.im if image.mode == "L" else image.im.convert("L") if image.mode == "RGB"
            else image.convert("L").im)
    size = (HASH_SIDE + 1, HASH_SIDE)
    if image.size != size:
        grey = grey.resize(size, Image.BOX, (0, 0, *image.size))
    cells = bytes(grey)
    # Each cell against its right neighbour, as "0"/"1" digits; the comparisons
    # across a row's end are dropped (bytes and int() work in C, not a Python loop).
    digits = bytes(map(operator.lt, cells, cells[1:])).translate(_DIGITS)
    return int(b"".join(digits[row:row + HASH_SIDE]
                        for row in range(0, len(cells), HASH_SIDE + 1)), 2)


def hamming(a: int, b: int) -> int:
    """How many bits two hashes differ in."""
    return (a ^ b).bit_count()


def hash_hex(value: Optional[int]) -> str:
    """A perceptual hash as 16 hex digits ("-" for none), for hashes.tsv."""
    return "-" if value is None else f"{value:016x}"


def hash_from_hex(text: str) -> Optional[int]:
    """hash_hex's inverse."""
    return None if text == "-" else int(text, 16)
