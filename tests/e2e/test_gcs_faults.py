"""gs:// under injected faults: ingestion, push and prediction retry and finish complete;
a push killed mid-way never leaves a version that looks complete.

Each test runs tests/support/gcs_fault_steps.py inside scripts/with_gcs.sh, whose proxy
fails every 7th storage request (a 503, or a dropped connection). Needs root.
"""
import json
import os
import pathlib
import subprocess

import pytest

from tests.support.digits import make_span
from tests.support.gcs_harness import NEEDS_ROOT
from tests.support.paths import PYTHON, REPO, WITH_GCS

pytestmark = [pytest.mark.slow, NEEDS_ROOT]

RESULT_PREFIX = "FAULT_STEP "  # gcs_fault_steps.RESULT_PREFIX; test modules do not import it
TIME_LIMIT_S = 420
FAIL_EVERY = "7"
FAIL_MODES = ("503", "reset")
FAULT_STEPS = ("ingest", "push", "predict")
# TF's client backs off 1 s after each fault by default; 0.1 s keeps the runs short.
SHORT_BACKOFF = {"GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "100000"}


def seed_digits(tmp: pathlib.Path) -> pathlib.Path:
    """A seed folder whose bucket holds digits/<class>/: the first 10 PNGs of each class."""
    seed = tmp / "seed"
    make_span(seed / "imagepipe-test" / "digits", take=slice(0, 10), ready=False)
    return seed


def start_steps(tmp: pathlib.Path, steps: tuple, options: tuple = ()) -> subprocess.Popen:
    """Starts the driver's steps in one with_gcs.sh run, with its own server and folders.

    `timeout` sends TERM, which the script turns into the namespace's end, so a
    hung run leaves no server behind.
    """
    work = tmp / "work"
    work.mkdir()
    return subprocess.Popen(
        ["timeout", str(TIME_LIMIT_S), "bash", str(WITH_GCS), "--seed", str(seed_digits(tmp)),
         *options, "--", str(PYTHON), "-m", "tests.support.gcs_fault_steps", "--work",
         str(work), *steps], cwd=REPO, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        env={**os.environ, **SHORT_BACKOFF, "TMPDIR": str(tmp)})


def results_of(run: subprocess.Popen) -> dict:
    """The finished run's {"steps": {step: result}, "stderr", "exit"}."""
    stdout, stderr = run.communicate()
    steps = {r["step"]: r for r in (json.loads(line[len(RESULT_PREFIX):])
                                    for line in stdout.splitlines()
                                    if line.startswith(RESULT_PREFIX))}
    for result in steps.values():
        print(json.dumps({k: v for k, v in result.items() if k != "error"}))
    return {"steps": steps, "stderr": stderr, "exit": run.returncode}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The three runs, side by side: most of their time is spent in TF's backoff
    sleeps (about 0.6 s per injected fault), so together they take little longer
    than the longest alone. Each is waited for before any is judged."""
    plans = {mode: (FAULT_STEPS, ("--fail-every", FAIL_EVERY, "--fail-mode", mode))
             for mode in FAIL_MODES}
    plans["kill"] = (("kill",), ())
    started = {name: start_steps(tmp_path_factory.mktemp(f"gcs_{name}"), *plan)
               for name, plan in plans.items()}
    return {name: results_of(run) for name, run in started.items()}


def assert_passed(run: dict, steps: tuple) -> None:
    """Every step reported and passed; the tracebacks and the run's stderr tail if not."""
    failed = [f"{name}: did not report (exit {run['exit']})" if name not in run["steps"]
              else f"{name}:\n{run['steps'][name]['error']}" for name in steps
              if not run["steps"].get(name, {}).get("ok")]
    assert not failed, "\n".join(failed) + "\n--- stderr:\n" + run["stderr"][-4000:]


@pytest.mark.parametrize("mode", FAIL_MODES)
def test_ingestion_push_and_prediction_retry_transient_errors_and_finish_complete(
        runs, mode):
    assert_passed(runs[mode], FAULT_STEPS)


def test_a_killed_push_never_looks_complete_and_the_next_push_works(runs):
    assert_passed(runs["kill"], ("kill",))
