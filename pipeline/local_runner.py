"""Run the pipeline on this machine with TFX's LocalDagRunner, then summarize it."""
import sys
import time
import traceback

from tfx.orchestration.local.local_dag_runner import LocalDagRunner

from components.image_example_gen.folder_tree import DatasetError
from components.image_example_gen.formats import list_dataset
from pipeline import summary
from pipeline.config import PipelineConfig
from pipeline.data_probe import probe_shape
from pipeline.errors import PipelineFailed
from pipeline.pipeline import create_pipeline
from pipeline.progress import component_lines



# Beyond this, per-class evaluation slices and the report stop being useful,
# and the softmax layer dominates the model; refused rather than half-working.
MAX_CLASSES = 10_000


def check_classes(data: str, classes) -> None:
    """A classifier needs 2..MAX_CLASSES classes (TFRecords: known only after ingestion)."""
    if classes is None:
        return
    if len(classes) < 2:
        raise DatasetError(f"--data {data}: only one class ({classes[0]!r}); a classifier "
                           "needs at least two class folders")
    if len(classes) > MAX_CLASSES:
        raise DatasetError(f"--data {data}: {len(classes):,} classes; imagepipe supports up "
                           f"to {MAX_CLASSES:,}")


def run(config: PipelineConfig) -> dict:
    """Runs the whole pipeline; writes and returns the summary.

    Raises:
      DatasetError: the data is missing or holds no images (checked before
        anything runs).
      PipelineFailed: a component failed; names it.
    """
    options = config.ingest_options()
    listing = list_dataset(config.data, options)
    check_classes(config.data, listing.classes)
    size, channels = probe_shape(config.data, listing, options)
    size, channels = config.image_size or size, config.channels or channels
    tfx_pipeline = create_pipeline(config, size, channels, config.beam_pipeline_args)
    start = time.time()
    try:
        with component_lines(lambda node: summary.was_cached(config, node)):
            LocalDagRunner().run(tfx_pipeline)
    except Exception as e:  # Any component error: report which one failed.
        raise PipelineFailed(summary.failed_component(config), e) from e
    result = summary.build_summary(config, total_seconds=time.time() - start)
    summary.write_summary(config, result)
    print(summary.format_summary(result))
    _report(config)
    return result


def _report(config: PipelineConfig) -> None:
    """The HTML report; the run itself succeeded, so a report failure is a warning."""
    from pipeline.report.build import build_report
    try:
        print(f"report    {build_report(config)}")
    except Exception as e:  # noqa: BLE001  (any failure: say so, keep the run's result)
        if config.verbose:
            traceback.print_exc()
        print(f"warning   the report could not be written: {type(e).__name__}: {e}",
              file=sys.stderr)
