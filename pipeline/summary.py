"""The run summary: read the latest run back from ML Metadata into summary.json.

Everything comes from what the components recorded (executions, artifacts,
their files), never from what the runner believes it asked for: a cached
component reports the artifacts it reused, and a failed one is found by state.
"""
import json
import os
from typing import Dict, List, Optional, Tuple

import tensorflow_model_analysis as tfma
from ml_metadata import metadata_store
from ml_metadata.proto import metadata_store_pb2

from components.contract import LABEL_KEY, read_ingest_report
from pipeline.config import PipelineConfig

_State = metadata_store_pb2.Execution.State
_ACCURACY = "sparse_categorical_accuracy"
MATRIX_MAX_CLASSES = 1000


def open_store(config: PipelineConfig) -> metadata_store.MetadataStore:
    """The run's SQLite MLMD store (it must exist)."""
    connection = metadata_store_pb2.ConnectionConfig()
    connection.sqlite.filename_uri = config.metadata_path
    connection.sqlite.connection_mode = metadata_store_pb2.SqliteMetadataSourceConfig.READONLY
    return metadata_store.MetadataStore(connection)


def node_id(store, execution, pipeline_name: str) -> Optional[str]:
    for context in store.get_contexts_by_execution(execution.id):
        if context.type == "node" and context.name.startswith(pipeline_name + "."):
            return context.name[len(pipeline_name) + 1:]
    return None


def latest_run(store, pipeline_name: str) -> Dict[str, metadata_store_pb2.Execution]:
    """{node id: execution} of the newest run of `pipeline_name`, in execution order."""
    runs = sorted(store.get_contexts_by_type("pipeline_run"), key=lambda c: c.id, reverse=True)
    for run in runs:
        executions = sorted(store.get_executions_by_context(run.id), key=lambda e: e.id)
        nodes = {node_id(store, e, pipeline_name): e for e in executions}
        nodes.pop(None, None)
        if nodes:
            return nodes
    return {}


def was_cached(config: PipelineConfig, node: str) -> bool:
    """Whether `node`'s execution in the latest run was a cache hit."""
    execution = latest_run(open_store(config), config.pipeline_name).get(node)
    return execution is not None and execution.last_known_state == _State.CACHED


def failed_component(config: PipelineConfig) -> str:
    """The id of the component that failed in the latest run, as MLMD recorded it."""
    if not os.path.exists(config.metadata_path):
        return "pipeline set-up"
    for node, execution in latest_run(open_store(config), config.pipeline_name).items():
        if execution.last_known_state == _State.FAILED:
            return node
    return "an unrecorded step"


def outputs(store, execution) -> Dict[str, metadata_store_pb2.Artifact]:
    """{artifact type name: artifact} of an execution's outputs."""
    ids = [e.artifact_id for e in store.get_events_by_execution_ids([execution.id])
           if e.type == metadata_store_pb2.Event.OUTPUT]
    types = {t.id: t.name for t in store.get_artifact_types()}
    return {types[a.type_id]: a for a in store.get_artifacts_by_id(ids)}


def prop(artifact, name: str):
    value = artifact.custom_properties.get(name)
    if value is None:
        return None
    return value.int_value if value.HasField("int_value") else value.string_value


def accuracies(evaluation_uri: str) -> Tuple[Dict[str, float], Dict[int, float]]:
    """Overall accuracy per model name ('' or 'candidate', and 'baseline'), and the
    candidate's accuracy per label id (the label slices of the EvalConfig)."""
    overall, per_label = {}, {}
    for metrics in tfma.load_metrics(evaluation_uri):
        keys = metrics.slice_key.single_slice_keys
        for item in metrics.metric_keys_and_values:
            if item.key.name != _ACCURACY or item.key.is_diff:
                continue
            value = item.value.double_value.value
            if not keys:
                overall[item.key.model_name] = value
            elif item.key.model_name in ("", "candidate") and keys[0].column == LABEL_KEY:
                per_label[int(keys[0].int64_value)] = value
    return overall, per_label


