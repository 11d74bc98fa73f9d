"""`imagepipe ingest`: ImageExampleGen's ingestion without the rest of the pipeline.

    imagepipe ingest --data DIR --output OUT
      -> OUT/train/data-*.tfrecord.gz, OUT/eval/..., OUT/labels.txt, OUT/ingest_report.json

Files are gzipped TFRecords, like TFX ExampleGen's own output, so they load
with `tf.data.TFRecordDataset(files, compression_type="GZIP")`. Everything is
written to a sibling temporary folder and renamed into place at the end, so
OUT is never seen half-written. A gs:// OUT is staged locally and uploaded
with ingest_report.json last (the old one removed first): without the
report, readers know the folder is not a complete ingest.
"""
import os
import shutil
import tempfile
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from core.contract import INGEST_REPORT_FILE, SPLITS
from core.storage import files
from core.storage.tree_copy import copy_tree
from components.image_example_gen import spans
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.ingest import IngestImages, finish_ingest
from components.image_example_gen.encoding.parallel import local_processes
from settings.config import PipelineConfig
from core.errors import PipelineFailed, UsageError
from report.console import data_warnings


def _check_target(output: str) -> None:
    """OUT may be new, empty, or a previous ingest's output (which is replaced)."""
    if files.isdir(output) and files.listdir(output) and not files.exists(
            os.path.join(output, INGEST_REPORT_FILE)):
        raise UsageError(f"--output {output}: exists and is not an earlier ingest's output; "
                         "choose a new or empty folder")


def _publish(staging: str, output: str) -> None:
    """Atomically replace `output` with `staging` (same filesystem), or upload it."""
    if files.is_remote(output):
        files.remove(os.path.join(output, INGEST_REPORT_FILE))
        files.rmtree(output)
        copy_tree(staging, output, last=INGEST_REPORT_FILE)
        return
    if os.path.exists(output):
        trash = staging + ".old"
        os.rename(output, trash)
        os.rename(staging, output)
        shutil.rmtree(trash)
    else:
        os.rename(staging, output)


def format_report(report: dict, output: str) -> str:
    """What `imagepipe ingest` prints: counts, then warnings about unused data."""
    return "\n".join([
        f"ingested  {', '.join(f'{k} {v}' for k, v in report['splits'].items())}; "
        f"{len(report['classes'])} classes; {len(report['skipped'])} skipped, "
        f"{report['ignored']} ignored -> {output}",
        *data_warnings(report["empty_classes"], report["skipped"])])


def run_ingest(config: PipelineConfig) -> dict:
    """Ingests `config.ingest.data` into `config.run.output`; returns the ingest report.

    Raises:
      DatasetError, UsageError: bad data or output, before anything is written.
      PipelineFailed: the Beam ingestion or its checks failed (--strict, empty split).
    """
    options = config.ingest_options()
    if spans.is_pattern(config.ingest.data):
        raise UsageError(f"--data {config.ingest.data}: `imagepipe ingest` reads one dataset; give "
                         "one span's folder (a run ingests spans into its own span store)")
    listing = list_dataset(config.ingest.data, options)
    output = config.run.output.rstrip("/")
    _check_target(output)
    if files.is_remote(output):
        staging = tempfile.mkdtemp(prefix="imagepipe-ingest-")
    else:
        parent = os.path.dirname(output) or "."
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".ingest-", dir=parent)
    try:
        return _ingest_into(staging, output, config.ingest.data, listing, options,
                            config.beam_pipeline_args)
    except Exception as e:  # Beam, or a failed check: the one step that ran failed.
        raise PipelineFailed("ingest", e) from e
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _ingest_into(staging, output, data, listing, options, beam_args) -> dict:
    """Writes everything into `staging`, checks it, then publishes it as `output`."""
    with beam.Pipeline(options=PipelineOptions(beam_args)) as pipeline:
        _ = pipeline | IngestImages(
            root=data, listing=listing, options=options, report_dir=staging,
            split_dirs={s: os.path.join(staging, s) for s in SPLITS},
            processes=local_processes(beam_args))
    report = finish_ingest(staging, options.strict)
    _publish(staging, output)
    return report
