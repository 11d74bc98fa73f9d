"""A second run on the same output refuses at once; a killed run's lock is taken over."""
import os
import subprocess
import sys
import time

import pytest

from core.errors import UsageError
from pipeline.local.lock import output_lock
from tests.support.cli import imagepipe


def test_a_held_lock_refuses_and_a_released_one_is_taken(tmp_path):
    with output_lock(str(tmp_path)):
        child = subprocess.run(
            [sys.executable, "-c", "import sys; from pipeline.local.lock import output_lock\n"
             "try:\n    output_lock(sys.argv[1]).__enter__()\nexcept Exception as e:\n"
             "    print(e)", str(tmp_path)], capture_output=True, text=True, timeout=60)
        assert f"another imagepipe run is using it (pid {os.getpid()}" in child.stdout
    with output_lock(str(tmp_path)):  # released on exit: free again
        pass


@pytest.mark.slow
def test_a_concurrent_run_is_refused_at_once_then_a_killed_runs_lock_is_free(
        tmp_path, mnist_subset, start_run):
    out = tmp_path / "out"
    first = start_run("--data", str(mnist_subset), "--output", str(out), "--train-steps", "5")
    line = next(line for line in first.process.stdout if line.startswith("start "))
    assert line.startswith("start     ImageExampleGen")
    began = time.time()
    second = imagepipe("run", "--data", mnist_subset, "--output", out, timeout=120)
    assert second.returncode == 2 and time.time() - began < 30
    assert f"another imagepipe run is using it (pid {first.process.pid}" in second.stderr
    assert "Traceback" not in second.stderr
    first.kill_when(lambda _: True)  # SIGKILL: the kernel drops its flock
    with output_lock(str(out)):  # the stale lock file is taken over
        pass
    with pytest.raises(UsageError):  # and held again, by this test now
        with output_lock(str(out)):
            with output_lock(str(out)):
                pass
