"""Hugging Face and TFDS datasets through the Beam ingestion (IngestImages) and
finish_ingest: splits, declared class order, skipped rows in ingest_report.json, and
--strict failing on them.

The datasets are written from the bundled digits to the documented formats
(tests/support/foreign_datasets.py).
"""
import pytest

from components.image_example_gen.readers.hub_datasets import hf_datasets, tfds_folders
from settings.config import PipelineConfig
from tests.support import foreign_datasets as fd

pytestmark = pytest.mark.integration  # real Beam ingestion, in process

def run_ingest(listing, root, out, options, processes=1) -> dict:
    """IngestImages of `listing` into `out` (Split-train/, Split-eval/); the report.
    `processes` > 1: row units are read by that many encoder processes."""
    import apache_beam as beam
    from components.image_example_gen.ingest import IngestImages
    from core.contract import SPLITS, read_ingest_report
    split_dirs = {s: str(out / f"Split-{s}") for s in SPLITS}
    with beam.Pipeline() as pipeline:
        _ = pipeline | IngestImages(root=str(root), listing=listing, options=options,
                                    split_dirs=split_dirs, report_dir=str(out),
                                    processes=processes)
    return read_ingest_report(str(out))


def _bad_rows(rows):
    rows = list(rows)
    rows[0] = (b"GIF89a cut", rows[0][1])
    rows[1] = (rows[1][0], 5)
    return rows


def _write(kind, tmp_path, options):
    """(root, listing) of a dataset of each layout with train, validation and test splits,
    whose train split has an undecodable image and an undeclared label."""
    splits = {"train": _bad_rows(fd.digit_rows(6)), "validation": fd.digit_rows(3, 6),
              "test": fd.digit_rows(1, 9)}
    if kind == "hf-parquet":
        root = fd.write_hub_parquet(tmp_path / "hub", splits, shards=1, card=True)
        return root, hf_datasets.list_hf_parquet(str(root), options)
    if kind == "hf-disk":
        root = fd.write_save_to_disk(tmp_path / "disk", splits, files=1)
        return root, hf_datasets.list_hf_disk(str(root), options)
    root = fd.write_tfds(tmp_path, splits, shards=1)
    return root, tfds_folders.list_tfds(str(root), options)


@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("kind", ["hf-parquet", "hf-disk", "tfds"])
def test_ingestion_keeps_splits_and_class_order_and_reports_bad_rows(tmp_path, kind,
                                                                     processes):
    """In this process, and on encoder processes (processes=2), alike."""
    from components.image_example_gen.ingest import finish_ingest
    options = PipelineConfig.from_values().ingest_options()
    root, listing = _write(kind, tmp_path, options)
    report = run_ingest(listing, root, tmp_path / "out", options, processes)
    assert report["format"] == kind and report["classes"] == list(fd.NAMES)
    assert report["splits"] == {"train": 16, "eval": 9}
    assert report["unused_folders"] == ["test"]
    first = listing.files[0].path
    assert [s["path"] for s in report["skipped"]] == [f"{first}#0", f"{first}#1"]
    assert "label 5 is not one of the dataset's 3 classes" in report["skipped"][1]["reason"]
    finish_ingest(str(tmp_path / "out"), strict=False)
    assert (tmp_path / "out" / "labels.txt").read_text() == "zero\none\ntwo\n"
    with pytest.raises(ValueError, match=rf"--strict: 2 file\(s\) could not be ingested: "
                                         rf"{first}#0: cannot decode"):
        finish_ingest(str(tmp_path / "out"), strict=True)


def _labels_in_order(folder) -> list:
    import tensorflow as tf
    from core.contract import LABEL_KEY
    labels = []
    for path in sorted(folder.glob("*.gz")):
        for record in tf.data.TFRecordDataset(str(path), compression_type="GZIP"):
            example = tf.train.Example.FromString(record.numpy())
            labels.append(example.features.feature[LABEL_KEY].int64_list.value[0])
    return labels


@pytest.mark.parametrize("processes", [1, 2])
def test_rows_stored_class_by_class_come_out_mixed(tmp_path, processes):
    """Six Parquet files of train rows, two a class: each output file interleaves files
    from across the dataset, so every six consecutive examples hold all three classes
    (written one file a shard, they would be one class for twelve)."""
    rows = sorted(fd.digit_rows(12), key=lambda row: row[1])
    for i in range(6):
        fd.write_parquet(tmp_path / "hub" / "data" / f"train-{i:05d}-of-00006.parquet",
                         rows[6 * i:6 * i + 6])
    fd.write_parquet(tmp_path / "hub" / "data" / "validation-00000-of-00001.parquet",
                     fd.digit_rows(2, 12))
    options = PipelineConfig.from_values().ingest_options()
    listing = hf_datasets.list_hf_parquet(str(tmp_path / "hub"), options)
    run_ingest(listing, tmp_path / "hub", tmp_path / "out", options, processes)
    labels = _labels_in_order(tmp_path / "out" / "Split-train")
    assert sorted(labels) == sorted(label for _, label in rows)
    assert all(len(set(labels[i:i + 6])) == 3 for i in range(len(labels) - 5)), labels
