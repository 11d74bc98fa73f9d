"""hashing: content hashes tell files apart; perceptual hashes survive re-encoding and resizing."""
import io

import numpy as np
from PIL import Image

from components.image_example_gen.data_health import hashing
from components.image_example_gen.encoding import encode


def _photo(seed: int, size=(120, 90)) -> Image.Image:
    coarse = np.random.default_rng(seed).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize(size, Image.BICUBIC)


def _jpeg(image: Image.Image, quality: int = 90) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def _phash(data: bytes) -> int:
    return encode.image_hashes(data, 10**8)[1]


def test_content_hash_is_the_bytes_and_nothing_else():
    data = _jpeg(_photo(1))
    assert hashing.content_hash(data) == hashing.content_hash(bytes(data))
    assert hashing.content_hash(data) != hashing.content_hash(data + b"\0")
    assert len(hashing.content_hash(data)) == 2 * hashing.CONTENT_BYTES


def test_reencoded_and_resized_copies_stay_near():
    image = _photo(2)
    original = _phash(_jpeg(image))
    assert hashing.hamming(original, _phash(_jpeg(image, quality=60))) <= 4
    assert hashing.hamming(original, _phash(_jpeg(image.resize((72, 54))))) <= 4


def test_different_images_are_far_apart():
    hashes = [_phash(_jpeg(_photo(seed))) for seed in range(20)]
    distances = [hashing.hamming(a, b) for i, a in enumerate(hashes) for b in hashes[i + 1:]]
    assert min(distances) > 8


def test_every_mode_hashes_and_flat_images_hash_to_zero():
    for mode in ("1", "P", "L", "LA", "RGB", "RGBA", "I;16", "I", "F", "CMYK"):
        assert encode.perceptual_hash(Image.new(mode, (80, 30))) == 0
    assert hashing.hash_from_hex(hashing.hash_hex(5)) == 5 and hashing.hash_hex(5) == "0" * 15 + "5"


def test_small_images_get_no_perceptual_hash():
    side = hashing.SMALL_SIDE
    assert encode.perceptual_hash(Image.new("L", (side, side))) is None
    assert encode.perceptual_hash(Image.new("L", (side + 1, 8))) == 0
    assert hashing.hash_from_hex(hashing.hash_hex(None)) is None


def _reference_dhash(image: Image.Image) -> int:
    """The dHash spelt out on the Image API and NumPy, cell by cell."""
    grey = image.convert("L").resize((hashing.HASH_SIDE + 1, hashing.HASH_SIDE), Image.BOX)
    cells = np.asarray(grey, dtype=np.int16)
    bits = (cells[:, :-1] < cells[:, 1:]).ravel()
    return int("".join("1" if bit else "0" for bit in bits), 2)


def test_perceptual_hash_is_the_box_averaged_difference_hash_in_every_band_mode():
    photo = _photo(3, size=(131, 97))
    for mode in ("L", "LA", "RGB", "RGBA", "CMYK", "YCbCr"):
        image = photo.convert(mode)
        assert hashing.perceptual_hash(image) == _reference_dhash(image), mode
    exact = photo.convert("L").resize((hashing.HASH_SIDE + 1, hashing.HASH_SIDE))
    assert hashing.perceptual_hash(exact) == _reference_dhash(exact) != 0


def test_an_image_only_opened_is_loaded_first():
    data = _jpeg(_photo(4))
    assert hashing.perceptual_hash(Image.open(io.BytesIO(data))) == \
        _reference_dhash(Image.open(io.BytesIO(data)))
