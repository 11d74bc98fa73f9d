"""Train on several local worker processes, as a cluster's workers would: a TF_CONFIG each.

    imagepipe run --workers 2

The Trainer's executor is TFX's GenericExecutor with one addition: when
TrainerParams ask for more than one worker and no TF_CONFIG is set (a
local run), it starts that many processes running TFX's own
`tfx.scripts.run_executor` on the same artifacts, each with a TF_CONFIG
naming all of them on free loopback ports, and waits. Each process is
then one task of the cluster, exactly as a Vertex AI worker pool replica
or a Kubeflow TFJob worker is, and runs `run_fn` under
MultiWorkerMirroredStrategy (modules/distribution.py). Under LocalDagRunner
the executor runs in the runner's process, so it is the one place that
can start the workers.

Worker 0 is the chief: its output (epoch lines) is the run's; the others'
goes to log files shown if they fail. The first worker to fail stops the
others, and every worker is stopped when this process is interrupted:
a worker waiting for its peers ignores SIGTERM, so SIGKILL follows.
"""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List

from tfx.components.trainer import executor as trainer_executor
from tfx.types import artifact_utils
from tfx.utils import json_utils

from modules.params import TrainerParams

_GRACE_S = 3.0  # between SIGTERM and SIGKILL when stopping the workers
_TAIL = 3000  # characters of a failed worker's log shown


class Executor(trainer_executor.GenericExecutor):
    """GenericExecutor, or its N local workers when TrainerParams.workers > 1."""

    def Do(self, input_dict: Dict[str, List], output_dict: Dict[str, List],  # noqa: N802
           exec_properties: Dict[str, Any]) -> None:
        """Runs run_fn here (one task), or starts the local cluster and waits for it."""
        custom = json_utils.loads(exec_properties.get("custom_config") or "null") or {}
        workers = TrainerParams.from_custom_config(custom).workers
        if workers <= 1 or os.environ.get("TF_CONFIG"):
            super().Do(input_dict, output_dict, exec_properties)
            return
        run_workers(workers, _executor_args(input_dict, output_dict, exec_properties))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _executor_args(input_dict, output_dict, exec_properties) -> List[str]:
    """tfx.scripts.run_executor's arguments for this executor on these artifacts."""
    return ["--executor_class_path", f"{__name__}.Executor",
            "--inputs-base64", _b64(artifact_utils.jsonify_artifact_dict(input_dict)),
            "--outputs-base64", _b64(artifact_utils.jsonify_artifact_dict(output_dict)),
            "--exec-properties-base64", _b64(json.dumps(exec_properties))]


def free_ports(count: int) -> List[int]:
    """Ports the kernel hands out free on the loopback (held open together, so distinct)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tf_configs(count: int) -> List[str]:
    """One TF_CONFIG per worker: the same cluster, each its own task."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(count)]}
    return [json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
            for i in range(count)]


def run_workers(count: int, executor_args: List[str]) -> None:
    """Starts `count` workers, waits for all; RuntimeError naming the first that failed."""
    with tempfile.TemporaryDirectory(prefix="imagepipe-workers-") as logs:
        processes = []
        try:
            for index, config in enumerate(tf_configs(count)):
                processes.append(_start(index, config, executor_args, logs))
            _wait(processes, logs)
        finally:
            stop(processes)


def _start(index: int, config: str, executor_args: List[str], logs: str) -> subprocess.Popen:
    log = open(os.path.join(logs, f"worker-{index}.log"), "wb")
    with log:  # the child keeps its own descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "tfx.scripts.run_executor", *executor_args],
            env={**os.environ, "TF_CONFIG": config}, stderr=log,
            stdout=None if index == 0 else log, start_new_session=True)


def _wait(processes: List[subprocess.Popen], logs: str) -> None:
    while True:
        codes = [p.poll() for p in processes]
        failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            index = failed[0]
            with open(os.path.join(logs, f"worker-{index}.log"), "rb") as f:
                tail = f.read().decode("utf-8", "replace")[-_TAIL:]
            raise RuntimeError(f"training worker {index} of {len(processes)} failed "
                               f"(exit code {codes[index]}); its log ends:\n{tail}")
        if all(code == 0 for code in codes):
            return
        time.sleep(0.5)


def stop(processes: List[subprocess.Popen]) -> None:
    """SIGTERM to every live worker's process group, SIGKILL to those still there later."""
    alive = [p for p in processes if p.poll() is None]
    for p in alive:
        _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + _GRACE_S
    for p in alive:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGKILL)
            p.wait()


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass
