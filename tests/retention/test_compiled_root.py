"""`imagepipe gc` on a compiled pipeline's root in a folder: what a dry run plans, that it
deletes nothing, that --yes deletes exactly the plan, the JSON record, and the refusals.

The layout (layouts.py) is what KFP's steps write; no ML Metadata store is reachable for
such a root, so the runs are kept by the versions' provenance and by age.
"""
import json
import os
import pathlib
import time

import pytest

from retention.sweep import plan_gc
from settings.command_sections import RetentionSettings
from settings.config import PipelineConfig
from tests.retention.layouts import lay_out
from tests.support.cli import main_in_process
from tests.support.paths import GOLDEN

KEEP_TWO = ("--keep-versions", "2", "--min-age", "0")


@pytest.fixture
def root(tmp_path):
    """(config, what layouts.lay_out made) for a compiled root at tmp_path/root."""
    config = PipelineConfig.from_values(output=str(tmp_path / "root"))
    return config, lay_out(config, str(tmp_path / "scratch"))


def _tree(folder) -> dict:
    """{relative path: size} of every file under `folder`."""
    folder = pathlib.Path(folder)
    return {str(p.relative_to(folder)): p.stat().st_size
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _expected_deletions(config, made) -> set:
    serving, tflite = config.serving_dir, config.tflite_dir
    return {os.path.join(serving, "100"), os.path.join(serving, "350"),
            os.path.join(serving, ".400.partial-1234abcd"), os.path.join(tflite, "100"),
            made["runs"]["run-a"], made["spans"]["abandoned"], made["spans"]["span-3"]}


def test_the_plan_keeps_the_served_the_newest_their_runs_and_the_newest_run(root):
    config, made = root
    plan = plan_gc(config, RetentionSettings(keep_versions=2, min_age="0"))
    doomed = {d.unit.path for d in plan.doomed}
    assert doomed == _expected_deletions(config, made)
    reasons = {d.unit.path: d.reason for d in plan.decisions}
    assert reasons[made["runs"]["run-c"]] == "the run of kept version 300's model"
    assert reasons[made["runs"]["run-b"]] == "the run of kept version 200's model"
    assert reasons[made["runs"]["run-d"]] == "the newest run"
    assert reasons[os.path.join(config.serving_dir, "300")] == "served; one of the 2 newest"
    assert "CURRENT" in reasons[os.path.join(config.tflite_dir, "300")]
    assert reasons[made["spans"]["span-1"]].startswith("a complete span entry")
    assert reasons[os.path.join(config.serving_dir, "350")].startswith("incomplete")
    assert plan.versions == (200, 300) and plan.served == 300


def test_a_dry_run_deletes_nothing_and_says_so(root, capsys):
    config, _ = root
    before = _tree(config.run.output)
    assert main_in_process("gc", "--output", config.run.output, *KEEP_TWO) == 0
    out = capsys.readouterr().out
    assert _tree(config.run.output) == before
    assert "dry run   nothing was deleted: add --yes" in out
    assert "delete    run tfx/imagepipe/run-a" in out
    assert "keep      version serving/imagepipe/300" in out
    assert out.count("\ndelete ") == 7
    total = [line for line in out.splitlines() if line.startswith("total")][0]
    assert "before" in total and "kept" in total and "to delete" in total


def test_yes_deletes_exactly_the_plan_and_the_json_says_what_and_why(root, tmp_path):
    config, made = root
    before = _tree(config.run.output)
    record = tmp_path / "gc.json"
    assert main_in_process("gc", "--output", config.run.output, *KEEP_TWO, "--yes",
                           "--json", record) == 0
    after = _tree(config.run.output)
    gone = {os.path.join(config.run.output, p) for p in set(before) - set(after)}
    expected = _expected_deletions(config, made)
    assert all(any(p.startswith(e + "/") for e in expected) for p in gone)
    assert not any(os.path.exists(p) for p in expected)
    document = json.loads(record.read_text())
    assert document["deleted"] is True and document["versions_kept"] == [200, 300]
    assert {e["path"] for e in document["delete"]} == expected
    assert all(e["reason"] and e["kind"] for e in document["delete"] + document["kept"])
    totals = document["totals"]  # the run lock's file, made by gc itself, counts as kept
    assert totals["kept"] == sum(after.values())
    assert totals["delete"] == totals["before"] - totals["kept"] == sum(
        before[os.path.relpath(p, config.run.output)] for p in gone) > 0
    for kept in ("serving/models.config", "tfx/ImageExampleGen/spans/classes.json",
                 "tflite/imagepipe/CURRENT"):
        assert kept in after


def test_yes_leaves_nothing_for_a_second_gc(root, capsys):
    config, _ = root
    assert main_in_process("gc", "--output", config.run.output, *KEEP_TWO, "--yes") == 0
    capsys.readouterr()
    assert main_in_process("gc", "--output", config.run.output, *KEEP_TWO) == 0
    assert "dry run   nothing to delete" in capsys.readouterr().out


def test_anything_modified_within_min_age_is_kept(root):
    config, made = root
    old = time.time() - 3 * 86400
    for folder, _, names in os.walk(config.run.output):
        for name in names:
            os.utime(os.path.join(folder, name), (old, old))
    os.utime(os.path.join(made["runs"]["run-d"], "ImageExampleGen", "examples", "data.bin"))
    hour_ago = time.time() - 3600  # a long run, started before run-d, still writing run-a
    young = os.path.join(made["runs"]["run-a"], "Trainer", "model", "data.bin")
    os.utime(young, (hour_ago, hour_ago))
    plan = plan_gc(config, RetentionSettings(keep_versions=2, min_age="1d"))
    decisions = {d.unit.path: d for d in plan.decisions}
    assert decisions[made["runs"]["run-a"]].keep
    assert "min-age" in decisions[made["runs"]["run-a"]].reason
    assert not decisions[made["spans"]["abandoned"]].keep


@pytest.mark.parametrize("flags, named", [
    (("--min-age", "soon"), "--min-age"),
    (("--keep-versions", "0"), "--keep-versions"),
    (("--model-name", "other"), "--model-name other"),
])
def test_bad_flags_exit_2_naming_the_flag(root, capsys, flags, named):
    config, _ = root
    assert main_in_process("gc", "--output", config.run.output, *flags) == 2
    assert named in capsys.readouterr().err


def test_an_output_no_run_wrote_to_exits_2_and_makes_nothing(tmp_path, capsys):
    output = tmp_path / "typo"
    assert main_in_process("gc", "--output", output, "--yes") == 2
    assert f"--output {output}: no pipeline root" in capsys.readouterr().err
    assert not output.exists()


def test_no_compiled_step_can_reuse_an_older_runs_artifact_through_the_cache():
    """Why gc keeps compiled runs by provenance alone: KFP's cache key holds the names of a
    step's input artifacts, and ImageExampleGen, which every other step reads from, never
    caches (kfp_compiler/compiler.py _never_cached), so each run's steps see new artifacts
    and no step's key can match an older run's entry."""
    spec = json.loads((pathlib.Path(GOLDEN) / "kubeflow_tpu.json").read_text())["spec"]
    tasks = spec["root"]["dag"]["tasks"]
    for name, task in tasks.items():
        artifacts = task.get("inputs", {}).get("artifacts", {})
        cached = task.get("cachingOptions", {}).get("enableCache", False)
        assert not cached or artifacts, f"{name} caches with no input artifact"
    starts = [n for n, t in tasks.items() if not t.get("inputs", {}).get("artifacts")]
    assert starts and all(not tasks[n].get("cachingOptions", {}).get("enableCache")
                          for n in starts)
