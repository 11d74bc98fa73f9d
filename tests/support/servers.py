"""Real server processes for tests: started, waited for until they answer, always stopped."""
import contextlib
import os
import signal
import subprocess
import time
import urllib.request

STOP_WAIT_S = 20  # after SIGTERM, before SIGKILL


@contextlib.contextmanager
def serving(command: list, log_path, ready_url: str, start_timeout_s: float = 30):
    """Runs `command`, its output in `log_path`, until the `with` block ends, however it ends.

    Yields the process once `ready_url` answers 200. The server gets a session of its
    own, so that the workers it starts (mlflow's gunicorn) are stopped with it.
    """
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            wait_answering(ready_url, server, start_timeout_s, log_path)
            yield server
        finally:
            _stop(server)


def _stop(server: subprocess.Popen) -> None:
    """SIGTERM to the server's process group; SIGKILL if it has not exited in STOP_WAIT_S."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def wait_answering(url: str, server: subprocess.Popen, timeout_s: float, log_path) -> None:
    """Waits until `url` answers 200 (a server's health or readiness page).

    Raises with the end of the server's log if it exits first, or once `timeout_s`
    is spent.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{os.path.basename(server.args[0])} exited: "
                               + log_path.read_text()[-2000:])
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        time.sleep(0.5)
    raise RuntimeError(f"{url} not answering within {timeout_s} s")


def get(url: str) -> str:
    """The body of a GET, as text."""
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode()
