"""`imagepipe runs`: every run recorded in an output directory's ML Metadata, newest last."""
import datetime
import os
from typing import List, Optional

from core import contract as ids
from report import metadata
from report.evaluation import accuracies
from settings.config import PipelineConfig
from core.errors import UsageError


def _input_base(execution) -> Optional[str]:
    for properties in (execution.custom_properties, execution.properties):
        if "input_base" in properties:
            return properties["input_base"].string_value
    return None


def _run_row(store, run, pipeline_name: str) -> Optional[dict]:
    executions = sorted(store.get_executions_by_context(run.id), key=lambda e: e.id)
    nodes = {metadata.node_id(store, e, pipeline_name): e for e in executions}
    if not any(nodes):
        return None
    row = {"run": run.name, "started": datetime.datetime.fromtimestamp(
        run.create_time_since_epoch / 1e3).strftime("%Y-%m-%d %H:%M:%S"),
        "data": _input_base(nodes[ids.EXAMPLE_GEN_ID]) if ids.EXAMPLE_GEN_ID in nodes else None,
        "accuracy": None, "blessed": None, "pushed_version": None}
    if ids.EVALUATOR_ID in nodes:
        produced = metadata.outputs(store, nodes[ids.EVALUATOR_ID])
        if "ModelEvaluation" in produced:
            overall, _ = accuracies(produced["ModelEvaluation"].uri)
            row["accuracy"] = overall.get("candidate", overall.get(""))
            row["blessed"] = metadata.prop(produced["ModelBlessing"], "blessed") == 1
    pushed = metadata.outputs(store, nodes[ids.PUSHER_ID]).get("PushedModel") \
        if ids.PUSHER_ID in nodes else None
    if pushed is not None and metadata.prop(pushed, "pushed") == 1:
        row["pushed_version"] = int(metadata.prop(pushed, "pushed_version"))
    return row


def list_runs(config: PipelineConfig) -> List[dict]:
    """One row per pipeline run of `config.run.pipeline_name`, oldest first."""
    if not os.path.exists(config.metadata_path):
        raise UsageError(f"--output {config.run.output}: no runs recorded (no metadata.sqlite)")
    store = metadata.open_store(config)
    runs = sorted(store.get_contexts_by_type("pipeline_run"), key=lambda c: c.id)
    return [row for row in (_run_row(store, r, config.run.pipeline_name) for r in runs) if row]


def format_runs(rows: List[dict]) -> str:
    lines = [f"{'started':19}  {'accuracy':>8}  {'blessed':7}  {'pushed':>10}  data"]
    for row in rows:
        accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.4f}"
        blessed = {True: "yes", False: "no", None: "-"}[row["blessed"]]
        lines.append(f"{row['started']:19}  {accuracy:>8}  {blessed:7}  "
                     f"{row['pushed_version'] or '-':>10}  {row['data'] or '-'}")
    return "\n".join(lines)