def confusion_matrix(evaluation_uri: str, num_classes: int) -> Optional[List[List[int]]]:
    """The candidate's overall confusion matrix, counts[actual][predicted], or None.

    From TFMA's MultiClassConfusionMatrixPlot at threshold 0.0, i.e. argmax, the
    same prediction the accuracy metric scores.
    """
    for plots in tfma.load_plots(evaluation_uri):
        if plots.slice_key.single_slice_keys:
            continue
        for item in plots.plot_keys_and_values:
            if item.key.model_name not in ("", "candidate"):
                continue
            matrices = item.value.multi_class_confusion_matrix_at_thresholds.matrices
            if not matrices:
                continue
            counts = [[0] * num_classes for _ in range(num_classes)]
            for entry in matrices[0].entries:
                if 0 <= entry.actual_class_id < num_classes and \
                        0 <= entry.predicted_class_id < num_classes:
                    counts[entry.actual_class_id][entry.predicted_class_id] = \
                        round(entry.num_weighted_examples)
            return counts
    return None


def _failure_text(failure) -> str:
    """One TFMA threshold failure, e.g. 'accuracy change vs baseline -0.0300 < -0.01'."""
    key, threshold = failure.metric_key, failure.metric_threshold
    value = failure.metric_value.double_value.value
    if key.is_diff:
        bound = threshold.change_threshold.absolute.value
        return f"accuracy change vs baseline {value:+.4f} < {bound:+.4f} allowed"
    return f"accuracy {value:.4f} < threshold {threshold.value_threshold.lower_bound.value}"


def blessing_reason(validation, config: PipelineConfig, baseline: Optional[float]) -> str:
    """Why TFMA blessed the model or not, in words, from its ValidationResult."""
    if validation.validation_ok:
        reason = f"accuracy >= threshold {config.accuracy_threshold}"
        if baseline is None:
            return reason + "; no blessed baseline yet"
        return reason + f" and >= baseline {baseline:.4f} - {config.baseline_tolerance}"
    failures = [_failure_text(f) for per_slice in validation.metric_validations_per_slice
                for f in per_slice.failures]
    return "; ".join(failures) or "TFMA validation failed: " + str(validation)[:300]


def _eval_section(store, evaluator, config: PipelineConfig, classes: List[str]) -> dict:
    if evaluator is None:
        return {"accuracy": None, "baseline_accuracy": None, "per_class": {},
                "confusion_matrix": None, "blessed": False, "reason": "the Evaluator did not run"}
    produced = outputs(store, evaluator)
    uri = produced["ModelEvaluation"].uri
    overall, per_label = accuracies(uri)
    baseline = overall.get("baseline")
    return {"accuracy": overall.get("candidate", overall.get("")),
            "baseline_accuracy": baseline,
            # null for a class with no eval images (TFMA then has no slice for it)
            "per_class": {name: per_label.get(label) for label, name in enumerate(classes)},
            # rows: actual class, columns: predicted class, in `data.classes` order
            # (null above MATRIX_MAX_CLASSES: 1,000 classes is already 4 MB of JSON)
            "confusion_matrix": (confusion_matrix(uri, len(classes))
                                 if len(classes) <= MATRIX_MAX_CLASSES else None),
            "blessed": prop(produced["ModelBlessing"], "blessed") == 1,
            "reason": blessing_reason(tfma.load_validation_result(uri), config, baseline)}


def _pushed_section(store, pusher) -> dict:
    pushed = outputs(store, pusher).get("PushedModel") if pusher else None
    check = prop(pushed, "serving_check") if pushed is not None else None
    check = json.loads(check) if check else None
    if pushed is None or prop(pushed, "pushed") != 1:
        return {"serving": None, "tflite": None, "version": None, "tflite_gate": None,
                "serving_check": check}
    gate = prop(pushed, "tflite_parity")
    return {"serving": prop(pushed, "pushed_destination"),
            "tflite": prop(pushed, "tflite_destination") or None,
            "version": int(prop(pushed, "pushed_version")),
            "tflite_gate": json.loads(gate) if gate else None, "serving_check": check}


def _data_section(store, config: PipelineConfig, example_gen) -> dict:
    """The ingest report of the examples this run used, folded into the summary."""
    examples = outputs(store, example_gen)["Examples"]
    report = read_ingest_report(examples.uri)
    return {"path": config.data, "format": report["format"], "splits": report["splits"],
            "classes": report["classes"], "per_class": report["per_class"],
            "shapes": report["shapes"], "skipped": len(report["skipped"]),
            "skipped_files": report["skipped"], "ignored": report["ignored"],
            "empty_classes": report["empty_classes"], "examples_uri": examples.uri}


