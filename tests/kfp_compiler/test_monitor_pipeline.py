"""The scheduled monitoring pipeline: compiles for both targets, parses strictly, runs.

The compiled step runs `imagepipe monitor` with the run's parameters; these
tests check its command line against the real CLI parser, and run the package
through the local KFP emulator (kubeflow/kfp_emulator/emulator.py).
"""
import json
import pathlib

import pytest
import yaml
from google.cloud.aiplatform_v1.types import PipelineJob
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from settings.config import PipelineConfig
from core.errors import UsageError
from kfp_compiler import monitor_pipeline
from kfp_compiler.monitor_pipeline import (PARAMETER_DEFAULTS, STEP_COMMAND,
                                           compile_monitor_pipeline, monitor_argv,
                                           step_exit_code)

IMAGE = "us-docker.pkg.dev/proj/imagepipe/pipeline:1.0"
CONFIG = PipelineConfig.from_values(output="gs://bucket/imagepipe", model_name="flowers",
                                    drift_brightness=0.25)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    """{"kubeflow": the PipelineSpec YAML's text, "vertex": the PipelineJob JSON's text}."""
    out = tmp_path_factory.mktemp("monitor")
    return {target: open(compile_monitor_pipeline(
                CONFIG, target, IMAGE, str(out / f"monitor.{target}"))).read()
            for target in ("kubeflow", "vertex")}


def _executor(spec: dict) -> dict:
    (executor,) = spec["deploymentSpec"]["executors"].values()
    return executor["container"]


def _resolved(spec: dict, values: dict) -> list:
    """The step's arguments with each parameter placeholder replaced by its value."""
    resolved = []
    for arg in _executor(spec)["args"]:
        for name, value in values.items():
            arg = arg.replace(f"{{{{$.inputs.parameters['{name}']}}}}", value)
        resolved.append(arg.replace("{{$.outputs.artifacts['monitor_json'].path}}", "m.json")
                        .replace("{{$.outputs.artifacts['report'].path}}", "m.html"))
    return resolved


def test_both_targets_parse_strictly(compiled):
    spec = yaml.safe_load(compiled["kubeflow"])
    json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())  # unknown fields raise
    assert spec["schemaVersion"] == "2.1.0"
    assert spec["pipelineInfo"]["name"] == "imagepipe-monitor"
    assert spec["defaultPipelineRoot"] == CONFIG.run.output
    job = PipelineJob.from_json(compiled["vertex"], ignore_unknown_fields=False)
    assert job.runtime_config.gcs_output_directory == CONFIG.run.output
    assert json.loads(compiled["vertex"])["pipelineSpec"] == spec


def test_the_step_runs_the_monitor_in_the_pipeline_image_never_cached(compiled):
    spec = yaml.safe_load(compiled["kubeflow"])
    container = _executor(spec)
    assert container["image"] == IMAGE and container["command"] == STEP_COMMAND
    (task,) = spec["root"]["dag"]["tasks"].values()
    assert not task["cachingOptions"].get("enableCache")  # every scheduled run monitors
    outputs = spec["components"]["comp-monitor"]["outputDefinitions"]["artifacts"]
    assert outputs["report"]["artifactType"]["schemaTitle"] == "system.HTML"


def test_data_is_required_and_every_other_parameter_has_its_default(compiled):
    parameters = yaml.safe_load(compiled["kubeflow"])["root"]["inputDefinitions"]["parameters"]
    assert "defaultValue" not in parameters["data"]
    assert {name: p["defaultValue"] for name, p in parameters.items() if name != "data"} == {
        **PARAMETER_DEFAULTS, "output": CONFIG.run.output}


def test_the_steps_arguments_are_flags_imagepipe_monitor_takes(compiled):
    from cli.main import build_parser
    from settings import flags
    spec = yaml.safe_load(compiled["kubeflow"])
    values = {**PARAMETER_DEFAULTS, "output": CONFIG.run.output, "data": "gs://bucket/logs",
              "pushgateway": "http://pushgateway:9091"}
    argv = monitor_argv(_resolved(spec, values))
    args = build_parser().parse_args(argv)  # an unknown flag exits 2
    config, own = flags.parse(args)
    assert (args.command, own.window.data, own.window.json) == (
        "monitor", "gs://bucket/logs", "m.json")
    assert (config.run.output, config.run.model_name, config.drift.brightness) == (
        CONFIG.run.output, "flowers", 0.25)
    assert "--labels" not in argv and "--version" not in argv  # left empty: dropped


