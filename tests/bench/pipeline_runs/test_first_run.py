"""bench.pipeline_runs.first_run: this tree's first run against an earlier commit's."""
import os

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from bench.pipeline_runs import first_run


def _run(wall, trainer, total, extra=None):
    return {"wall_s": wall, "timings_s": {"Trainer": trainer, **(extra or {}), "total": total},
            "accuracy": 0.97, "epochs_run": 20}


def test_rows_are_medians_with_ratios_and_a_new_stage_has_no_baseline():
    baseline = [_run(60, 24, 50), _run(64, 26, 52), _run(70, 30, 60)]
    current = [_run(40, 12, 30, {"InfraValidator": 1.0}), _run(42, 13, 31,
                                                                  {"InfraValidator": 1.2})]
    rows = {r["step"]: r for r in first_run.rows(current, baseline)}
    assert rows["Trainer"] == {"step": "Trainer", "baseline_s": 26, "current_s": 12.5,
                               "current/baseline": pytest.approx(12.5 / 26)}
    assert rows["pipeline total"]["current/baseline"] == pytest.approx(30.5 / 52)
    assert rows["wall"]["current/baseline"] == pytest.approx(41 / 64)
    assert rows["InfraValidator"]["baseline_s"] == "-" and rows["InfraValidator"][
        "current/baseline"] == "-"


def test_digits_become_the_tfx_examples_floats_and_classes(tmp_path):
    for label, value in (("0", 0), ("7", 255)):
        os.makedirs(tmp_path / "png" / label)
        Image.fromarray(np.full((28, 28), value, np.uint8)).save(
            tmp_path / "png" / label / "a.png")
    folder = first_run.tfx_example_data(str(tmp_path / "png"), str(tmp_path / "records"))
    examples = [tf.train.Example.FromString(r.numpy()) for r in tf.data.TFRecordDataset(
        os.path.join(folder, "digits.tfrecord"))]
    features = [e.features.feature for e in examples]
    assert [f["image_class"].int64_list.value[0] for f in features] == [0, 1]
    assert [len(f["image_floats"].float_list.value) for f in features] == [784, 784]
    assert features[1]["image_floats"].float_list.value[0] == 1.0


@pytest.mark.slow  # two short pipeline runs, one from a git worktree
def test_a_baseline_commit_runs_beside_this_tree(tmp_path, monkeypatch):
    if not os.path.isdir(os.path.join(first_run.REPO_ROOT, ".git")):
        pytest.skip("needs the repository's git history (a clone, not an export)")
    monkeypatch.setattr("bench.common.RESULTS_DIR", str(tmp_path))
    result = first_run.main(["--baseline", "HEAD", "--run-args", "--train-steps 2"])
    rows = {r["step"]: r for r in result["rows"]}
    assert rows["Trainer"]["baseline_s"] > 0 and rows["Trainer"]["current_s"] > 0
    assert rows["wall"]["current_s"] > rows["pipeline total"]["current_s"] > 0
    assert (tmp_path / "first_run.json").exists()
    assert not [p for p in os.listdir(first_run.tempfile.gettempdir())
                if p.startswith("imagepipe-bench-baseline-")]  # the worktree is gone
