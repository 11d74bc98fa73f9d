"""A real `mlflow server` on a loopback port, for the --mlflow-uri tests; always stopped."""
import contextlib

import pytest

from core.loopback import free_ports
from tests.support.paths import VENV_BIN
from tests.support.servers import serving


@contextlib.contextmanager
def mlflow_server(folder, start_timeout_s: float = 120):
    """Yields the server's URI; SQLite store and artifacts under `folder`."""
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed")
    port, = free_ports(1)
    command = [str(VENV_BIN / "mlflow"), "server",
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{folder}/mlflow.db",
               "--artifacts-destination", str(folder / "artifacts")]
    uri = f"http://127.0.0.1:{port}"
    with serving(command, folder / "server.log", uri + "/health", start_timeout_s):
        yield uri
