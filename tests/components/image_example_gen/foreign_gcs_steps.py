"""Hugging Face and TFDS datasets listed and read from a bucket, for test_foreign_gcs.py.

    bash scripts/with_gcs.sh --seed SEED -- .venv/bin/python -m \
        tests.components.image_example_gen.foreign_gcs_steps RESULTS.json BUCKET

SEED/<bucket>/ holds hub/, disk/ and tfds/digits/plain/1.0.0/
(tests/support/foreign_datasets.py). Each is detected, listed and read through
core/storage from gs://, then ingested by IngestImages into the bucket; RESULTS.json
gets, per layout, what was detected and listed, the examples read per split, the
skipped paths and the ingest report.
"""
import sys

from tests.support.gcs_harness import run_and_record

# Layout: its folder in the bucket (TFDS: a config folder, holding 1.0.0/).
LAYOUTS = {"hub": "hub", "disk": "disk", "tfds": "tfds/digits/plain"}


def _readers():
    """{layout: (looks_like, list, read)}."""
    from components.image_example_gen.readers.hub_datasets import hf_datasets, hf_rows, tfds_folders
    return {"hub": (hf_datasets.looks_like_hf_parquet, hf_datasets.list_hf_parquet,
                    hf_rows.read_hf_unit),
            "disk": (hf_datasets.looks_like_hf_disk, hf_datasets.list_hf_disk,
                     hf_rows.read_hf_unit),
            "tfds": (tfds_folders.looks_like_tfds, tfds_folders.list_tfds,
                     tfds_folders.read_tfds_unit)}


def _layout(name: str, root: str, readers: dict, options) -> dict:
    import apache_beam as beam
    from components.image_example_gen.ingest import IngestImages
    from core.contract import SPLITS, read_ingest_report
    looks_like, lister, reader = readers[name]
    listing = lister(root, options)
    examples, skipped = {}, []
    for unit in listing.files:
        for item in reader(unit, root, listing.classes, options, lambda path: "hashed", {}):
            if isinstance(item, dict):
                skipped.append(item["path"])
            else:
                examples[item[0]] = examples.get(item[0], 0) + 1
    out = f"{root}-ingested"
    with beam.Pipeline() as pipeline:
        _ = pipeline | IngestImages(root=root, listing=listing, options=options,
                                    split_dirs={s: f"{out}/Split-{s}" for s in SPLITS},
                                    report_dir=out)
    report = read_ingest_report(out)
    return {"detected": looks_like(root), "classes": listing.classes,
            "unit_splits": sorted({str(u.split) for u in listing.files}),
            "unused": listing.unused, "examples": examples, "skipped": skipped,
            "report": {k: report[k] for k in ("format", "splits", "classes", "skipped")}}


def steps(bucket: str) -> dict:
    """Each layout under gs://BUCKET/, listed, read and ingested."""
    from settings.config import PipelineConfig
    options = PipelineConfig.from_values().ingest_options()
    readers = _readers()
    return {name: _layout(name, f"gs://{bucket}/{folder}", readers, options)
            for name, folder in LAYOUTS.items()}


if __name__ == "__main__":
    run_and_record(steps, *sys.argv[1:3])
