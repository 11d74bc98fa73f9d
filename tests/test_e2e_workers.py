"""`imagepipe run --workers 2`: the Trainer on two local worker processes, as a cluster's.

Each worker is TFX's own run_executor with a TF_CONFIG naming both on
loopback ports (modules/cluster/launcher.py), under MultiWorkerMirroredStrategy.
"""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(sys.executable), "imagepipe")


def _imagepipe(*args, env=None, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.mark.slow
def test_two_workers_train_a_blessed_model_that_only_the_chief_exports(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = _imagepipe("run", "--workers", 2, "--output", tmp_path / "out",
                        env={"TMPDIR": str(scratch)})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "workers: 2 local processes, MultiWorkerMirroredStrategy" in result.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    training = summary["training"]
    assert (training["strategy"], training["workers"], training["replicas"]) == (
        "MultiWorkerMirroredStrategy", 2, 2)
    assert summary["plan"]["values"]["workers"] == 2
    assert summary["eval"]["blessed"] and summary["eval"]["accuracy"] >= 0.9
    # One replica's batch of 64 on each worker: 128 examples a step.
    assert training["examples_per_epoch"] % 128 == 0
    versions = os.listdir(tmp_path / "out" / "serving" / "imagepipe")
    assert len([v for v in versions if v.isdigit()]) == 1
    exported = list((tmp_path / "out" / "tfx" / "Trainer" / "model").iterdir())
    assert len(exported) == 1  # the chief's; worker 1 wrote to a scratch folder
    assert not [p for p in scratch.iterdir() if p.name.startswith("imagepipe-worker")]


@pytest.mark.integration
@pytest.mark.parametrize("tf_config, words", [
    ("not json", "TF_CONFIG is not JSON"),
    (json.dumps({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"], "ps": ["127.0.0.1:3"]},
                 "task": {"type": "worker", "index": 0}}), "needs a chief"),
])
def test_a_bad_tf_config_exits_2_before_anything_runs(tmp_path, tf_config, words):
    result = _imagepipe("run", "--output", tmp_path / "out", env={"TF_CONFIG": tf_config})
    assert result.returncode == 2 and words in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and not (tmp_path / "out" / "tfx").exists()


@pytest.mark.integration
def test_workers_and_a_tf_config_together_are_refused(tmp_path):
    config = json.dumps({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},
                         "task": {"type": "worker", "index": 0}})
    result = _imagepipe("run", "--workers", 2, "--output", tmp_path / "out",
                        env={"TF_CONFIG": config})
    assert result.returncode == 2 and "--workers" in result.stderr, result.stderr[-2000:]
