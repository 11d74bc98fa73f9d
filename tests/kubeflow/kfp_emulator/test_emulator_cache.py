"""Trigger conditions and the step cache, on small hand-written PipelineSpecs run for real.

Each task runs TINY below as its container command: it writes its output
artifact (a file holding its parameters) and the executor output file with
the artifact's metadata, and appends its name to `ran.txt` so that a test
sees which processes started. Nothing imports TensorFlow, so a run takes
about a second.
"""
import pathlib

import pytest
import yaml
from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.contract import EXAMPLE_GEN_ID, TRAINER_ID
from kfp_emulator import emulator, kfp_cache
from tests.support.cli import run_local

pytestmark = pytest.mark.integration  # processes run; kfp.local builds their inputs

TINY = """
import json, os, sys
executor_input = json.loads(sys.argv[1])
values = executor_input["inputs"].get("parameterValues", {})
outputs = executor_input["outputs"]
written = {}
for key, listed in outputs.get("artifacts", {}).items():
    uri = listed["artifacts"][0]["uri"]
    os.makedirs(uri, exist_ok=True)
    with open(os.path.join(uri, "data.json"), "w") as f:
        json.dump(values, f)
    written[key] = {"artifacts": [{"uri": uri, "metadata": values.get("metadata", {})}]}
os.makedirs(os.path.dirname(outputs["outputFile"]), exist_ok=True)
with open(outputs["outputFile"], "w") as f:
    json.dump({"artifacts": written}, f)
with open(values["ran"], "a") as f:
    f.write(values["task"] + "\\n")
"""
NEW = "inputs.artifacts['{key}'].artifacts[0].metadata['new_data']"
# As TFX's compiler_utils.placeholder_to_cel writes `Cond(examples.future()[0]
# .custom_property('new_data') == 1)`: ints as doubles, every comparison parenthesized.
IS_NEW = "(" + NEW + " == 1.0)"


def _task(name: str, metadata: dict, ran: pathlib.Path, inputs=(), condition="",
          cache=True) -> dict:
    """A task spec, its component and its executor, for `_spec`."""
    artifact = {"artifactType": {"schemaTitle": "system.Artifact", "schemaVersion": "0.0.1"}}
    parameters = {"metadata": {"runtimeValue": {"constant": metadata}},
                  "ran": {"runtimeValue": {"constant": str(ran)}},
                  "task": {"runtimeValue": {"constant": name}}}
    task = {"taskInfo": {"name": name}, "componentRef": {"name": f"comp-{name}"},
            "cachingOptions": {"enableCache": cache},
            "inputs": {"parameters": parameters, "artifacts": {
                key: {"taskOutputArtifact": {"producerTask": producer,
                                             "outputArtifactKey": output}}
                for key, (producer, output) in dict(inputs).items()}},
            "dependentTasks": sorted({producer for producer, _ in dict(inputs).values()})}
    if condition:
        task["triggerPolicy"] = {"condition": condition}
    component = {"executorLabel": f"exec-{name}", "inputDefinitions": {
        "parameters": {"metadata": {"parameterType": "STRUCT"},
                       "ran": {"parameterType": "STRING"}, "task": {"parameterType": "STRING"}},
        "artifacts": {key: artifact for key in dict(inputs)}},
        "outputDefinitions": {"artifacts": {"examples": artifact}}}
    executor = {"container": {"image": "python:3.11",
                              "command": ["python", "-c", TINY, "{{$}}"]}}
    return {"task": task, "component": component, "executor": executor}


def _spec(*tasks: dict, name: str = "tiny") -> dict:
    names = [t["task"]["taskInfo"]["name"] for t in tasks]
    return {"pipelineInfo": {"name": name}, "schemaVersion": "2.1.0", "sdkVersion": "t",
            "root": {"dag": {"tasks": {n: t["task"] for n, t in zip(names, tasks)}}},
            "components": {f"comp-{n}": t["component"] for n, t in zip(names, tasks)},
            "deploymentSpec": {"executors": {f"exec-{n}": t["executor"]
                                             for n, t in zip(names, tasks)}}}


def _run(spec: dict, root: pathlib.Path, **options):
    lines = []
    parsed = json_format.ParseDict(spec, pb.PipelineSpec())
    result = emulator.run_pipeline(parsed, str(root), echo=lines.append, **options)
    return result, lines


def _ran(path: pathlib.Path) -> list:
    return path.read_text().split() if path.exists() else []


def _chain(ran, first_metadata, condition, first_cache=True):
    """first -> second (conditional on first's examples) -> third."""
    return _spec(_task("first", first_metadata, ran, cache=first_cache),
                 _task("second", {"n": 2}, ran, {"examples": ("first", "examples")},
                       condition),
                 _task("third", {"n": 3}, ran, {"examples": ("second", "examples")}))


def test_a_false_condition_skips_the_task_and_every_task_after_it(tmp_path):
    ran = tmp_path / "ran.txt"
    spec = _chain(ran, {"new_data": 0}, IS_NEW.format(key="examples"))
    result, lines = _run(spec, tmp_path / "root")
    assert {t: s.state for t, s in result.states.items()} == {
        "first": "done", "second": "skipped", "third": "skipped"}
    assert "skipped second (trigger condition false)" in lines
    assert "skipped third (upstream second skipped)" in lines
    assert _ran(ran) == ["first"]  # no process for a skipped task


