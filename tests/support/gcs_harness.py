"""Running a steps script inside `scripts/with_gcs.sh`, and the commands such scripts run.

The end-to-end tests against a real GCS server (fake-gcs-server in a private
network namespace) run a script of steps inside it; the script writes what each
step returned to a JSON file, which the test reads. Both halves are here.
"""
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from tests.support.paths import REPO, WITH_GCS

# scripts/with_gcs.sh refuses to run as anyone else.
NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: scripts/with_gcs.sh creates a network namespace")


def run_steps(module: str, results: pathlib.Path, *args, gcs_flags=(),
              timeout: int = 1500) -> dict:
    """Runs `python -m MODULE RESULTS ARGS...` under scripts/with_gcs.sh, from the
    repository root; returns the results JSON.

    Fails the test, with the harness's output, when the script wrote none.
    """
    completed = subprocess.run(
        ["bash", str(WITH_GCS), *gcs_flags, "--", sys.executable, "-m", module,
         str(results), *map(str, args)],
        capture_output=True, text=True, timeout=timeout, cwd=REPO)
    assert results.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
    found = json.loads(results.read_text())
    found.setdefault("harness", {"code": completed.returncode,
                                 "stderr": completed.stderr[-3000:]})
    return found


def command(*args, cwd: str, timeout: int = 900, env=None) -> dict:
    """One command's exit code, output tails and seconds (a step of a steps script).

    A run prints a line per epoch: 20,000 characters keep its header (the plan,
    the state folder) as well as its summary.
    """
    started = time.monotonic()
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout,
                            cwd=cwd, env=env)
    return {"code": result.returncode, "stdout": result.stdout[-20000:],
            "stderr": result.stderr[-3000:], "seconds": round(time.monotonic() - started, 1)}


def exited(step: dict, code: int = 0) -> dict:
    """`step` (what `command` returned), asserting it exited `code`; its output if not."""
    assert step.get("code") == code, (step.get("stdout", "")[-3000:]
                                      + step.get("stderr", "")[-3000:])
    return step


def run_and_record(steps, results: str, *args) -> None:
    """A steps script's main: `steps(*args)` (a dict of what each step returned), written
    to `results` with its seconds, or the error and traceback of what broke, with the
    steps done so far lost (the test shows what broke)."""
    started = time.monotonic()
    try:
        found = steps(*args)
    except Exception as e:  # noqa: BLE001  (the test shows what broke)
        import traceback
        found = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    found["seconds"] = round(time.monotonic() - started, 1)
    with open(results, "w", encoding="utf-8") as f:
        json.dump(found, f, indent=2)