def _training_section(store, trainer) -> Optional[dict]:
    """The Trainer's steady-state fit throughput (modules/progress.FitThroughput)."""
    from modules.epoch_progress import read_fit_stats
    model_run = outputs(store, trainer).get("ModelRun") if trainer else None
    return read_fit_stats(model_run.uri) if model_run else None


def build_summary(config: PipelineConfig, total_seconds: float) -> dict:
    """The summary.json contract for the latest run (see docs/data.md, "Run summary")."""
    store = open_store(config)
    nodes = latest_run(store, config.pipeline_name)
    timings = {node: round((e.last_update_time_since_epoch - e.create_time_since_epoch) / 1e3, 3)
               for node, e in nodes.items()}
    timings["total"] = round(total_seconds, 3)
    data = _data_section(store, config, nodes["ImageExampleGen"])
    return {
        "data": data,
        "eval": _eval_section(store, nodes.get("Evaluator"), config, data["classes"]),
        "pushed": _pushed_section(store, nodes.get("Pusher")),
        "training": _training_section(store, nodes.get("Trainer")),
        "timings_s": timings,
        "cached": [node for node, e in nodes.items() if e.last_known_state == _State.CACHED],
    }


def write_summary(config: PipelineConfig, summary: dict) -> None:
    """Writes summary.json atomically: readers never see a half-written file."""
    tmp = config.summary_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False)
    os.replace(tmp, config.summary_path)


def data_warnings(empty_classes: List[str], skipped: List[dict]) -> List[str]:
    """Lines about data that was present but not used; none when all was used."""
    lines = []
    if empty_classes:
        lines.append("warning   folders without images are not classes: "
                     + ", ".join(empty_classes))
    if skipped:
        lines.append(f"warning   {len(skipped)} undecodable image(s) skipped, e.g. "
                     f"{skipped[0]['path']}: {skipped[0]['reason']}")
    return lines


def _training_line(training: Optional[dict]) -> List[str]:
    if not training or not training.get("examples_per_s"):
        return []
    return [f"training  {training['examples_per_s']:,.0f} examples/s in fit after the first "
            f"epoch ({training['first_epoch_s']:.1f}s)"]


def _serving_check_line(check: Optional[dict]) -> List[str]:
    if not check:
        return []
    if not check["ok"]:
        return [f"serving   check FAILED, not pushed: {check['reason']}"]
    if check.get("p50_ms") is None:
        return [f"serving   {check['reason']}"]
    return [f"serving   check passed: {check['warmup_records']} warmup requests replayed, "
            f"{check['rest_requests']} REST requests p50 {check['p50_ms']:.1f} ms, "
            f"p99 {check['p99_ms']:.1f} ms"]


def format_summary(summary: dict) -> str:
    """A few lines for humans; summary.json has the rest."""
    data, evaluation, pushed = summary["data"], summary["eval"], summary["pushed"]
    accuracy = evaluation["accuracy"]
    baseline = evaluation["baseline_accuracy"]
    lines: List[str] = [
        f"data      {data['path']}: {len(data['classes'])} classes, "
        + ", ".join(f"{k} {v}" for k, v in data["splits"].items())
        + f"; {data['skipped']} skipped, {data['ignored']} ignored",
        "accuracy  " + ("n/a" if accuracy is None else f"{accuracy:.4f}")
        + ("" if baseline is None else f" (baseline {baseline:.4f})")
        + (" - blessed" if evaluation["blessed"] else " - NOT blessed")
        + f" ({evaluation['reason']})",
        f"pushed    {pushed['serving'] or 'nothing'}",
        *_serving_check_line(pushed.get("serving_check")),
        *([f"tflite    {pushed['tflite'] or 'not pushed: ' + pushed['tflite_gate']['reason']}"]
          if pushed.get("tflite_gate") else []),
        *data_warnings(data["empty_classes"], data["skipped_files"]),
        *_training_line(summary.get("training")),
        f"time      {summary['timings_s']['total']:.1f}s total, "
        f"{len(summary['cached'])}/{len(summary['timings_s']) - 1} components cached: "
        + ", ".join(f"{node} {seconds:.1f}" for node, seconds in summary["timings_s"].items()
                    if node != "total"),
    ]
    return "\n".join(lines)
