"""The TFJob the Trainer step submits: its name, its account, and how its status is read."""
import base64
import json

import pytest

from modules.cluster import tfjob


def test_job_names_are_dns_labels_one_per_execution():
    a, b = tfjob.job_name("My_Pipeline", "args-1"), tfjob.job_name("My_Pipeline", "args-2")
    assert a.startswith("my-pipeline-train-") and a != b and len(a) <= 63


def _status(*conditions) -> dict:
    return {"metadata": {"name": "p-train-1"},
            "status": {"conditions": [{"type": t, "status": s, "message": m}
                                      for t, s, m in conditions]}}


def test_status_running_then_succeeded():
    assert not tfjob.finished({"metadata": {"name": "p"}})  # no status yet
    assert not tfjob.finished(_status(("Created", "True", ""), ("Running", "True", "")))
    assert tfjob.finished(_status(("Running", "False", ""), ("Succeeded", "True", "")))


def test_a_failed_job_raises_the_operators_message():
    with pytest.raises(RuntimeError, match="TFJob p-train-1 failed: worker 1 exited 137"):
        tfjob.finished(_status(("Running", "False", ""), ("Failed", "True", "worker 1 exited 137")))


def test_replicas_run_as_the_steps_own_account(tmp_path, monkeypatch):
    claims = {"sub": "system:serviceaccount:team-a:imagepipe-runner"}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    (tmp_path / "token").write_text(f"header.{payload}.signature")
    monkeypatch.setattr(tfjob, "_ACCOUNT_DIR", str(tmp_path))
    settings = tfjob.job_settings("p", "img", 2, 0)
    manifest = tfjob.tfjob_manifest("p-train-1", settings, [])
    assert manifest["metadata"]["namespace"] == "team-a"
    pod = manifest["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"]
    assert pod["serviceAccountName"] == "imagepipe-runner"


def test_outside_a_pod_the_namespace_is_default_and_no_account_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(tfjob, "_ACCOUNT_DIR", str(tmp_path / "absent"))
    manifest = tfjob.tfjob_manifest("p-train-1", tfjob.job_settings("p", "img", 2, 0), [])
    assert manifest["metadata"]["namespace"] == "default"
    assert "serviceAccountName" not in manifest["spec"]["tfReplicaSpecs"]["Chief"]["template"][
        "spec"]
