"""Independent tasks run at the same time, as Argo starts every task whose upstream is done.

Each task runs SLEEPER below: it notes its start, sleeps, notes its end and
exits (non-zero where told to fail). The notes, with wall-clock times, say
which processes ran when. Nothing imports TensorFlow; the slowest test sleeps
three seconds in all.
"""
import pathlib
import time

import pytest
import yaml
from google.protobuf import json_format
from kfp.local import graph_utils
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.errors import UsageError
from kfp_emulator import emulator
from tests.support.cli import run_local

pytestmark = pytest.mark.integration  # processes run; kfp.local builds their inputs

SLEEPER = """
import json, sys, time
values = json.loads(sys.argv[1])["inputs"]["parameterValues"]
def note(event):
    with open(values["log"], "a") as f:
        f.write(f"{values['task']} {event} {time.time()}\\n")
note("start")
time.sleep(values["sleep"])
note("end")
sys.exit(3 if values["fail"] else 0)
"""
TYPES = {"log": "STRING", "task": "STRING", "sleep": "NUMBER_DOUBLE", "fail": "BOOLEAN"}
NEVER = "inputs.parameter_values['task'] == 'never'"  # a trigger condition that is false


def _task(name: str, log: pathlib.Path, sleep: float = 0.0, after=(), fail=False,
          condition="") -> dict:
    """A task, its component and its executor: SLEEPER, after the tasks in `after`."""
    values = {"log": str(log), "task": name, "sleep": sleep, "fail": fail}
    task = {"taskInfo": {"name": name}, "componentRef": {"name": f"comp-{name}"},
            "dependentTasks": sorted(after),
            "inputs": {"parameters": {key: {"runtimeValue": {"constant": value}}
                                      for key, value in values.items()}}}
    if condition:
        task["triggerPolicy"] = {"condition": condition}
    component = {"executorLabel": f"exec-{name}", "inputDefinitions": {"parameters": {
        key: {"parameterType": kind} for key, kind in TYPES.items()}}}
    executor = {"container": {"image": "python:3.11",
                              "command": ["python", "-c", SLEEPER, "{{$}}"]}}
    return {"name": name, "task": task, "component": component, "executor": executor}


def _spec(*tasks: dict) -> dict:
    return {"pipelineInfo": {"name": "parallel"}, "schemaVersion": "2.1.0", "sdkVersion": "t",
            "root": {"dag": {"tasks": {t["name"]: t["task"] for t in tasks}}},
            "components": {f"comp-{t['name']}": t["component"] for t in tasks},
            "deploymentSpec": {"executors": {f"exec-{t['name']}": t["executor"]
                                             for t in tasks}}}


def _run(spec: dict, root: pathlib.Path, parallelism: int):
    """The result, the printed lines and the run's wall-clock seconds."""
    lines = []
    parsed = json_format.ParseDict(spec, pb.PipelineSpec())
    began = time.monotonic()
    result = emulator.run_pipeline(parsed, str(root), echo=lines.append,
                                   parallelism=parallelism)
    return result, lines, time.monotonic() - began


def _notes(log: pathlib.Path) -> dict:
    """{(task, "start" or "end"): time.time()} from the tasks' notes."""
    if not log.exists():
        return {}
    return {(task, event): float(at)
            for task, event, at in (line.split() for line in log.read_text().splitlines())}


def test_independent_tasks_overlap_as_far_as_the_parallelism_lets_them(tmp_path):
    both, one = tmp_path / "both.txt", tmp_path / "one.txt"
    _, lines, seconds = _run(_spec(_task("a", both, 1.0), _task("b", both, 1.0)),
                             tmp_path / "root", parallelism=2)
    notes = _notes(both)
    assert notes["a", "start"] < notes["b", "end"] and notes["b", "start"] < notes["a", "end"]
    assert seconds < 1.7, lines
    assert lines[1:3] == ["start a", "start b"] or lines[1:3] == ["start b", "start a"]

    _, lines, seconds = _run(_spec(_task("a", one, 1.0), _task("b", one, 1.0)),
                             tmp_path / "root", parallelism=1)
    first, second = sorted(("a", "b"), key=lambda task: _notes(one)[task, "start"])
    assert _notes(one)[second, "start"] >= _notes(one)[first, "end"]
    assert seconds >= 2.0
    assert [line.split()[0] for line in lines[1:]] == ["start", "done", "start", "done"]


