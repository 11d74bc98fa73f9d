"""A real `tensorflow_model_server` for the serving check, when `--model-server` names one.

The server gets the model as TF Serving is given one in production: a base
folder with a numbered version holding the SavedModel and its warmup records,
which the server replays before it reports the version AVAILABLE. The check
then sends its REST requests to the server's `:predict` endpoint instead of
answering them in process. Ports are chosen free on 127.0.0.1; the server is
always stopped.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Optional

from core.contract import ASSETS_EXTRA
from core.loopback import free_ports
from core.storage.tree_copy import copy_tree

POLL_S = 0.2


class ServerUnavailable(RuntimeError):
    """The server could not start, or did not answer in time: the infrastructure's failure,
    not the model's (a server that answers with an error is the model's)."""


class ModelServer:
    """`binary` serving `model_dir` (with `warmup_path` as its warmup records) as `name`."""

    def __init__(self, binary: str, model_dir: str, warmup_path: str, name: str,
                 scratch: Optional[str] = None):
        """Lays the model out under `scratch` (a local folder; the temp folder without one)
        and starts the server; RuntimeError, with nothing left behind, if it cannot."""
        self._binary, self._name = binary, name
        self._base = tempfile.mkdtemp(prefix="imagepipe-model-server-", dir=scratch)  # local
        self._log, self._process = tempfile.TemporaryFile(), None
        try:
            version = os.path.join(self._base, "1")
            copy_tree(model_dir, version)
            os.makedirs(os.path.join(version, ASSETS_EXTRA), exist_ok=True)
            shutil.copyfile(warmup_path, os.path.join(version, ASSETS_EXTRA,
                                                      "tf_serving_warmup_requests"))
            grpc, self._port = free_ports(2)
            self._process = subprocess.Popen(
                [binary, f"--port={grpc}", f"--rest_api_port={self._port}",
                 f"--model_name={name}", f"--model_base_path={self._base}"],
                stdout=self._log, stderr=subprocess.STDOUT)
        except OSError as e:
            self.stop()
            raise ServerUnavailable(f"{binary} could not be started: {e}") from None

    def _url(self, suffix: str = "") -> str:
        return f"http://127.0.0.1:{self._port}/v1/models/{self._name}{suffix}"

    def wait_available(self, timeout_s: float) -> None:
        """Returns once version 1 is AVAILABLE; RuntimeError naming the binary otherwise."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"{self._binary} exited with code "
                                   f"{self._process.returncode}: {self._last_line()}")
            if self._state() == "AVAILABLE":
                return
            time.sleep(POLL_S)
        raise ServerUnavailable(f"{self._binary} did not make the model AVAILABLE in "
                                f"{timeout_s} s: "
                           f"{self._last_line()}")

    def _state(self) -> Optional[str]:
        try:
            with urllib.request.urlopen(self._url(), timeout=5) as answer:
                versions = json.load(answer).get("model_version_status") or [{}]
        except (OSError, ValueError):  # not listening yet, or loading
            return None
        return versions[0].get("state")

    def predict(self, body: str) -> str:
        """A `:predict` request's answer, as the server's REST API gives it."""
        request = urllib.request.Request(self._url(":predict"), data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.read().decode()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{self._binary} answered HTTP {e.code}: "
                               f"{e.read().decode(errors='replace')[:300]}") from None
        except OSError as e:  # refused, reset, timed out: the server died or hung
            raise ServerUnavailable(f"{self._binary} did not answer a request: {e}; "
                               f"{self._last_line()}") from None

    def _last_line(self) -> str:
        self._log.seek(0)
        lines = self._log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def stop(self) -> None:
        """Stops the server and removes its base folder."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()
        shutil.rmtree(self._base, ignore_errors=True)
