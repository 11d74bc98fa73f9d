"""Continuous training end to end: spans arrive, warm starts, drift blocks, a rollback holds.

Spans made from the bundled digits: span 1 and span 2 are two halves of the
real images; span 3 is a share of them inverted (white digits turned black
on white), which drifts on brightness.
"""
import json
import re

import pytest

from settings.config import PipelineConfig
from tests.support.cli import imagepipe, run_pipeline
from tests.support.digits import make_span
from tests.support.mlflow_server import mlflow_server
from report.metadata import latest_run, open_store

pytestmark = pytest.mark.slow


def _run(spans, out, *extra):
    return run_pipeline(spans / "span-{SPAN}", out,
                        "--epochs", 4, "--early-stopping-patience", 0, "--quantize", "none",
                        "--accuracy-threshold", 0.5, "--baseline-tolerance", 0.3, *extra)


def _inputs(out, node: str) -> dict:
    """{input key: artifact URI} of `node`'s execution in the last run, from ML Metadata."""
    config = PipelineConfig.from_values(output=str(out))
    store = open_store(config)
    execution = latest_run(store, config.run.pipeline_name)[node]
    events = [e for e in store.get_events_by_execution_ids([execution.id])
              if e.type == e.INPUT]
    uris = {a.id: a.uri for a in store.get_artifacts_by_id([e.artifact_id for e in events])}
    return {e.path.steps[0].key: uris[e.artifact_id] for e in events}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Four runs on one output: span 1; span 2 arrives; drifted span 3; after a rollback."""
    root = tmp_path_factory.mktemp("continuous")
    spans, out = root / "spans", root / "out"
    make_span(spans / "span-1", take=slice(0, 50))
    runs = [_run(spans, out)]
    make_span(spans / "span-2", take=slice(50, None))
    (root / "mlflow").mkdir()
    with mlflow_server(root / "mlflow") as uri:  # run 2 is also logged to MLflow
        runs.append(_run(spans, out, "--mlflow-uri", uri))
        tracked = _tracked(uri)
    make_span(spans / "span-3", take=slice(0, 30), invert=True)
    runs.append(_run(spans, out))
    first = runs[0][0]["pushed"]["version"]
    rollback = imagepipe("rollback", "--output", out, "--to", first, check=True).stdout
    runs.append(_run(spans, out))
    # A looser brightness threshold: the judging stages run again, not the ingestion.
    runs.append(_run(spans, out, "--drift-brightness", 1))  # JS lies in 0..1
    return {"runs": runs, "out": out, "rollback": rollback, "mlflow": tracked}


def _tracked(uri: str) -> dict:
    """The one MLflow run of the pipeline's experiment: params, metrics, tags, artifacts."""
    import mlflow
    mlflow.set_tracking_uri(uri)  # artifact listing resolves the server from it
    client = mlflow.MlflowClient(tracking_uri=uri)
    [run] = client.search_runs([client.get_experiment_by_name("imagepipe").experiment_id])
    return {"params": run.data.params, "metrics": run.data.metrics, "tags": run.data.tags,
            "status": run.info.status,
            "artifacts": [a.path for a in client.list_artifacts(run.info.run_id)]}


def test_span_one_trains_from_scratch_and_is_pushed(history):
    summary, stdout = history["runs"][0]
    assert summary["spans"] == {"trained": [1], "evaluated": 1, "ingested": [1], "reused": []}
    assert summary["warm_start"]["from"] is None
    assert summary["warm_start"]["reason"] == "no earlier blessed model"
    assert summary["drift"]["verdict"] == "not compared"
    assert summary["pushed"]["version"] is not None


def test_span_two_is_ingested_alone_warm_started_blessed_and_pushed(history):
    first, (summary, stdout) = history["runs"][0][0], history["runs"][1]
    assert summary["spans"] == {"trained": [1, 2], "evaluated": 2, "ingested": [2],
                                "reused": [1]}
    warm = summary["warm_start"]
    assert warm["from"] and warm["epochs"] == 1 and warm["planned_epochs"] == 4
    assert summary["training"]["epochs_run"] == 1
    assert summary["drift"]["verdict"] == "ok", summary["drift"]
    assert summary["eval"]["blessed"] and summary["eval"]["baseline_accuracy"] is not None
    assert summary["pushed"]["version"] > first["pushed"]["version"]
    shards = re.findall(r"ingest shard \d+/(\d+):", stdout)
    assert shards and len(shards) == int(shards[0])  # one ingestion's shards: span 2 only


def test_a_drifted_span_is_flagged_and_not_pushed(history):
    summary, stdout = history["runs"][2]
    drift = summary["drift"]
    assert drift["verdict"] == "drift" and "brightness" in drift["drifted"]
    assert summary["pushed"]["version"] is None and summary["pushed"]["serving"] is None
    assert "brightness" in summary["pushed"]["blocked"] or "drift" in summary["eval"]["reason"]
    assert "drift     span 3 against span 2" in stdout
    assert "--allow-drift" in stdout


def test_rollback_serves_version_one_and_the_next_run_compares_against_it(history):
    out = history["out"]
    first, second = (history["runs"][i][0]["pushed"] for i in (0, 1))
    assert f"serving version {first['version']} (was {second['version']})" in \
        history["rollback"]
    models_config = (out / "serving" / "models.config").read_text()
    assert f"versions: {first['version']}" in models_config
    listing = imagepipe("versions", "--output", out, check=True).stdout
    rows = {line.split()[0]: line for line in listing.splitlines()[2:]}
    assert "served" in rows[str(first["version"])]
    assert "rolled back" in rows[str(second["version"])]
    # The run after the rollback: its baseline is the model of version 1.
    pushed_from = json.loads((out / "serving" / "imagepipe" / str(first["version"]) /
                              "assets.extra" / "imagepipe_push.json").read_text())
    assert _inputs(out, "Evaluator")["baseline_model"] == pushed_from["source_uri"]
    # And the Trainer started from it: the rolled-back version 2 is no starting point.
    summary = history["runs"][3][0]
    assert summary["warm_start"]["from"] == pushed_from["source_uri"]


def test_a_changed_drift_threshold_rejudges_without_ingesting_again(history):
    before, (summary, stdout) = history["runs"][3][0], history["runs"][4]
    assert "ImageExampleGen" in summary["cached"] and "Trainer" in summary["cached"]
    assert "DistributionValidator" not in summary["cached"]
    assert "Evaluator" not in summary["cached"]
    assert before["drift"]["verdict"] == "drift"
    assert summary["drift"]["verdict"] == "ok", summary["drift"]
    assert summary["drift"]["features"]["brightness"]["threshold"] == 1


def test_the_run_is_logged_to_mlflow_with_its_spans_verdicts_and_push(history):
    summary, stdout = history["runs"][1]
    tracked = history["mlflow"]
    assert tracked["status"] == "FINISHED" and "mlflow    run " in stdout
    assert tracked["params"]["train_spans"] == "0"
    assert tracked["params"]["data"].endswith("span-{SPAN}")
    assert tracked["metrics"]["accuracy"] == pytest.approx(summary["eval"]["accuracy"])
    tags = tracked["tags"]
    assert tags["imagepipe.spans_trained"] == "1,2" and tags["imagepipe.drift"] == "ok"
    assert tags["imagepipe.warm_start_from"] == summary["warm_start"]["from"]
    assert tags["imagepipe.pushed_uri"] == summary["pushed"]["serving"]
    assert tracked["artifacts"] == ["summary.json"]
