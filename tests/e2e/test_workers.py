"""`imagepipe run --workers 2 [--ps 1]`: the Trainer on local worker processes, as a cluster's.

Each task is TFX's own run_executor with a TF_CONFIG naming all of them on
loopback ports (modules/cluster/launcher.py), under MultiWorkerMirroredStrategy,
or with --ps under ParameterServerStrategy, the chief coordinating.
"""
import json
import os
import subprocess

import pytest

from tests.support.cli import failure, imagepipe, read_summary
from tests.support.paths import IMAGEPIPE


# Set in each run's environment, which its processes inherit: _executors() finds this
# test's processes only, not those of a test running beside it (pytest -n).
MARK = "IMAGEPIPE_TEST_RUN"


def _env(tmp_path, extra=None) -> dict:
    return {**os.environ, MARK: str(tmp_path), **(extra or {})}


def _imagepipe(tmp_path, *args, env=None, timeout=900) -> subprocess.CompletedProcess:
    return imagepipe(*args, timeout=timeout, env=_env(tmp_path, env))


@pytest.mark.slow
def test_two_workers_train_a_blessed_model_that_only_the_chief_exports(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = _imagepipe(tmp_path, "run", "--workers", 2, "--output", tmp_path / "out",
                        env={"TMPDIR": str(scratch)})
    assert result.returncode == 0, failure(result)
    assert "workers: 2 local processes, MultiWorkerMirroredStrategy" in result.stdout
    summary = read_summary(tmp_path / "out")
    training = summary["training"]
    assert (training["strategy"], training["workers"], training["replicas"]) == (
        "MultiWorkerMirroredStrategy", 2, 2)
    assert summary["plan"]["values"]["workers"] == 2
    assert summary["eval"]["blessed"] and summary["eval"]["accuracy"] >= 0.9
    # One replica's batch of 64 on each worker: 128 examples a step.
    assert training["examples_per_epoch"] % 128 == 0
    _assert_only_the_chief_exported_and_pushed(tmp_path / "out")  # worker 1: a scratch folder
    caches = tmp_path / "out" / "decode_cache"
    assert not (caches.exists() and list(caches.iterdir()))  # scratch and caches removed
    assert not list(scratch.iterdir())


@pytest.mark.slow
def test_two_workers_and_a_parameter_server_train_under_the_chiefs_coordination(tmp_path):
    result = _imagepipe(tmp_path, "run", "--workers", 2, "--ps", 1,
                        "--output", tmp_path / "out")
    assert result.returncode == 0, failure(result)
    assert ("ParameterServerStrategy: a coordinator, 2 worker(s) and 1 parameter server(s)"
            in result.stdout)
    summary = read_summary(tmp_path / "out")
    training = summary["training"]
    assert (training["strategy"], training["workers"], training["parameter_servers"]) == (
        "ParameterServerStrategy", 2, 1)
    assert summary["plan"]["values"]["steps_per_execution"] == 8
    assert summary["eval"]["blessed"] and summary["eval"]["accuracy"] >= 0.9
    _assert_only_the_chief_exported_and_pushed(tmp_path / "out")
    assert not _executors(tmp_path)  # the servers, which never end by themselves, were stopped


def _assert_only_the_chief_exported_and_pushed(out) -> None:
    versions = os.listdir(out / "serving" / "imagepipe")
    assert len([v for v in versions if v.isdigit()]) == 1
    assert len(list((out / "tfx" / "Trainer" / "model").iterdir())) == 1


def _executors(tmp_path) -> dict:
    """{pid: environ} of the live processes of TFX's run_executor (the local cluster's tasks)
    that the test with `tmp_path` started."""
    mark = f"{MARK}={tmp_path}\0".encode()
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"tfx.scripts.run_executor" not in f.read():
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
            if mark in environ:
                found[int(pid)] = environ
        except OSError:
            continue
    return found


@pytest.mark.integration
@pytest.mark.parametrize("tf_config, words", [
    ("not json", "TF_CONFIG is not JSON"),
    (json.dumps({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"], "ps": ["127.0.0.1:3"]},
                 "task": {"type": "worker", "index": 0}}), "needs a chief"),
    (json.dumps({"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker",
                                                               "index": 3}}),
     "task index 3 is not among"),
])
def test_a_bad_tf_config_exits_2_before_anything_runs(tmp_path, tf_config, words):
    result = _imagepipe(tmp_path, "run", "--output", tmp_path / "out",
                        env={"TF_CONFIG": tf_config})
    assert result.returncode == 2 and words in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and not (tmp_path / "out" / "tfx").exists()


@pytest.mark.integration
def test_workers_and_a_tf_config_together_are_refused(tmp_path):
    config = json.dumps({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},
                         "task": {"type": "worker", "index": 0}})
    result = _imagepipe(tmp_path, "run", "--workers", 2, "--output", tmp_path / "out",
                        env={"TF_CONFIG": config})
    assert result.returncode == 2 and "--workers" in result.stderr, result.stderr[-2000:]


def _worker_pid(tmp_path, index: int) -> int:
    """The process of local worker `index`: TFX's run_executor with that TF_CONFIG task."""
    for pid, environ in _executors(tmp_path).items():
        if f'"task": {{"type": "worker", "index": {index}}}'.encode() in environ:
            return pid
    raise AssertionError(f"no worker {index} running")


@pytest.mark.slow
def test_a_worker_killed_at_epoch_2_fails_the_run_and_the_rerun_resumes(tmp_path):
    args = [str(IMAGEPIPE), "run", "--workers", "2", "--output", str(tmp_path / "out"),
            "--epochs", "6", "--early-stopping-patience", "0", "--accuracy-threshold", "0"]
    run = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=_env(tmp_path))
    lines = []
    for line in run.stdout:
        lines.append(line)
        if line.strip().startswith("epoch 2/"):
            os.kill(_worker_pid(tmp_path, 1), 9)
            break
    rest, errors = run.communicate(timeout=600)
    assert run.returncode == 1 and "training worker 1 (of 2 tasks) failed" in errors, errors[-2000:]
    rerun = _imagepipe(tmp_path, *args[1:])
    assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    epochs = [int(line.split()[1].split("/")[0]) for line in rerun.stdout.splitlines()
              if line.strip().startswith("epoch ")]
    assert epochs[0] > 1 and epochs[-1] == 6, epochs  # resumed from BackupAndRestore
    # The killed worker's scratch folder was removed by the re-run (its process is gone).
    caches = tmp_path / "out" / "decode_cache"
    assert not (caches.exists() and list(caches.iterdir()))
