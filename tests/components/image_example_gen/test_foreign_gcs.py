"""Hugging Face Parquet, save_to_disk and TFDS folders in a bucket: detected, listed, read
and ingested through core/storage from gs:// (fake-gcs-server, scripts/with_gcs.sh).

The datasets are written from the bundled digits to the documented formats
(tests/support/foreign_datasets.py), seeded into the bucket, and read by
foreign_gcs_steps.py inside the harness.
"""
import pytest

from tests.support import foreign_datasets as fd
from tests.support.gcs_harness import NEEDS_ROOT, run_steps

STEPS = "tests.components.image_example_gen.foreign_gcs_steps"
BUCKET = "imagepipe-test"

pytestmark = [pytest.mark.slow, NEEDS_ROOT]


def _seed(folder):
    """hub/, disk/ and tfds/ under folder/<bucket>/; each train split's first row (of its
    first file) is an undecodable image."""
    rows = fd.digit_rows(4)
    rows[0] = (b"\x89PNG\r\n\x1a\n cut", rows[0][1])
    splits = {"train": rows, "validation": fd.digit_rows(2, 4), "test": fd.digit_rows(1, 6)}
    bucket = folder / BUCKET
    fd.write_hub_parquet(bucket / "hub", splits, card=True)
    fd.write_save_to_disk(bucket / "disk", splits)
    fd.write_tfds(bucket / "tfds", splits)
    return folder


def test_each_layout_is_read_from_a_bucket(tmp_path):
    found = run_steps(STEPS, tmp_path / "results.json", BUCKET,
                      gcs_flags=("--seed", str(_seed(tmp_path / "seed"))), timeout=900)
    assert "error" not in found, found.get("traceback")
    first = {"hub": "data/train-00000-of-00002.parquet",
             "disk": "train/data-00000-of-00002.arrow",
             "tfds": "1.0.0/digits-train.tfrecord-00000-of-00002"}
    formats = {"hub": "hf-parquet", "disk": "hf-disk", "tfds": "tfds"}
    for layout, path in first.items():
        result = found[layout]
        assert result["detected"] and result["classes"] == list(fd.NAMES), layout
        assert result["unit_splits"] == ["eval", "train"] and result["unused"] == ["test"]
        assert result["examples"] == {"train": 11, "eval": 6}, layout
        assert result["skipped"] == [f"{path}#0"], layout
        report = result["report"]
        assert report["format"] == formats[layout] and report["classes"] == list(fd.NAMES)
        assert report["splits"] == {"train": 11, "eval": 6}
        assert [s["path"] for s in report["skipped"]] == [f"{path}#0"]
