"""The run summary: read the latest run back from ML Metadata into summary.json.

Everything comes from what the components recorded (executions, artifacts,
their files), never from what the runner believes it asked for: a cached
component reports the artifacts it reused, and a failed one is found by state.
"""
import json
import os
from typing import List, Optional

import tensorflow_model_analysis as tfma

from core import contract as ids
from core.contract import (DRIFT_PROPERTY, LABEL_KEY, REASON_PROPERTY,
                           SERVING_CHECK_PROPERTY, TFLITE_PARITY_PROPERTY, VERDICT_PROPERTY,
                           VERDICT_REASON_PROPERTY, VETOED_PROPERTY, read_drift,
                           read_ingest_report)
from core.storage import files
from components.image_pusher.versions import serving_state
from components.image_evaluator.accuracy import overall_figures, slice_accuracies
from settings.config import PipelineConfig
from report.evaluation import accuracies, blessing_reason, confusion_matrix
from report.metadata import State, latest_run, open_store, outputs, prop
from report import trust, uncertainty
from report.verdicts import chance_text

MATRIX_MAX_CLASSES = 1000


def _eval_section(store, evaluator, config: PipelineConfig, classes: List[str],
                  audit: Optional[dict]) -> dict:
    if evaluator is None:
        return {"accuracy": None, "baseline_accuracy": None, "per_class": {},
                "confusion_matrix": None, "blessed": False, "reason": "the Evaluator did not run",
                **trust.audit_eval_fields(None, None), **_uncertainty_fields(None, None, [])}
    produced = outputs(store, evaluator)
    uri = produced["ModelEvaluation"].uri
    overall, per_label = accuracies(uri)
    baseline = overall.get("baseline")
    evaluation = {
        **trust.audit_eval_fields(audit, uri), **_uncertainty_fields(uri, audit, classes),
        "accuracy": overall.get("candidate", overall.get("")),
        "baseline_accuracy": baseline,
        # null for a class with no eval images (TFMA then has no slice for it)
        "per_class": {name: per_label.get(label) for label, name in enumerate(classes)},
        # rows: actual class, columns: predicted class, in `data.classes` order
        # (null above MATRIX_MAX_CLASSES: 1,000 classes is already 4 MB of JSON)
        "confusion_matrix": (confusion_matrix(uri, len(classes))
                             if len(classes) <= MATRIX_MAX_CLASSES else None),
        "blessed": prop(produced["ModelBlessing"], "blessed") == 1,
        "vetoed": prop(produced["ModelBlessing"], VETOED_PROPERTY) or None}
    evaluation["threshold"] = uncertainty.threshold_check(
        evaluation, config.evaluation.accuracy_threshold)
    evaluation["reason"] = "; ".join(filter(None, [
        blessing_reason(tfma.load_validation_result(uri), config, baseline),
        evaluation["vetoed"], chance_text(evaluation["threshold"])]))
    return evaluation


def _uncertainty_fields(uri: Optional[str], audit: Optional[dict], classes: List[str]) -> dict:
    """The counts and 95% intervals of `eval`'s accuracies, and the paired change from the
    baseline (report/uncertainty.py); nulls without an evaluation."""
    figures = overall_figures(uri) if uri else {}
    cells = slice_accuracies(uri, [LABEL_KEY]).get(LABEL_KEY, {}) if uri else {}
    return {**uncertainty.accuracy_fields(figures), **uncertainty.leak_free_fields(audit),
            "per_class_interval": uncertainty.per_class_intervals(cells, classes),
            "baseline_difference": uncertainty.baseline_difference(audit, figures),
            "threshold": None}


def _verdict(store, node, artifact_type: str, key: str) -> Optional[dict]:
    """A stage's verdict, recorded as JSON on its output (None if it did not run)."""
    produced = outputs(store, node).get(artifact_type) if node else None
    value = prop(produced, key) if produced is not None else None
    return json.loads(value) if value else None


def drift_verdict(store, nodes: dict) -> Optional[dict]:
    """The drift verdict the run judged by: the one the Evaluator recorded on its
    blessing, else the DistributionValidator's drift.json (an Evaluator that did not run
    or was given none); None without either (data without spans, an older run)."""
    evaluator = nodes.get(ids.EVALUATOR_ID)
    blessing = outputs(store, evaluator).get("ModelBlessing") if evaluator else None
    recorded = prop(blessing, DRIFT_PROPERTY) if blessing is not None else None
    if recorded:
        return json.loads(recorded)
    validator = nodes.get(ids.DRIFT_VALIDATOR_ID)
    anomalies = outputs(store, validator).get("ExampleAnomalies") if validator else None
    return read_drift(anomalies.uri) if anomalies is not None else None


def _tflite_gate(store, node) -> Optional[dict]:
    """The TFLiteConverter's parity gate and its reason (None if it converted nothing:
    it did not run, or a blessing refused the model)."""
    produced = outputs(store, node).get("Model") if node else None
    parity = prop(produced, TFLITE_PARITY_PROPERTY) if produced is not None else None
    return ({**json.loads(parity), "reason": prop(produced, REASON_PROPERTY),
             "quantize": prop(produced, ids.QUANTIZE_PROPERTY)} if parity else None)


def _pushed_section(store, nodes: dict, evaluation: dict) -> dict:
    """What was pushed; `blocked` says why not when a gate (drift, rollback) stopped it,
    and `verdict` what the Pusher decided and whom it blamed (the model or the data).
    The serving check and the TFLite gate are read from the stages that made them."""
    pushed = outputs(store, nodes[ids.PUSHER_ID]).get("PushedModel") \
        if ids.PUSHER_ID in nodes else None
    section = _pushed(store, nodes, evaluation, pushed)
    kind = prop(pushed, VERDICT_PROPERTY) if pushed is not None else None
    section["verdict"] = ({"kind": kind, "reason": prop(pushed, VERDICT_REASON_PROPERTY)}
                          if kind else None)
    return section


