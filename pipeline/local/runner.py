"""Run the pipeline on this machine with TFX's LocalDagRunner, then summarize it."""
import dataclasses
import os
import sys
import time
import traceback
from typing import Optional

from tfx.orchestration.local.local_dag_runner import LocalDagRunner

from core.contract import TRAINER_ID
from components.serving_validator.check import start_spare, stop_spare
from modules.params import RUN_STARTED_ENV
from report import metadata, summary
from report.console import format_summary
from settings.config import PipelineConfig
from core.errors import PipelineFailed
from pipeline.planning.memory import memory_line
from pipeline.dag import create_pipeline
from pipeline.planning.plan import plan_lines
from pipeline.local import state
from pipeline.local.progress import component_lines
from pipeline.planning.resolve import resolve_plan


def run(config: PipelineConfig, started_at: Optional[float] = None) -> dict:
    """Runs the whole pipeline; writes and returns the summary.

    `started_at`: when the command began (Unix seconds; default now), which
    --time-budget counts from: the Trainer reads it (RUN_STARTED_ENV).

    Raises:
      DatasetError: the data is missing or holds no images (checked before
        anything runs).
      UsageError: the planned training cannot fit in memory (checked before
        anything runs).
      PipelineFailed: a component failed; names it.
    """
    plan, memory = resolve_plan(config)
    plan = dataclasses.replace(plan, decode_cache_root=state.decode_cache_root(config.state_path))
    lines = [*plan_lines(plan), memory_line(memory)]
    if config.state_path != config.run.output:
        lines.append(f"state     {config.state_path}: ML Metadata, the run lock and the "
                     "decode cache stay on this machine")
    print("\n".join(lines), flush=True)
    config = plan.config
    tfx_pipeline = create_pipeline(plan, config.beam_pipeline_args)
    start = time.time()
    os.environ[RUN_STARTED_ENV] = repr(started_at if started_at is not None else start)
    try:
        with component_lines(lambda node: metadata.was_cached(config, node), after=_ahead):
            LocalDagRunner().run(tfx_pipeline)
    except Exception as e:  # Any component error: report which one failed.
        raise PipelineFailed(metadata.failed_component(config), e) from e
    finally:
        os.environ.pop(RUN_STARTED_ENV, None)
        stop_spare()
    result = summary.build_summary(config, total_seconds=time.time() - start)
    result["plan"] = {**plan.to_json(), "memory": {
        **dataclasses.asdict(memory), "total_bytes": memory.total_bytes,
        "allowed_bytes": memory.allowed_bytes}}
    result["model_source"] = plan.source.to_json()
    summary.write_summary(config, result)
    print(format_summary(result))
    _report(config)
    _track(config, result)
    return result


def _ahead(node: str, cached: bool) -> None:
    """Work started ahead of the stage that needs it: after a Trainer that ran, the
    serving check's worker process, whose TensorFlow import then overlaps the Evaluator
    (the serving check takes it, components/serving_validator/check.py)."""
    if node == TRAINER_ID and not cached:
        start_spare()


def _track(config: PipelineConfig, result: dict) -> None:
    """--mlflow-uri: the run to MLflow; like the report, a failure here is a warning."""
    if not config.tracking.mlflow_uri:
        return
    from report.tracking import log_run
    try:
        print(f"mlflow    run {log_run(config, result)} at {config.tracking.mlflow_uri}")
    except Exception as e:  # noqa: BLE001  (the pipeline's result stands; say what failed)
        if config.logging.verbose:
            traceback.print_exc()
        print(f"warning   the run could not be logged to MLflow: {type(e).__name__}: {e}",
              file=sys.stderr)


def _report(config: PipelineConfig) -> None:
    """The HTML report; the run itself succeeded, so a report failure is a warning."""
    from report.build import build_report
    try:
        print(f"report    {build_report(config)}")
    except Exception as e:  # noqa: BLE001  (any failure: say so, keep the run's result)
        if config.logging.verbose:
            traceback.print_exc()
        print(f"warning   the report could not be written: {type(e).__name__}: {e}",
              file=sys.stderr)
