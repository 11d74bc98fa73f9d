"""`--mlflow-uri`: each run's settings, metrics and verdicts, logged to an MLflow server.

An extra (`pip install 'imagepipe[mlflow]'`), imported only when the flag is
given. ML Metadata stays the pipeline's own record; MLflow is where a team
already compares runs. One MLflow experiment per pipeline name, one MLflow
run per `imagepipe run`, logged from its summary.json once it is written:
- params: the run's effective settings (the planned ones included);
- metrics: accuracy and the baseline's, per-class accuracy, training speed,
  epochs, seconds;
- tags: spans, the warm start, the drift verdict, blessing, the pushed
  version's URI, and why a push was blocked;
- the summary itself, as an artifact.
"""
import dataclasses
import os
import time
from typing import Dict, Optional

from settings.config import PipelineConfig
from core.errors import UsageError

# MLflow refuses longer param values (mlflow.utils.validation, MAX_PARAM_VAL_LENGTH in 2.x).
MAX_PARAM_CHARS = 6000
# A check at start-up fails fast instead of retrying for minutes (MLflow's default).
CHECK_TIMEOUT_S, CHECK_RETRIES = "10", "0"


def _mlflow():
    try:
        import mlflow
    except ImportError:
        raise UsageError("--mlflow-uri needs MLflow: pip install 'imagepipe[mlflow]'") from None
    return mlflow


def check_server(uri: str) -> None:
    """Before the run: the server answers (exit 2 naming the flag if not)."""
    mlflow = _mlflow()
    limits = {"MLFLOW_HTTP_REQUEST_TIMEOUT": CHECK_TIMEOUT_S,
              "MLFLOW_HTTP_REQUEST_MAX_RETRIES": CHECK_RETRIES}
    saved = {k: os.environ.get(k) for k in limits}
    os.environ.update(limits)
    try:
        mlflow.MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    except Exception as e:  # noqa: BLE001  (connection, HTTP and MLflow errors alike)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"--mlflow-uri {uri}: the MLflow server does not answer: "
                         f"{first[:300]}") from None
    finally:
        for key, value in saved.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value


def params(config: PipelineConfig) -> Dict[str, str]:
    """Every setting of the run, as MLflow params (strings, None as "")."""
    values = config.flat()
    return {k: ("" if v is None else str(v))[:MAX_PARAM_CHARS] for k, v in values.items()}


def metrics(summary: dict) -> Dict[str, float]:
    """The run's numbers; absent ones are left out (MLflow has no null)."""
    evaluation, training = summary["eval"], summary.get("training") or {}
    found = {"accuracy": evaluation["accuracy"],
             "baseline_accuracy": evaluation["baseline_accuracy"],
             "examples_per_s": training.get("examples_per_s"),
             "epochs_run": training.get("epochs_run"),
             "seconds_total": summary["timings_s"]["total"],
             **_trust_metrics(summary)}
    found.update({f"accuracy_class_{name}": value
                  for name, value in (evaluation.get("per_class") or {}).items()})
    return {_metric_name(k): float(v) for k, v in found.items() if v is not None}


def _trust_metrics(summary: dict) -> Dict[str, Optional[float]]:
    """The audit's and data health's figures (report/trust.py), where measured."""
    evaluation = summary["eval"]
    robustness, slices = summary.get("robustness") or {}, summary.get("slices") or {}
    health = (summary.get("data_health") or {}).get("counts") or {}
    return {"accuracy_without_leaked": evaluation.get("accuracy_without_leaked"),
            "leakage_gain": evaluation.get("leakage_gain"),
            "robust_accuracy": robustness.get("mean"),
            "fgsm_accuracy": (robustness.get("fgsm") or {}).get("accuracy"),
            "slice_gap": slices.get("gap"),
            "suspected_label_errors": (summary.get("suspects") or {}).get("flagged"),
            "duplicate_images": health.get("duplicate_images"),
            "leaked_images": health.get("leaked")}


def _metric_name(name: str) -> str:
    """MLflow allows letters, digits and _-. /: class names may hold anything."""
    return "".join(c if c.isalnum() or c in "_-. /" else "_" for c in name)


def tags(summary: dict) -> Dict[str, str]:
    """What a run decided, as tags: spans, warm start, drift, blessing, the push."""
    spans, warm = summary.get("spans") or {}, summary.get("warm_start") or {}
    drift, pushed = summary.get("drift") or {}, summary["pushed"]
    found = {"imagepipe.spans_trained": ",".join(map(str, spans.get("trained", []))),
             "imagepipe.span_evaluated": spans.get("evaluated"),
             "imagepipe.warm_start_from": warm.get("from"),
             "imagepipe.warm_start_reason": warm.get("reason"),
             "imagepipe.drift": drift.get("verdict"),
             "imagepipe.drifted": ",".join(drift.get("drifted", [])),
             "imagepipe.blessed": str(summary["eval"]["blessed"]).lower(),
             "imagepipe.blessing_reason": summary["eval"]["reason"],
             "imagepipe.pushed_uri": pushed["serving"],
             "imagepipe.pushed_version": pushed["version"],
             "imagepipe.blocked": pushed.get("blocked")}
    return {k: str(v)[:MAX_PARAM_CHARS] for k, v in found.items() if v not in (None, "")}


def log_run(config: PipelineConfig, summary: dict) -> Optional[str]:
    """Logs the run to --mlflow-uri; returns the MLflow run id (None without a URI)."""
    if not config.tracking.mlflow_uri:
        return None
    mlflow = _mlflow()
    # The client's artifact uploads (mlflow-artifacts:/ URIs) resolve the server from
    # the process-wide tracking URI, not the client's (mlflow_artifacts_repo.py, 2.22).
    mlflow.set_tracking_uri(config.tracking.mlflow_uri)
    client = mlflow.MlflowClient(tracking_uri=config.tracking.mlflow_uri)
    experiment = client.get_experiment_by_name(config.run.pipeline_name)
    experiment_id = (experiment.experiment_id if experiment is not None
                     else client.create_experiment(config.run.pipeline_name))
    run = client.create_run(experiment_id, tags=tags(summary),
                            run_name=f"{config.run.pipeline_name}-{summary['pushed']['version']}"
                            if summary["pushed"]["version"] else None)
    run_id = run.info.run_id
    try:
        from mlflow.entities import Metric, Param
        now = int(time.time() * 1000)
        client.log_batch(run_id, params=[Param(k, v) for k, v in params(config).items()],
                         metrics=[Metric(k, v, now, 0) for k, v in metrics(summary).items()])
        client.log_dict(run_id, summary, "summary.json")
    except BaseException:
        client.set_terminated(run_id, status="FAILED")
        raise
    client.set_terminated(run_id, status="FINISHED")
    return run_id
