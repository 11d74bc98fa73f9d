"""`bench.suite --quick`: the performance suite runs end to end and writes its results."""
import json
import os
import subprocess
import sys

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench-results")
    temp = tmp_path_factory.mktemp("bench-tmp")
    run = subprocess.run([sys.executable, "-W", "ignore", "-m", "bench.suite", "--quick"],
                         cwd=REPO, capture_output=True, text=True, timeout=1200,
                         # TMPDIR: the scaling bench's datasets go with the test's folder.
                         env=dict(os.environ, IMAGEPIPE_BENCH_RESULTS=str(folder),
                                  TMPDIR=str(temp), TF_CPP_MIN_LOG_LEVEL="3"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}, run.stdout


def test_every_benchmark_writes_json_with_machine_info(results):
    files, _ = results
    assert set(files) == {"e2e", "training", "scaling", "gpu", "suite"}
    for result in files.values():
        assert result["machine"]["cpus"] >= 1 and "tensorflow" in result["machine"]


def test_e2e_compares_the_warm_run_with_the_cold_one(results):
    e2e = results[0]["e2e"]
    rows = {r["step"]: r for r in e2e["rows"]}
    assert rows["pipeline total"]["warm_s"] < rows["pipeline total"]["cold_s"]
    assert rows["wall (command)"]["cold_s"] > rows["pipeline total"]["cold_s"] > 0
    assert rows["Trainer"]["warm/cold"] < 0.5  # cached
    assert set(e2e["goals"]) == {"cold_wall_s", "cold_pipeline_s", "warm_over_cold",
                                 "warm_over_cold_pipeline", "accuracy"}
    assert rows["Trainer"]["cold_peak_mb"] > 100


def test_training_compares_the_trainer_with_numpy_on_the_same_examples(results):
    training = results[0]["training"]
    numpy, trainer, alone = training["rows"]
    assert numpy["ratio"] == 1.0 and numpy["examples_per_s"] > 0
    assert trainer["ratio"] == pytest.approx(trainer["examples_per_s"] / numpy["examples_per_s"])
    assert alone["examples_per_s"] > 0
    assert training["train_examples"] > 0 and training["steps_per_epoch"] == 2


def test_scaling_reports_each_stage_at_each_size(results):
    rows = results[0]["scaling"]["rows"]
    assert {(r["stage"], r["images"]) for r in rows} == {
        (stage, n) for stage in ("ImageExampleGen", "Transform", "Trainer") for n in (60, 120)}
    assert all(r["seconds"] > 0 and r["peak_mb"] > 100 for r in rows)
    assert all(r["rise_mb"] is not None and r["rise_mb"] < r["peak_mb"] for r in rows)
    alone = {r["images"]: r["alone_rise_mb"] for r in rows if r["stage"] == "Transform"}
    assert all(0 < rise < 2000 for rise in alone.values()), alone  # re-run alone, measured


def test_gpu_figures_or_a_clean_skip_and_a_goal_table(results):
    files, stdout = results
    gpu = files["gpu"]
    assert ("skipped" in gpu) == (not gpu["machine"]["gpus"])
    goals = {g["goal"] for g in files["suite"]["goals"]}
    assert "training Trainer/NumPy examples/s" in goals and "e2e warm_over_cold" in goals
    assert "gpu mixed_float16/float32" in goals
    assert "training Trainer/NumPy examples/s" in stdout  # the printed goal table
