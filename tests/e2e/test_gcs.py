"""Data, outputs and the pipeline root in Cloud Storage, against a real GCS server.

`scripts/with_gcs.sh` starts fake-gcs-server in a private network namespace;
tests/support/gcs_e2e_steps.py runs inside it: it uploads the bundled digits, runs
`imagepipe run --data gs://… --output gs://…`, `imagepipe predict` and
`imagepipe monitor` from and to the bucket, and the bad-input cases (the
compiled Kubeflow package on a gs:// pipeline root is
tests/e2e/test_kubeflow_weeks.py's). The test reads what each
step returned and left. The bucket `locked` exists but refuses every request
(HTTP 403).
"""
import pytest

from tests.support.gcs_harness import NEEDS_ROOT, exited, run_steps

pytestmark = [pytest.mark.slow, NEEDS_ROOT]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("gcs_e2e")
    return run_steps("tests.support.gcs_e2e_steps", work / "results.json", work,
                     gcs_flags=("--deny-bucket", "locked"))


def test_the_digits_upload_through_tensorflows_client(results):
    assert results["upload_digits"].get("files") == 1000, results["upload_digits"]


def test_a_run_with_data_and_output_in_the_bucket_is_blessed_and_pushed_there(results):
    run = exited(results["run_pipeline"])
    summary = run["summary"]
    assert summary["data"]["path"] == "gs://imagepipe-test/mnist"
    assert sum(summary["data"]["splits"].values()) == 1000
    assert summary["eval"]["blessed"] and summary["eval"]["accuracy"] >= 0.9
    pushed = summary["pushed"]
    assert pushed["serving"].startswith("gs://imagepipe-test/run/serving/imagepipe/")
    assert pushed["serving_check"]["ok"]
    assert "tf_serving_warmup_requests" in run["assets_extra"]
    assert "serving_default" in run["signatures"]
    assert {"model.tflite", "labels.txt", "model_info.json"} <= set(run["tflite"])
    assert run["report"] and run["models_config"]
    assert summary["data"]["examples_uri"].startswith("gs://imagepipe-test/run/tfx/")
    # ML Metadata and the lock stay on this machine, in the named state folder.
    assert "metadata.sqlite" in run["state"]
    assert "state     " in run["stdout"]
    # The planned time budget decided during the fit, its state kept in the bucket.
    cap = summary["training"]["time_cap"]
    assert cap["first_epoch_s"] > 0 and cap["epochs"] == summary["training"]["epochs_run"] == 20


def test_predict_reads_and_writes_the_bucket(results):
    rows = exited(results["predict"])["rows"]
    assert len(rows) == 1000 and not [r for r in rows if r.get("error")]
    right = sum(r["class"] == r["path"].split("/")[-2] for r in rows)
    assert right / len(rows) > 0.9


def test_monitor_reads_a_window_in_the_bucket_and_writes_its_json_and_report_there(results):
    step = results["monitor"]
    assert step["code"] in (0, 3), step["stdout"][-3000:] + step["stderr"][-3000:]  # 3: alerting
    found = step["json"]
    assert (found["data"], found["model"]) == ("gs://imagepipe-test/window", "imagepipe")
    assert found["window"]["records"] == 50 and found["window"]["bad"] == 0
    assert found["measures"]["accuracy"]["labeled"] == 50
    assert found["healthy"] == (step["code"] == 0)
    assert {"monitor.json", "monitor.html"} <= set(step["written"]), step["written"]


@pytest.mark.parametrize("fmt, examples", [("idx", 1000), ("npz", 1000), ("tfrecord", 1000)])
def test_every_format_is_ingested_from_the_bucket_into_the_bucket(results, fmt, examples):
    step = exited(results["formats"].get(fmt, results["formats"]))
    assert sum(step["report"]["splits"].values()) == examples
    assert len(step["report"]["classes"]) == 10


def test_dedupe_drops_the_planted_copies_in_the_bucket(results):
    step = exited(results["dedupe"])
    counts = step["report"]["data_health"]["counts"]
    assert counts["exact_groups"] == 20 and counts["dropped"] == 20
    assert sum(step["report"]["splits"].values()) == step["examples"] == 100
    assert not [path for path in step["written"] if path.endswith(".tmp")], step["written"]


def test_module_file_config_and_weights_are_read_from_the_bucket(results):
    found = results["files_in_the_bucket"]
    module = exited(found.get("module_and_config", found))["stdout"]
    assert "module file gs://imagepipe-test/code/net.py" in module
    assert "3 epochs" in module and "batch 16" in module  # from the YAML in the bucket
    weights = exited(found.get("weights", found))["stdout"]
    assert "weights gs://imagepipe-test/code/mnv2_notop.h5" in weights


@pytest.mark.parametrize("case, words", [
    ("missing_bucket", ["--data", "gs://no-such-bucket/photos", "bucket"]),
    ("refused", ["--data", "gs://locked/photos", "access refused (403)"]),
    ("missing_prefix", ["--data", "gs://imagepipe-test/no/such/prefix", "no such file"]),
    ("output_bucket", ["--output", "gs://no-such-bucket/run", "bucket"]),
    ("state_dir", ["--state-dir", "must be a local folder"]),
])
def test_bad_buckets_and_prefixes_exit_2_naming_the_uri(results, case, words):
    step = results["bad_inputs"].get(case, results["bad_inputs"])
    assert step["code"] == 2, step["stdout"][-2000:] + step["stderr"][-2000:]
    assert all(word in step["stderr"] for word in words), step["stderr"]
    assert "Traceback" not in step["stderr"]