def _pushed(store, nodes: dict, evaluation: dict, pushed) -> dict:
    check = _verdict(store, nodes.get(ids.INFRA_VALIDATOR_ID), "InfraBlessing",
                     SERVING_CHECK_PROPERTY)
    gate = _tflite_gate(store, nodes.get(ids.TFLITE_CONVERTER_ID))
    if pushed is None or prop(pushed, "pushed") != 1:
        vetoed = evaluation.get("vetoed")
        # The converter's verdict where it refused the file; a file that passed its gate
        # but was not pushed (drift, a rollback) has `blocked` say why.
        gate = gate if gate and not gate.get("ok") else None
        return {"serving": None, "tflite": None, "version": None, "tflite_gate": gate,
                "serving_check": check,
                "blocked": (prop(pushed, "blocked") if pushed is not None else None) or vetoed}
    serving, version = prop(pushed, "pushed_destination"), int(prop(pushed, "pushed_version"))
    if version in serving_state(os.path.dirname(serving)).rolled_back:
        # A cached Pusher's version that a rollback has since taken out of service.
        return {"serving": None, "tflite": None, "version": None, "tflite_gate": None,
                "serving_check": check, "blocked": f"version {version}, which this run's "
                "cached Pusher reports, was rolled back (imagepipe rollback)"}
    return {"serving": serving, "tflite": prop(pushed, "tflite_destination") or None,
            "version": version, "tflite_gate": gate, "serving_check": check, "blocked": None}


def _data_section(config: PipelineConfig, examples_uri: str, report: dict) -> dict:
    """The ingest report of the examples this run used, folded into the summary."""
    return {"path": config.ingest.data, "format": report["format"], "splits": report["splits"],
            "classes": report["classes"], "per_class": report["per_class"],
            "shapes": report["shapes"], "skipped": len(report["skipped"]),
            "skipped_files": report["skipped"], "ignored": report["ignored"],
            "empty_classes": report["empty_classes"], "examples_uri": examples_uri,
            "spans": report.get("spans"), "drift": report.get("drift")}


def _spans_section(data: dict) -> Optional[dict]:
    """The spans trained and evaluated on (a {SPAN} pattern), or None."""
    if not data["spans"]:
        return None
    return {"trained": [s["span"] for s in data["spans"]],
            "evaluated": data["spans"][-1]["span"],
            "ingested": [s["span"] for s in data["spans"] if not s["reused"]],
            "reused": [s["span"] for s in data["spans"] if s["reused"]]}


def _training_section(store, trainer) -> Optional[dict]:
    """The Trainer's steady-state fit throughput (modules/progress.FitThroughput)."""
    from modules.epoch_progress import read_fit_stats
    model_run = outputs(store, trainer).get("ModelRun") if trainer else None
    return read_fit_stats(model_run.uri) if model_run else None


def _tuning_section(store, tuner, training: Optional[dict]) -> Optional[dict]:
    """The search's trials (components/image_tuner/), None for a run without --tune."""
    if tuner is None:
        return None
    from components.image_tuner.trials import tuning_summary
    produced = outputs(store, tuner)
    if "HyperParameters" not in produced:  # the Tuner failed
        return None
    return tuning_summary(produced["HyperParameters"].uri, produced["TunerResults"].uri,
                          (training or {}).get("hyperparameters"))


def build_summary(config: PipelineConfig, total_seconds: float) -> dict:
    """The summary.json contract for the latest run (see docs/data.md, "Run summary")."""
    store = open_store(config)
    nodes = latest_run(store, config.run.pipeline_name)
    timings = {node: round((e.last_update_time_since_epoch - e.create_time_since_epoch) / 1e3, 3)
               for node, e in nodes.items()}
    timings["total"] = round(total_seconds, 3)
    examples_uri = outputs(store, nodes[ids.EXAMPLE_GEN_ID])["Examples"].uri
    report = read_ingest_report(examples_uri)
    data = _data_section(config, examples_uri, report)
    training = _training_section(store, nodes.get(ids.TRAINER_ID))
    evaluator = nodes.get(ids.EVALUATOR_ID)
    # the Evaluator's audit (components/image_evaluator/audit/), None for a run without one
    audit = (trust.read_audit(outputs(store, evaluator)["ModelEvaluation"].uri)
             if evaluator is not None else None)
    evaluation = _eval_section(store, evaluator, config, data["classes"], audit)
    pushed = _pushed_section(store, nodes, evaluation)
    pushed["model_card"] = trust.model_card(pushed["serving"])
    return {
        "data": data,
        "data_health": trust.data_health_section(report),
        **trust.audit_sections(audit),
        "spans": _spans_section(data),
        "warm_start": (training or {}).get("warm_start"),
        "drift": drift_verdict(store, nodes),
        "eval": evaluation,
        "pushed": pushed,
        "training": training,
        "tuning": _tuning_section(store, nodes.get(ids.TUNER_ID), training),
        "timings_s": timings,
        "cached": [node for node, e in nodes.items() if e.last_known_state == State.CACHED],
    }


def write_summary(config: PipelineConfig, summary: dict) -> None:
    """Writes summary.json atomically: readers never see a half-written file."""
    files.write_text(config.summary_path, json.dumps(summary, indent=2, ensure_ascii=False))
