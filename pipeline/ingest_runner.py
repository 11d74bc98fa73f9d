"""`imagepipe ingest`: ImageExampleGen's ingestion without the rest of the pipeline.

    imagepipe ingest --data DIR --output OUT
      -> OUT/train/data-*.tfrecord.gz, OUT/eval/..., OUT/labels.txt, OUT/ingest_report.json

Files are gzipped TFRecords, like TFX ExampleGen's own output, so they load
with `tf.data.TFRecordDataset(files, compression_type="GZIP")`. Everything is
written to a sibling temporary folder and renamed into place at the end, so
OUT is never seen half-written.
"""
import os
import shutil
import tempfile
from typing import List

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from components.image_example_gen.formats import list_dataset
from components.image_example_gen.ingest import REPORT_FILE, IngestImages, finish_ingest
from pipeline.config import PipelineConfig
from pipeline.errors import UsageError


def _check_target(output: str) -> None:
    """OUT may be new, empty, or a previous ingest's output (which is replaced)."""
    if os.path.isdir(output) and os.listdir(output) and not os.path.exists(
            os.path.join(output, REPORT_FILE)):
        raise UsageError(f"--output {output}: exists and is not an earlier ingest's output; "
                         "choose a new or empty folder")


def _publish(staging: str, output: str) -> None:
    """Atomically replace `output` with `staging` (same filesystem)."""
    if os.path.exists(output):
        trash = staging + ".old"
        os.rename(output, trash)
        os.rename(staging, output)
        shutil.rmtree(trash)
    else:
        os.rename(staging, output)


def run_ingest(config: PipelineConfig, beam_args: List[str]) -> dict:
    """Ingests `config.data` into `config.output`; returns the ingest report."""
    options = config.ingest_options()
    listing = list_dataset(config.data, options)
    output = config.output.rstrip("/")
    _check_target(output)
    parent = os.path.dirname(output) or "."
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".ingest-", dir=parent)
    try:
        with beam.Pipeline(options=PipelineOptions(beam_args)) as pipeline:
            splits = pipeline | IngestImages(root=config.data, listing=listing,
                                             options=options, report_dir=staging)
            for name, examples in splits.items():
                _ = examples | f"Write[{name}]" >> beam.io.WriteToTFRecord(
                    os.path.join(staging, name, "data"), file_name_suffix=".tfrecord.gz")
        report = finish_ingest(staging, options.strict)
        _publish(staging, output)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report
