"""The in-container path: run a compiled step's exact command line, as KFP's launcher would.

No cluster and no Docker: the command and args come from the compiled
PipelineSpec, `{{$}}` becomes a hand-built ExecutorInput JSON pointing at
local paths, and the process runs with this checkout's Python, which has the
same packages as the image (kubeflow/Dockerfile installs the same pins).
"""
import json
import os
import subprocess
import sys

import pytest
import yaml

from settings.config import PipelineConfig
from kfp_compiler.compiler import compile_pipeline
from tests.support.models import stand_in_model

pytestmark = pytest.mark.slow


def _artifacts(definitions: dict, uris: dict, first_id: int) -> dict:
    return {name: {"artifacts": [{
        "name": f"projects/1/locations/l/metadataStores/default/artifacts/{first_id + i}",
        "uri": uri, "type": definitions["artifacts"][name]["artifactType"]}]}
        for i, (name, uri) in enumerate(uris.items())}


def _executor_input(spec: dict, task: str, outputs: dict, output_file: str,
                    inputs: dict = None) -> dict:
    """What the launcher passes: the task's constant parameters, artifacts' URIs."""
    component = spec["components"][spec["root"]["dag"]["tasks"][task]["componentRef"]["name"]]
    parameters = {name: value["runtimeValue"]["constant"] for name, value in
                  spec["root"]["dag"]["tasks"][task]["inputs"]["parameters"].items()}
    return {"inputs": {"parameterValues": parameters, "artifacts": _artifacts(
                component.get("inputDefinitions", {}), inputs or {}, 100)},
            "outputs": {"artifacts": _artifacts(component["outputDefinitions"], outputs, 1),
                        "outputFile": output_file}}


def _run(spec: dict, task: str, invocation: dict, cwd) -> None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(_command(spec, task, invocation), env=env,
                            capture_output=True, text=True, timeout=600, cwd=cwd)
    assert result.returncode == 0, result.stderr[-3000:]


def _command(spec: dict, task: str, invocation: dict) -> list:
    component = spec["components"][spec["root"]["dag"]["tasks"][task]["componentRef"]["name"]]
    container = spec["deploymentSpec"]["executors"][component["executorLabel"]]["container"]
    args = [json.dumps(invocation) if a == "{{$}}" else a for a in container["args"]]
    assert container["command"][0] == "python"
    return [sys.executable, *container["command"][1:], *args]


def _compiled(tmp_path, config: PipelineConfig) -> dict:
    path = compile_pipeline(config.replace(image_size=10, channels=3), "kubeflow",
                            "example.com/imagepipe:test", str(tmp_path / "spec.yaml"))
    with open(path) as f:
        return next(yaml.safe_load_all(f))


def test_image_example_gen_runs_from_its_compiled_command_line(tmp_path, make_image):
    data = tmp_path / "data"
    for label in ("cat", "dog"):
        for i in range(6):
            make_image(data / label / f"{i}.png", size=(10, 10), seed=i)
    spec = _compiled(tmp_path, PipelineConfig.from_values(data=str(data),
                                                          output=str(tmp_path / "root")))
    examples = tmp_path / "root" / "ImageExampleGen" / "examples" / "1"
    output_file = tmp_path / "task" / "executor_output.json"
    invocation = _executor_input(spec, "ImageExampleGen", {"examples": str(examples)},
                                 str(output_file))
    _run(spec, "ImageExampleGen", invocation, tmp_path)
    assert sorted(os.listdir(examples)) == ["Split-eval", "Split-train", "hashes.tsv",
                                            "ingest_report.json", "labels.txt"]
    report = json.loads((examples / "ingest_report.json").read_text())
    assert sum(report["splits"].values()) == 12 and report["classes"] == ["cat", "dog"]
    # What KFP reads back: the output artifact, with the split names TFX records.
    output = json.loads(output_file.read_text())
    artifact = output["artifacts"]["examples"]["artifacts"][0]
    assert artifact["uri"] == str(examples)
    assert json.loads(artifact["metadata"]["split_names"]) == ["train", "eval"]
    # The driver's work, done by the executor: KFP never runs the driver.
    assert artifact["metadata"]["input_fingerprint"].startswith("files:12,sha256:")


def test_the_baseline_step_copies_the_last_pushed_model_not_the_candidates(tmp_path):
    from components.image_pusher.versions import publish
    model = stand_in_model(tmp_path / "trained", variables=True)
    config = PipelineConfig.from_values(data="gs://b/data", output=str(tmp_path / "root"))
    publish(str(model), config.serving_dir, 10, source_uri="gs://b/root/Trainer/model/1")
    publish(str(model), config.serving_dir, 11, source_uri="gs://b/root/Trainer/model/2")
    spec = _compiled(tmp_path, config)
    baseline = tmp_path / "root" / "pushed_baseline" / "model" / "3"
    output_file = tmp_path / "task" / "executor_output.json"
    invocation = _executor_input(spec, "pushed_baseline", {"model": str(baseline)},
                                 str(output_file),
                                 inputs={"candidate": "gs://b/root/Trainer/model/2"})
    _run(spec, "pushed_baseline", invocation, tmp_path)
    assert (baseline / "Format-Serving" / "saved_model.pb").read_bytes() == b"graph"
    metadata = json.loads(output_file.read_text())["artifacts"]["model"]["artifacts"][0][
        "metadata"]
    assert (metadata["no_baseline"], metadata["pushed_version"]) == (0, "10")
