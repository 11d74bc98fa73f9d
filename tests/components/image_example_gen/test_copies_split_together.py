"""The default split: a copy of an image, under any name, lands in its original's split."""
import io
import json

import numpy as np
import pytest
from PIL import Image

from core.contract import DATA_HEALTH_KEY, FILENAME_KEY, SPLITS
from components.image_example_gen.dedupe import MOVED_SHARD
from components.image_example_gen.options import split_index

from tests.support.examples import ingest_folder, read_split

pytestmark = pytest.mark.integration  # real Beam and TensorFlow work
BUCKETS = [50, 100]  # ingest_folder's eval_percent 50


def _photo(seed: int) -> Image.Image:
    """A smooth 128x96 picture (coarse noise, upscaled): its perceptual hash survives
    re-encoding, as a photo's does."""
    coarse = np.random.default_rng(seed).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize((128, 96), Image.BICUBIC)


def _hashed_apart(name: str, of: str, start: int = 0) -> str:
    """A path like `name`.N whose path hash puts it in the other split than `of`."""
    n = start
    while split_index(name.format(n), BUCKETS) == split_index(of, BUCKETS):
        n += 1
    return name.format(n)


def _splits(uri: str) -> dict:
    return {example.features.feature[FILENAME_KEY].bytes_list.value[0].decode(): split
            for split in SPLITS for example in read_split(uri, split)}


def test_planted_copies_land_in_their_originals_split(tmp_path):
    root = tmp_path / "data"
    for i in range(8):
        for label in "ab":
            (root / label).mkdir(parents=True, exist_ok=True)
            _photo(100 * ord(label) + i).save(root / label / f"{i}.png")
    original = "a/0.png"
    copy = _hashed_apart("b/copy{}.png", original)  # a byte copy, in another class even
    (root / copy).write_bytes((root / original).read_bytes())
    jpeg = io.BytesIO()
    _photo(1).save(jpeg, format="JPEG", quality=95)
    near_original = _hashed_apart("a/photo{}.jpg", original)  # re-encoded: a near copy
    (root / near_original).write_bytes(jpeg.getvalue())
    near = _hashed_apart("b/resaved{}.jpg", near_original)
    _photo(1).save(root / near, format="JPEG", quality=70)

    out = tmp_path / "out"
    ingest_folder(root, out)
    split = _splits(str(out))
    assert split[copy] == split[original]
    assert split[near] == split[near_original]
    report = json.loads((out / "ingest_report.json").read_text())
    health = report[DATA_HEALTH_KEY]
    assert health["split"] == {"rule": "copies together", "moved": 2}
    assert health["leakage"]["count"] == 0
    assert report["splits"] == {s: sum(v == s for v in split.values()) for s in SPLITS}
    assert sum(1 for _ in out.rglob(MOVED_SHARD)) == 2  # one per split moved into


def test_given_splits_keep_their_copies_and_report_the_leak(tmp_path):
    root = tmp_path / "data"
    for split in ("train", "eval"):
        for i in range(3):
            (root / split / "a").mkdir(parents=True, exist_ok=True)
            _photo(10 * i + (split == "eval")).save(root / split / "a" / f"{i}.png")
    (root / "eval" / "a" / "copy.png").write_bytes((root / "train" / "a" / "0.png").read_bytes())
    out = tmp_path / "out"
    ingest_folder(root, out)
    health = json.loads((out / "ingest_report.json").read_text())[DATA_HEALTH_KEY]
    assert health["split"] == {"rule": "given", "moved": 0}
    assert health["leakage"]["eval_paths"] == ["eval/a/copy.png"]
