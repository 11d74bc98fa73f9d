"""A real `mlflow server` on a loopback port, for the --mlflow-uri tests; always stopped."""
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mlflow_server(folder, start_timeout_s: float = 120):
    """Yields the server's URI; SQLite store and artifacts under `folder`."""
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed")
    port = _free_port()
    command = [os.path.join(os.path.dirname(sys.executable), "mlflow"), "server",
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{folder}/mlflow.db",
               "--artifacts-destination", str(folder / "artifacts")]
    log = open(folder / "server.log", "wb")
    # Its own session: the server starts gunicorn workers, all stopped with the group.
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        wait_answering(uri + "/health", server, start_timeout_s, folder / "server.log")
        yield uri
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def wait_answering(url: str, server: subprocess.Popen, timeout_s: float, log_path) -> None:
    """Waits until `url` answers 200 (a server's health or readiness page).

    Also serves tests/prometheus_servers.py. Raises with the end of the server's log
    if it exits first, or once `timeout_s` is spent.
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
