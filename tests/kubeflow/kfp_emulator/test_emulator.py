"""kubeflow/run_local.py runs the compiled Kubeflow package as the open-source KFP v2 backend does.

A package compiled with --workers runs its Trainer as a TFJob, whose replicas
run here as local processes; bad packages exit 2 and a failed task 1. The
weekly end-to-end run of a span package (emptied types, the baseline, warm start,
trigger conditions) is tests/e2e/test_kubeflow_weeks.py's, on a gs:// root.
"""
import json
import pathlib
import subprocess

import pytest
import yaml

from settings.config import PipelineConfig
from kfp_compiler.compiler import compile_pipeline
from tests.support.cli import run_local


def _outputs(run_root: pathlib.Path, task: str) -> dict:
    """The metadata of each output artifact, as the task's executor wrote it."""
    written = json.loads((run_root / ".launcher" / task / "output_metadata.json").read_text())
    return {key: value["artifacts"][0] for key, value in written["artifacts"].items()}


def _succeeded(result: subprocess.CompletedProcess) -> pathlib.Path:
    """The run's root; every task ran (`done`), unless `done` says how many did."""
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    tasks = int(lines[0].split(": ")[1].split()[0])  # "run <id>: <n> tasks under <root>"
    ran = [line for line in lines if line.startswith("done ")]
    assert len(ran) == tasks, result.stdout
    return pathlib.Path(lines[-1].split("succeeded: ")[1])


@pytest.mark.slow
# With parameter servers only: the TFJob's path is the same for both strategies, and
# MultiWorkerMirroredStrategy on workers' TF_CONFIGs runs in tests/e2e/test_workers.py
# (the suite's time goes to the continuous-training runs instead).
@pytest.mark.parametrize("workers, ps, strategy", [(2, 1, "ParameterServerStrategy")])
def test_a_tfjob_trainer_runs_its_replicas_with_the_operators_tf_config(
        tmp_path, mnist_subset, workers, ps, strategy):
    output = tmp_path / "root"
    config = PipelineConfig.from_values(data=str(mnist_subset), output=str(output),
                                        train_steps=8, accuracy_threshold=0.0, quantize="none",
                                        workers=workers, ps=ps)
    spec = compile_pipeline(config, "kubeflow", "example.com/imagepipe:test",
                            str(tmp_path / "spec.yaml"))
    run = _succeeded(run_local(spec))
    log = (run / ".launcher" / "Trainer" / "log.txt").read_text()
    model_run = _outputs(run, "Trainer")["model_run"]["uri"]
    stats = json.loads((pathlib.Path(model_run) / "fit_stats.json").read_text())
    assert (stats["strategy"], stats["workers"], stats["parameter_servers"]) == (
        strategy, workers, ps), log[-2000:]
    [version] = (output / "serving" / "imagepipe").iterdir()  # the chief's model, pushed
    assert (version / "saved_model.pb").is_file()


def _spec_with(tmp_path, executor: dict) -> pathlib.Path:
    spec = {"pipelineInfo": {"name": "p"}, "schemaVersion": "2.1.0", "sdkVersion": "t",
            "root": {"dag": {"tasks": {"pick": {"taskInfo": {"name": "pick"},
                                                "componentRef": {"name": "comp-pick"}}}}},
            "components": {"comp-pick": {"executorLabel": "exec-pick"}},
            "deploymentSpec": {"executors": {"exec-pick": executor}}}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.integration  # run_local.py started as a subprocess
def test_resolver_tasks_are_refused_with_exit_2(tmp_path):
    result = run_local(_spec_with(tmp_path, {"resolver": {"outputArtifactQueries": {}}}),
                        "--pipeline-root", tmp_path / "root", timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "task pick is a resolver" in result.stderr


@pytest.mark.integration  # run_local.py started as a subprocess
def test_a_failed_task_exits_1_naming_the_task_and_its_log(tmp_path):
    failing = {"container": {"image": "i", "command": ["python", "-c", "raise SystemExit(3)"]}}
    result = run_local(_spec_with(tmp_path, failing), "--pipeline-root", tmp_path / "root",
                        timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    log = result.stderr.split("its log: ")[1].strip()
    assert "task pick failed" in result.stderr and pathlib.Path(log).is_file()


@pytest.mark.integration  # run_local.py started as a subprocess
def test_not_a_package_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text("just: text\n")
    result = run_local(path, timeout=120)
    assert result.returncode == 2 and str(path) in result.stderr
    assert "Traceback" not in result.stderr
