"""Running the `imagepipe` CLI from a test: as a subprocess, as a user would, or in-process;
and the KFP emulator's command, kubeflow/run_local.py.

A subprocess costs a TensorFlow import (seconds) but tests the installed console script
and its exit codes; in-process (`cli.main.main`) costs only the command's own work.
"""
import json
import pathlib
import subprocess
import sys

from tests.support.paths import IMAGEPIPE, RUN_LOCAL

TAIL_CHARS = 3000  # how much of a failed command's stdout and stderr an assertion shows


def imagepipe(*args, timeout: float = 900, check: bool = False,
              **popen) -> subprocess.CompletedProcess:
    """Runs `imagepipe ARGS...` (each str()-ed) with its output captured as text.

    Args:
        args: the subcommand and its flags; paths and numbers are fine.
        timeout: seconds before subprocess.TimeoutExpired.
        check: assert that it exited 0, showing the tails of its output if not.
        popen: more subprocess.run arguments (env, cwd, stdin).
    """
    result = subprocess.run([str(IMAGEPIPE), *map(str, args)], capture_output=True,
                            text=True, timeout=timeout, **popen)
    if check:
        assert result.returncode == 0, failure(result)
    return result


def failure(result: subprocess.CompletedProcess) -> str:
    """The tails of a finished command's stdout and stderr, for an assertion message."""
    return result.stdout[-TAIL_CHARS:] + result.stderr[-TAIL_CHARS:]


def run_pipeline(data, output, *flags, timeout: float = 900) -> tuple:
    """`imagepipe run --data DATA --output OUTPUT FLAGS...`, which must exit 0.

    Returns:
        (the run's summary.json as a dict, its stdout).
    """
    result = imagepipe("run", "--data", data, "--output", output, *flags,
                       timeout=timeout, check=True)
    return read_summary(output), result.stdout


def read_summary(output) -> dict:
    """The summary.json a run wrote in its --output folder."""
    return json.loads((pathlib.Path(output) / "summary.json").read_text())


def main_in_process(*args) -> int:
    """`cli.main.main(ARGS)` in this process; its exit code, argparse's exits included."""
    from cli.main import main
    try:
        return main([str(arg) for arg in args])
    except SystemExit as exit_:  # argparse and config errors exit through the parser
        return exit_.code


def run_local(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python kubeflow/run_local.py ARGS...`: a compiled package run as KFP runs it."""
    return subprocess.run([sys.executable, str(RUN_LOCAL), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)
