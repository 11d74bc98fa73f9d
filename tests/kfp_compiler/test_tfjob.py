"""The TFJob the Trainer step submits: its name, its account, and how its status is read."""
import base64
import json

import pytest

from kfp_compiler import tfjob


def test_job_names_are_dns_labels_one_per_execution():
    a, b = tfjob.job_name("My_Pipeline", "args-1"), tfjob.job_name("My_Pipeline", "args-2")
    assert a.startswith("my-pipeline-train-") and a != b
    long = tfjob.job_name("9" * 60, "args")  # a letter first; its Services fit 63 characters
    assert long.startswith("p-9") and len(long + "-worker-12") <= 63


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
        tfjob.finished(_status(("Running", "False", ""),
                               ("Failed", "True", "worker 1 exited 137")))


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


class _Conflict(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


class _Api:
    """The four CustomObjectsApi calls `_create` makes, on one stored job."""

    def __init__(self, existing):
        self.job, self.calls = existing, []

    def create_namespaced_custom_object(self, *where):
        self.calls.append("create")
        if self.job is not None:
            raise _Conflict(409)
        self.job = where[-1]

    def get_namespaced_custom_object(self, *where):
        return self.job

    def delete_namespaced_custom_object(self, *where):
        self.calls.append("delete")
        self.job = None


@pytest.mark.parametrize("existing, calls", [
    (None, ["create"]),
    (_status(("Running", "True", "")), ["create"]),  # a retry waits on its own job
    (_status(("Failed", "True", "oom")), ["create", "delete", "create"]),  # or starts again
])
def test_a_retried_execution_finds_its_job(monkeypatch, existing, calls):
    monkeypatch.setattr(tfjob, "_POLL_S", 0)
    api = _Api(existing)
    manifest = {"metadata": {"name": "p-train-1", "namespace": "ns"}}
    tfjob._create(api, _Conflict, manifest, ("g", "v", "ns", "tfjobs"))  # noqa: SLF001
    assert api.calls == calls and api.job is not None
