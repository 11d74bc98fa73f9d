"""The serving check, InfraValidator's part without Docker: can a server load and use this model?

TF Serving cannot run here, so a fresh Python process with TensorFlow alone
(serving_worker.py) stands in for it: it loads the candidate, replays the
warmup file as TF Serving does at load, answers REST-style JSON requests on
`serving_image`, and compares the answers with the signature the Evaluator
scored. A model that fails any of it is not pushed.
"""
import atexit
import json
import os
import signal
import subprocess
import sys
from typing import Optional

from core.contract import IMAGE_KEY

# A check that hangs or whose process dies says nothing about the model: the
# infrastructure's (judged_inputs.py). The worker's own verdicts carry their "kind".
INFRASTRUCTURE = "infrastructure"


class ServingCheck:
    """One check in a child process: start it early (its import overlaps other work), then ask."""

    def __init__(self):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3")}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "components.serving_validator.serving_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env, start_new_session=True)  # its own group: a model server it starts too

    def _kill(self) -> None:
        """Kills the worker and whatever it started (a model server), then reaps it."""
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except ProcessLookupError:  # already gone
            pass
        self._process.communicate()

    def send(self, model_dir: str, warmup_path: str, rest_requests: int, atol: float,
             server: Optional[dict] = None) -> None:
        """The job, sent now: the worker starts on it as soon as its import is done.

        `server`: {"model_server": a tensorflow_model_server binary, "model_name",
        "timeout_s", "scratch": a folder the caller removes} to answer the REST requests;
        None answers them in the worker.
        """
        job = json.dumps({"model_dir": model_dir, "warmup_path": warmup_path,
                          "image_key": IMAGE_KEY, "rest_requests": rest_requests, "atol": atol,
                          **(server or {})})
        try:
            self._process.stdin.write(job)
            self._process.stdin.close()
        except BrokenPipeError:  # the worker died on import: result() says how
            pass
        self._process.stdin = None  # so communicate() does not flush a closed pipe

    def result(self, timeout: Optional[float]) -> dict:
        """{"ok", "reason", and the worker's figures}; a crash or a hang is a failed check,
        whose "kind" blames the infrastructure."""
        try:
            out, err = self._process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._kill()
            return {"ok": False, "kind": INFRASTRUCTURE,
                    "reason": f"the serving check timed out: the serving process did not "
                              f"answer in {timeout} s"}
        lines = out.strip().splitlines()
        if self._process.returncode == 0 and lines:
            try:
                return json.loads(lines[-1])
            except ValueError:
                pass
        last = (err.strip().splitlines() or ["no output"])[-1]
        return {"ok": False, "kind": INFRASTRUCTURE,
                "reason": f"the serving process crashed (exit code "
                          f"{self._process.returncode}): {last}"}

    def cancel(self) -> None:
        """Stops the worker if result() was never reached (an error in between)."""
        if self._process.poll() is None:
            self._kill()

    def alive(self) -> bool:
        return self._process.poll() is None


# A worker started ahead of its check (start_spare), which the next check in this
# process takes: a fresh process spends seconds importing TensorFlow, and on the
# local runner that import can overlap the stages before the check.
_spare: Optional[ServingCheck] = None


def start_spare() -> None:
    """Starts a worker for this process's next check, unless one is waiting already.

    It only waits on its stdin, so one never taken costs its import; it is
    stopped at exit (stop_spare).
    """
    global _spare
    if _spare is None or not _spare.alive():
        _spare = ServingCheck()


def stop_spare() -> None:
    """Stops a spare worker nobody took."""
    global _spare
    spare, _spare = _spare, None
    if spare is not None:
        spare.cancel()


def take_check() -> ServingCheck:
    """The spare worker if one is alive, else a new one."""
    global _spare
    spare, _spare = _spare, None
    return spare if spare is not None and spare.alive() else ServingCheck()


atexit.register(stop_spare)