def test_empty_values_drop_their_flag_and_others_pass_unchanged():
    assert monitor_argv(["--data", "d", "--since", "", "--labels", "l.csv"]) == [
        "monitor", "--data", "d", "--labels", "l.csv"]
    with pytest.raises(ValueError, match="pairs"):
        monitor_argv(["--data"])


@pytest.mark.parametrize("monitor_code, step_code", [(0, 0), (3, 0), (2, 2), (1, 1)])
def test_alerting_is_a_successful_step_and_a_failure_to_monitor_is_not(monitor_code,
                                                                       step_code):
    assert step_exit_code(monitor_code) == step_code


def test_a_pipeline_name_kfp_refuses_is_refused_naming_the_flag(tmp_path):
    with pytest.raises(UsageError, match="--pipeline-name"):
        compile_monitor_pipeline(CONFIG.replace(pipeline_name="Flowers_1"), "kubeflow",
                                 IMAGE, str(tmp_path / "m.yaml"))


def _bound(spec_text: str, values: dict) -> pipeline_spec_pb2.PipelineSpec:
    """The spec with each run parameter bound to its value (given, else its default).

    The backend's driver resolves a task's `componentInputParameter` from the
    run's parameters; the emulator takes none, so they are bound as constants.
    """
    spec = yaml.safe_load(spec_text)
    defaults = {name: p.get("defaultValue") for name, p in
                spec["root"]["inputDefinitions"]["parameters"].items()}
    for task in spec["root"]["dag"]["tasks"].values():
        for name, source in task["inputs"]["parameters"].items():
            value = values.get(source["componentInputParameter"],
                               defaults[source["componentInputParameter"]])
            task["inputs"]["parameters"][name] = {"runtimeValue": {"constant": value}}
    del spec["root"]["inputDefinitions"]
    return json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())


def test_the_exit_code_of_alerting_is_the_monitors():
    from cli.commands import EXIT_ALERTING
    assert monitor_pipeline.EXIT_ALERTING == EXIT_ALERTING


@pytest.fixture
def pushed(tmp_path, exported_model) -> pathlib.Path:
    """An --output with the tiny model pushed, its reference made from dark images."""
    from tests.support.monitored import monitoring_reference, push_version, write_images
    paths = write_images(tmp_path / "train", 20)
    push_version(tmp_path / "out", exported_model.model_dir,
                 monitoring_reference(exported_model.model_dir, paths))
    return tmp_path / "out"


@pytest.mark.integration  # a real exported model, run through the emulator
def test_an_alerting_window_is_a_successful_step_that_records_its_json_and_report(
        tmp_path, pushed):
    """Through the emulator: bright images against a dark reference alert (exit 3)."""
    from kfp_emulator import emulator
    from tests.support.monitored import write_images
    write_images(tmp_path / "window", 20, inverted=True)
    text = open(compile_monitor_pipeline(CONFIG.replace(model_name="imagepipe"), "kubeflow",
                                         IMAGE, str(tmp_path / "m.yaml"))).read()
    spec = _bound(text, {"data": str(tmp_path / "window"), "output": str(pushed)})
    result = emulator.run_pipeline(spec, str(tmp_path / "root"), echo=lambda line: None)
    (task,) = result.outputs.values()
    artifacts = task["artifacts"]
    found = json.loads(pathlib.Path(artifacts["monitor_json"]["uri"]).read_text())
    assert not found["healthy"] and found["alerts"][0]["kind"] == "input_drift"
    assert found["data"] == str(tmp_path / "window")
    assert pathlib.Path(artifacts["report"]["uri"]).read_text().startswith("<!")


def test_compile_monitor_writes_the_package_and_refuses_training_flags(tmp_path, capsys):
    from cli import main as cli
    path = tmp_path / "monitor.yaml"
    common = ["compile", "--monitor", "--target", "kubeflow", "--image", IMAGE,
              "--pipeline-root", "gs://bucket/imagepipe", "--output-file", str(path)]
    assert cli.main(common) == 0
    assert "imagepipe-monitor for kubeflow: 1 step," in capsys.readouterr().out
    assert yaml.safe_load(path.read_text())["pipelineInfo"]["name"] == "imagepipe-monitor"
    assert cli.main([*common, "--accelerator", "gpu:nvidia-l4:1"]) == 2
    assert "--accelerator: for the training pipeline" in capsys.readouterr().err
