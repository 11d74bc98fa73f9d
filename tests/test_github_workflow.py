"""The GitHub Actions workflow is valid and safe (GitHub's schema, zizmor, pinned actions), and
runs what docs/testing.md says: each tier, when, as which user, with what the tests need.

Both tools come with the project's `test` extra (docs/install.md) and work offline:
check-jsonschema vendors GitHub's workflow schema, and zizmor runs its offline audits.
"""
import ast
import json
import pathlib
import re
import shlex
import subprocess
import sys

import pytest
import yaml

from tests.support.paths import REPO, TESTS

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))
CI = REPO / ".github" / "workflows" / "ci.yml"
# The venv's own tools, not whatever is first on PATH: sys.executable is .venv/bin/python.
BIN = pathlib.Path(sys.executable).parent
# zizmor exits 0 without findings, and 10 + the highest severity (11-14) with some.
ZIZMOR_FINDINGS_EXITS = (0, 11, 12, 13, 14)
PINNED_USES = re.compile(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    """Runs one of the venv's tools in the repository root and captures its output."""
    if not (BIN / tool).exists():
        pytest.fail(f"{BIN / tool} is missing: it comes with the `test` extra; "
                    "run `bash scripts/install.sh`")
    return subprocess.run([str(BIN / tool), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def _describe(finding: dict) -> str:
    """One zizmor finding (its JSON v1 form) as `audit: what at file:line`."""
    where = finding["locations"][0]
    path = where["symbolic"]["key"].get("Local", {}).get("verbatim_path", "?")
    line = where["concrete"]["location"]["start_point"]["row"] + 1
    return f"{finding['ident']}: {finding['desc']} at {path}:{line}"


def test_there_is_a_workflow():
    assert WORKFLOWS, "no workflow in .github/workflows"


def test_workflows_match_githubs_schema():
    result = _run("check-jsonschema", "--builtin-schema", "vendor.github-workflows",
                  *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing_of_high_severity():
    result = _run("zizmor", "--offline", "--format", "json", "--no-progress", ".github")
    assert result.returncode in ZIZMOR_FINDINGS_EXITS, result.stdout + result.stderr
    high = [_describe(finding) for finding in json.loads(result.stdout)
            if finding["determinations"]["severity"] == "High"]
    assert not high, "zizmor: " + "; ".join(high)


def test_every_action_is_pinned_to_a_commit_with_its_release_named():
    loose = [f"{path.name}:{number}: {line.strip()}"
             for path in WORKFLOWS
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if re.match(r"\s*(- )?uses:", line) and not PINNED_USES.search(line.strip())]
    assert not loose, ("pin each action as `owner/repo@<40-hex commit> # vX.Y.Z`: "
                       + "; ".join(loose))


# What the tests need from the system, which each job that runs a tier must add first:
# libusb-1.0 for the TFLite metadata writer (tests/components/tflite_converter/), promtool,
# Prometheus and the Pushgateway for the monitor's tests (tests/monitor/test_prometheus.py,
# the alert rules, tests/e2e/test_monitor.py in the slow tier), and /usr/bin/chromium for
# the report's browser test.
APT_PACKAGES = ("libusb-1.0-0", "prometheus", "prometheus-pushgateway")
CHROMIUM = "/usr/bin/chromium"
# A test that skips as root: `skipif(os.geteuid() == 0, ...)` on it, its class or its module.
SKIPS_AS_ROOT = re.compile(r"\bos\.get(e)?uid\(\) == 0")


def _workflow() -> dict:
    """ci.yml as data. PyYAML reads the key `on` as True (YAML 1.1), so it is renamed back."""
    workflow = yaml.safe_load(CI.read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def _commands(job: dict):
    """(step index, words) for every shell command line of the job's steps."""
    for index, step in enumerate(job["steps"]):
        for line in str(step.get("run", "")).splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:  # a line of a multi-line shell construct
                continue
            if words:
                yield index, words


def _test_runs(job: dict):
    """(step index, words, the -m selection or None) for each `scripts/test.sh` command."""
    for index, words in _commands(job):
        if "scripts/test.sh" in words:
            after = words[words.index("scripts/test.sh") + 1:]
            tier = after[after.index("-m") + 1] if "-m" in after else None
            yield index, words, tier


def _jobs_running(tier: str) -> list:
    """The names of the jobs that run `scripts/test.sh -m TIER`."""
    return [name for name, job in _workflow()["jobs"].items()
            if any(selection == tier for _, _, selection in _test_runs(job))]


def _runs_on(job: dict, event: str, ref: str) -> bool:
    """Whether the job's `if` holds for `event` on `ref`. Only the part of GitHub's expression
    language this workflow uses: ==, !=, &&, ||, !, parentheses, quoted strings,
    github.event_name and github.ref; anything else fails the test, naming itself."""
    condition = job.get("if", True)
    if isinstance(condition, bool):
        return condition
    python = str(condition).strip().removeprefix("${{").removesuffix("}}")
    python = python.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    python = re.sub(r"\bgithub\.event_name\b", repr(event), python)
    python = re.sub(r"\bgithub\.ref\b(?!_)", repr(ref), python)
    try:  # the expression is this repository's own file, evaluated with no builtins
        return bool(eval(python, {"__builtins__": {}}, {"true": True, "false": False}))
    except (NameError, SyntaxError) as e:
        pytest.fail(f"the test cannot read the job's `if: {condition}` ({e}); extend _runs_on")


def _marks(path: pathlib.Path):
    """(node id, the source of a mark on it) for a test module: its `pytestmark`, and the
    decorators of its functions, classes and their methods."""
    name = path.relative_to(REPO).as_posix()
    defined = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
                getattr(target, "id", "") == "pytestmark" for target in node.targets):
            yield name, ast.unparse(node.value)
        if not isinstance(node, defined):
            continue
        owners = [(f"{name}::{node.name}", node)]
        if isinstance(node, ast.ClassDef):
            owners += [(f"{name}::{node.name}::{method.name}", method)
                       for method in node.body if isinstance(method, defined)]
        for node_id, owner in owners:
            for decorator in owner.decorator_list:
                yield node_id, ast.unparse(decorator)


def _skipped_as_root() -> list:
    """The node ids (a file, file::test, file::Class...) of the tests that skip as root."""
    return sorted({node_id for path in TESTS.rglob("test_*.py")
                   for node_id, mark in _marks(path) if SKIPS_AS_ROOT.search(mark)})


def test_the_fast_tier_then_the_default_run_on_every_push_and_pull_request():
    workflow = _workflow()
    assert {"push", "pull_request"} <= set(workflow["on"]), workflow["on"]
    [name] = _jobs_running("not slow")
    job = workflow["jobs"][name]
    for event, ref in (("push", "refs/heads/main"), ("push", "refs/heads/topic"),
                       ("pull_request", "refs/pull/1/merge")):
        assert _runs_on(job, event, ref), f"job {name} does not run on {event} to {ref}"
    tier_step = next(index for index, _, tier in _test_runs(job) if tier == "not slow")
    assert any(index > tier_step and words[-1:] == ["scripts/run.sh"]
               for index, words in _commands(job)), f"job {name}: no scripts/run.sh after the tests"


def test_the_slow_tier_runs_on_pushes_to_main_on_a_schedule_and_by_hand():
    workflow = _workflow()
    assert workflow["on"].get("schedule") and all(
        entry.get("cron") for entry in workflow["on"]["schedule"]), workflow["on"]
    assert "workflow_dispatch" in workflow["on"] and "push" in workflow["on"]
    branches = (workflow["on"]["push"] or {}).get("branches")
    assert branches is None or "main" in branches, branches
    names = _jobs_running("slow")
    assert names, "no job runs `scripts/test.sh -m slow`"
    for event, ref in (("push", "refs/heads/main"), ("schedule", "refs/heads/main"),
                       ("workflow_dispatch", "refs/heads/topic")):
        assert any(_runs_on(workflow["jobs"][name], event, ref) for name in names), (
            f"the slow tier does not run on {event} to {ref}")


def test_each_tier_runs_as_root_so_the_network_namespace_tests_do_not_skip():
    """NEEDS_ROOT (tests/support/gcs_harness.py) skips unless root, in both tiers
    (tests/scripts/test_with_gcs.py is an integration test). sudo's secure_path would find
    the system's python3 instead of setup-python's 3.11, which scripts/install.sh refuses."""
    tiers = [(name, words) for name, job in _workflow()["jobs"].items()
             for _, words, tier in _test_runs(job) if tier in ("slow", "not slow")]
    assert {"slow", "not slow"} <= {words[words.index("-m") + 1] for _, words in tiers}
    for name, words in tiers:
        assert words[0] == "sudo", f"job {name} runs `{shlex.join(words)}` without sudo"
        assert "PATH=$PATH" in words, f"job {name}: sudo resets PATH: pass PATH=$PATH"


def test_the_tests_that_skip_as_root_run_as_the_runner():
    skipped = _skipped_as_root()
    assert skipped, "no test skips as root: update this test and docs/testing.md"
    as_runner = {word for job in _workflow()["jobs"].values()
                 for _, words, _ in _test_runs(job) if words[0] != "sudo" for word in words}
    missing = [node_id for node_id in skipped
               if not any(node_id == word or node_id.startswith(word.rstrip("/") + "/")
                          or node_id.startswith(word + "::") for word in as_runner)]
    assert not missing, ("these skip as root; name them in a ci.yml step that runs "
                         "scripts/test.sh without sudo: " + ", ".join(missing))


def test_every_job_that_runs_tests_adds_what_they_need_before():
    for name, job in _workflow()["jobs"].items():
        runs = list(_test_runs(job))
        if not runs:
            continue
        first = min(index for index, _, _ in runs)
        before = [words for index, words in _commands(job) if index < first]
        installed = {word for words in before if "apt-get" in words and "install" in words
                     for word in words}
        assert set(APT_PACKAGES) <= installed, (
            f"job {name} does not apt-get install {set(APT_PACKAGES) - installed}")
        assert any(CHROMIUM in str(step.get("run", "")) for step in job["steps"][:first]), (
            f"job {name} does not make sure of {CHROMIUM}")


def test_the_jobs_set_up_alike_up_to_the_install():
    """The jobs repeat their set-up (checkout, Python, the install cache, system packages,
    the install); a change to one must reach the others."""
    set_ups = {}
    for name, job in _workflow()["jobs"].items():
        install = next(index for index, words in _commands(job)
                       if "scripts/install.sh" in words)
        set_ups[name] = job["steps"][:install + 1]
    first, *others = set_ups.items()
    for name, steps in others:
        assert steps == first[1], f"jobs {first[0]} and {name} set up differently"


def test_every_job_has_a_timeout():
    untimed = [name for name, job in _workflow()["jobs"].items()
               if not isinstance(job.get("timeout-minutes"), int)
               or not 0 < job["timeout-minutes"] <= 360]
    assert not untimed, f"jobs without timeout-minutes (1-360): {untimed}"
