"""SIGKILL `imagepipe run` during ImageExampleGen, the Trainer and the Pusher; then re-run.

One output directory through four runs, as a preempted machine would see it:
  A killed while ingesting, B killed after two training epochs, C (which
  resumes training) killed while pushing, D completes.
After every kill: ML Metadata reads, and the push destinations hold only
complete versions. Each re-run reuses what finished before (cache hits), and
training resumes from its checkpoint, not from epoch 1.
"""
import json
import os
import shutil

import pytest
import tensorflow as tf

from tests.support.cli import imagepipe
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.slow
PRE_TRAINER = ["ImageExampleGen", "StatisticsGen", "SchemaGen", "ExampleValidator", "Transform"]


def _done(lines):
    """{component: 'cached' or 'ran'} from the run's progress lines."""
    return {line.split()[1]: "cached" if line.endswith("cached") else "ran"
            for line in lines if line.startswith("done ")}


def _epochs(lines):
    return [int(line.split()[1].split("/")[0]) for line in lines
            if line.strip().startswith("epoch ")]


def _runs_listed(out) -> list:
    return imagepipe("runs", "--output", out, timeout=300, check=True).stdout.splitlines()[1:]


def _assert_only_complete_versions(out):
    for kind in ("serving", "tflite"):
        base = out / kind / "imagepipe"
        if not base.exists():
            continue
        visible = [p for p in base.iterdir() if not p.name.startswith(".")
                   and p.name != "CURRENT"]  # the TFLite pointer: a file naming a version
        assert all(p.name.isdigit() for p in visible), visible
        if (base / "CURRENT").exists():
            assert (base / (base / "CURRENT").read_text().strip()).is_dir()
        for version in visible:
            if kind == "serving":
                assert tf.saved_model.load(str(version)).signatures["serving_default"]
            else:
                tf.lite.Interpreter(model_path=str(version / "model.tflite"))
                assert json.loads((version / "model_info.json").read_text())["labels"]


def test_killed_runs_leave_nothing_half_done_and_resume(tmp_path, start_run):
    data, out = tmp_path / "data", tmp_path / "out"
    shutil.copytree(MNIST_PNG, data)  # 1,000 digits: two ingest shards
    flags = ["--data", str(data), "--output", str(out), "--train-steps", "60",
             "--batch-size", "32", "--accuracy-threshold", "0"]

    run_a = start_run(*flags)
    run_a.kill_when(lambda line: line.startswith("          ingest shard 1/2"))
    assert len(_runs_listed(out)) == 1  # MLMD readable; the run is listed
    assert not (out / "serving").exists()

    run_b = start_run(*flags)
    run_b.kill_when(lambda line: line.strip().startswith("epoch 2/"))
    assert _done(run_b.lines)["ImageExampleGen"] == "ran"  # A never finished it
    assert list((out / "tfx" / "Trainer" / ".backup").iterdir())  # the checkpoint
    assert not (out / "serving").exists()

    run_c = start_run(*flags)
    run_c.kill_when(lambda line: line.startswith("start     Pusher"), delay=1.5)
    done = _done(run_c.lines)
    assert all(done[c] == "cached" for c in PRE_TRAINER), done
    assert done["Trainer"] == "ran" and _epochs(run_c.lines)[0] > 1, run_c.lines
    _assert_only_complete_versions(out)

    run_d = start_run(*flags)
    assert run_d.finish() == 0, run_d.stderr[-3000:]
    done = _done(run_d.lines)
    assert done["Trainer"] == done["Evaluator"] == "cached"
    # Whether C was killed before or after publishing, the model is served once.
    assert len([p for p in (out / "serving" / "imagepipe").iterdir()
                if not p.name.startswith(".")]) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["eval"]["blessed"] and os.path.isdir(summary["pushed"]["serving"])
    _assert_only_complete_versions(out)
    assert len(_runs_listed(out)) == 4