def test_a_task_starts_once_its_upstream_is_done_without_waiting_for_the_rest(tmp_path):
    log = tmp_path / "ran.txt"
    spec = _spec(_task("quick", log, 0.2), _task("slow", log, 1.0),
                 _task("after", log, after=["quick"]))
    result, lines, _ = _run(spec, tmp_path / "root", parallelism=2)
    notes = _notes(log)
    assert notes["quick", "end"] <= notes["after", "start"] < notes["slow", "end"]
    assert lines.index("start after") > [line[:10] for line in lines].index("done  quic")
    # Ended quick, after, slow; listed in topological order, as a sequential run lists them.
    order = graph_utils.topological_sort_tasks(
        json_format.ParseDict(spec, pb.PipelineSpec()).root.dag.tasks)[::-1]
    assert list(result.states) == order
    assert {state.state for state in result.states.values()} == {"done"}


def test_a_failure_starts_no_further_task_and_the_running_ones_finish(tmp_path):
    log = tmp_path / "ran.txt"
    spec = _spec(_task("bad", log, 0.1, fail=True), _task("slow", log, 0.8),
                 _task("after_slow", log, after=["slow"]),
                 _task("after_bad", log, after=["bad"]))
    lines = []
    with pytest.raises(emulator.TaskFailed, match="task bad failed") as failed:
        emulator.run_pipeline(json_format.ParseDict(spec, pb.PipelineSpec()),
                              str(tmp_path / "root"), echo=lines.append, parallelism=2)
    assert pathlib.Path(failed.value.log).is_file()
    assert set(_notes(log)) == {("bad", "start"), ("bad", "end"),
                                ("slow", "start"), ("slow", "end")}
    assert not [line for line in lines if "after" in line]
    assert any(line.startswith("done  slow ") for line in lines)  # it ran to its end


def test_a_skip_propagates_at_once_while_another_branch_runs(tmp_path):
    log = tmp_path / "ran.txt"
    spec = _spec(_task("other", log, 0.3), _task("gate", log, condition=NEVER),
                 _task("below", log, after=["gate"]))
    result, lines, _ = _run(spec, tmp_path / "root", parallelism=2)
    assert {task: state.state for task, state in result.states.items()} == {
        "other": "done", "gate": "skipped", "below": "skipped"}
    assert set(_notes(log)) == {("other", "start"), ("other", "end")}
    done = [line[:11] for line in lines].index("done  other")
    assert lines.index("skipped gate (trigger condition false)") < done
    assert lines.index("skipped below (upstream gate skipped)") < done


def test_run_local_takes_the_parallelism_and_refuses_less_than_one(tmp_path):
    path, log = tmp_path / "spec.yaml", tmp_path / "ran.txt"
    path.write_text(yaml.safe_dump(_spec(_task("a", log, 0.5), _task("b", log, 0.5))))
    command = [path, "--pipeline-root", tmp_path / "root"]
    ran = run_local(*command, "--parallelism", "2", timeout=120)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert [line.split()[0] for line in ran.stdout.splitlines()[1:3]] == ["start", "start"]
    refused = run_local(*command, "--parallelism", "0", timeout=120)
    assert refused.returncode == 2 and "at least 1" in refused.stderr
    with pytest.raises(UsageError, match="parallelism 0"):
        emulator.run_pipeline(json_format.ParseDict(_spec(_task("a", log)), pb.PipelineSpec()),
                              str(tmp_path / "root"), parallelism=0)
