"""bench.ingestion.near_copies: copies of photo-like pictures stay near, different ones apart."""
import numpy as np
from PIL import Image

from bench.ingestion.near_copies import measure


def _photo(path, seed):
    """A smooth random picture (blurred noise), 400 x 300, as a JPEG (decoded at half size)."""
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8))
    coarse.resize((400, 300), Image.BICUBIC).save(path, format="JPEG", quality=90)
    return path


def test_copies_are_within_the_threshold_and_different_pictures_are_not(tmp_path):
    paths = [_photo(tmp_path / f"{i}.jpg", i) for i in range(6)]
    rows = {row["copy"]: row for row in measure(paths, full_decode=False)["rows"]}
    assert rows["re-encoded"]["photos"] == rows["resized"]["photos"] == 6
    assert rows["re-encoded"]["within"] == rows["resized"]["within"] == 1.0
    assert rows["different photos"]["photos"] == 15
    assert rows["different photos"]["within"] == 0.0