def test_a_true_condition_runs_and_sees_the_upstream_custom_metadata(tmp_path):
    ran = tmp_path / "ran.txt"
    examples = "inputs.artifacts['examples'].artifacts[0]"
    condition = (f"(({examples}.metadata['new_data'] > 0.0) && "
                 f"!(({examples}.metadata['reason'] == 'same')))")
    spec = _chain(ran, {"new_data": 3, "reason": "span 2 arrived"}, condition)
    result, _ = _run(spec, tmp_path / "root")
    assert _ran(ran) == ["first", "second", "third"]
    first = result.artifact("first", "examples")
    # As MLMD hands it on: the id as name, the executor's metadata, display_name added.
    assert result.metadata("first", "examples") == {
        "new_data": 3.0, "reason": "span 2 arrived", "display_name": "examples"}
    assert first["name"].isdigit() and pathlib.Path(first["uri"], "data.json").is_file()


def test_a_condition_that_cannot_be_evaluated_fails_the_task(tmp_path):
    spec = _chain(tmp_path / "ran.txt", {"other": 1}, IS_NEW.format(key="examples"))
    with pytest.raises(emulator.TaskFailed, match="task second failed") as failed:
        _run(spec, tmp_path / "root")
    assert 'Key not found in map : "new_data"' in pathlib.Path(failed.value.log).read_text()


def test_a_second_run_reuses_the_cached_outputs_without_a_process(tmp_path):
    ran, root = tmp_path / "ran.txt", tmp_path / "root"
    spec = _chain(ran, {"new_data": 1}, IS_NEW.format(key="examples"))
    first, _ = _run(spec, root)
    second, lines = _run(spec, root)
    assert {s.state for s in second.states.values()} == {"cached"}
    assert lines[1:] == ["cached first", "cached second", "cached third"]
    assert _ran(ran) == ["first", "second", "third"]  # from the first run only
    for task in ("first", "second", "third"):  # the same MLMD artifacts: ids, URIs, metadata
        assert second.artifact(task, "examples") == first.artifact(task, "examples")
    assert first.root != second.root
    assert list((root / kfp_cache.STATE_DIR / "cache" / "pipeline%2Ftiny").iterdir())


def test_a_changed_parameter_misses_and_so_does_the_task_after_a_new_artifact(tmp_path):
    ran, root = tmp_path / "ran.txt", tmp_path / "root"
    condition = IS_NEW.format(key="examples")
    _run(_chain(ran, {"new_data": 1}, condition), root)
    changed, _ = _run(_chain(ran, {"new_data": 1, "span": 2}, condition), root)
    # first's parameter changed; second's own inputs did not, but its input
    # artifact is a new one (a new id), so it misses too.
    assert {s.state for s in changed.states.values()} == {"done"}
    assert _ran(ran) == ["first", "second", "third"] * 2


def test_a_task_without_enable_cache_always_runs_and_its_new_artifact_misses_below(tmp_path):
    ran, root = tmp_path / "ran.txt", tmp_path / "root"
    spec = _chain(ran, {"new_data": 1}, IS_NEW.format(key="examples"), first_cache=False)
    first, _ = _run(spec, root)
    second, _ = _run(spec, root)
    assert [s.state for s in second.states.values()] == ["done"] * 3
    assert (second.artifact("first", "examples")["name"]
            != first.artifact("first", "examples")["name"])


def test_a_run_without_the_cache_runs_everything_and_records_nothing(tmp_path):
    ran, root = tmp_path / "ran.txt", tmp_path / "root"
    spec = _chain(ran, {"new_data": 1}, IS_NEW.format(key="examples"))
    _run(spec, root, enable_cache=False)
    second, _ = _run(spec, root)  # nothing was recorded, so nothing is a hit
    assert [s.state for s in second.states.values()] == ["done"] * 3


def test_a_cache_is_scoped_to_the_pipeline_name(tmp_path):
    ran, root = tmp_path / "ran.txt", tmp_path / "root"
    _run(_spec(_task("first", {}, ran), name="one"), root)
    other, _ = _run(_spec(_task("first", {}, ran), name="two"), root)
    assert other.states["first"].state == "done"


def test_run_local_prints_skipped_cached_and_why_nothing_was_trained(tmp_path):
    ran, root, path = tmp_path / "ran.txt", tmp_path / "root", tmp_path / "spec.yaml"
    reason = "no new span since the last run (span 1)"
    path.write_text(yaml.safe_dump(_spec(
        _task(EXAMPLE_GEN_ID, {"new_data": 0, "new_data_reason": reason}, ran),
        _task(TRAINER_ID, {}, ran, {"examples": (EXAMPLE_GEN_ID, "examples")},
              IS_NEW.format(key="examples")))))
    first = run_local(path, "--pipeline-root", root, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]
    lines = first.stdout.splitlines()
    assert f"skipped {TRAINER_ID} (trigger condition false)" in lines
    assert lines[-2:] == [f"nothing new: {reason}", lines[-1]]
    assert lines[-1].startswith(f"succeeded: {root}/tiny/")
    second = run_local(path, "--pipeline-root", root, timeout=120)
    assert f"cached {EXAMPLE_GEN_ID}" in second.stdout.splitlines()
    assert f"nothing new: {reason}" in second.stdout  # the cached artifact's metadata
    third = run_local(path, "--pipeline-root", root, "--disable-cache", timeout=120)
    assert [line.split()[:2] for line in third.stdout.splitlines() if line[:4] == "done"] == [
        ["done", EXAMPLE_GEN_ID]]
    assert _ran(ran) == [EXAMPLE_GEN_ID, EXAMPLE_GEN_ID]
