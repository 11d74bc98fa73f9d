"""Helpers for the reliability tests: `imagepipe run` as a process group we can SIGKILL."""
import os
import signal
import subprocess
import time

import pytest

from tests.support.paths import IMAGEPIPE


class Run:
    """A running `imagepipe run`; its stdout lines are read as they come."""

    def __init__(self, *args, tmpdir=None):
        # Its own session: the kill takes the encoder workers too, as a lost machine would.
        # Its own TMPDIR: what a SIGKILLed run leaves in temp (Beam's, the Pusher's
        # staging) goes with the test's tmp_path instead of piling up in /tmp.
        env = dict(os.environ, **({"TMPDIR": str(tmpdir)} if tmpdir else {}))
        self.process = subprocess.Popen([str(IMAGEPIPE), "run", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1,
                                        start_new_session=True, env=env)
        self.lines = []

    def kill_when(self, seen, delay: float = 0.0) -> str:
        """SIGKILLs the process group after the first stdout line for which seen(line)."""
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if seen(line):
                time.sleep(delay)
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=60)
                return line
        raise AssertionError("the run ended before the kill point:\n" + "\n".join(
            self.lines[-30:]) + self.process.stderr.read()[-3000:])

    def finish(self, timeout: float = 900) -> int:
        out, err = self.process.communicate(timeout=timeout)
        self.lines += out.splitlines()
        self.stderr = err
        return self.process.returncode


@pytest.fixture
def start_run(tmp_path):
    runs = []
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()

    def start(*args) -> Run:
        runs.append(Run(*args, tmpdir=tmpdir))
        return runs[-1]

    yield start
    for run in runs:  # never leave a pipeline running after a failed test
        if run.process.poll() is None:
            os.killpg(run.process.pid, signal.SIGKILL)
            run.process.wait()
