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

With parameter servers (TrainerParams.ps > 0) the cluster is a chief
(the coordinator), the workers and the parameter servers; the workers and
servers never end by themselves, so the run is over when the chief is,
and the others are then stopped, as Vertex AI and the Training Operator
stop them.

The chief (worker 0 without parameter servers): its output (epoch lines)
is the run's; the others' goes to log files shown if they fail. The first
task to fail stops the others, and every task is stopped when this process
is interrupted: a worker waiting for its peers ignores SIGTERM, so SIGKILL
follows.
"""
import base64
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Tuple

from tfx.components.trainer import executor as trainer_executor
from tfx.types import artifact_utils
from tfx.utils import json_utils

from core.loopback import free_ports
from modules.params import TrainerParams

_GRACE_S = 3.0  # between SIGTERM and SIGKILL when stopping the workers
_TAIL = 3000  # characters of a failed worker's log shown
_EXCEPTION = re.compile(r"^\s*[\w.]*(Error|Exception): ")


class Executor(trainer_executor.GenericExecutor):
    """GenericExecutor, or its N local workers when TrainerParams.workers > 1."""

    def Do(self, input_dict: Dict[str, List], output_dict: Dict[str, List],  # noqa: N802
           exec_properties: Dict[str, Any]) -> None:
        """Runs run_fn here (one task), or starts the local cluster and waits for it."""
        custom = json_utils.loads(exec_properties.get("custom_config") or "null") or {}
        params = TrainerParams.from_custom_config(custom)
        if (params.workers <= 1 and not params.ps) or os.environ.get("TF_CONFIG"):
            super().Do(input_dict, output_dict, exec_properties)
            return
        args = executor_args(f"{__name__}.Executor", input_dict, output_dict, exec_properties)
        run_workers(params.workers, args, params.ps)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def executor_args(executor_path: str, input_dict, output_dict, exec_properties) -> List[str]:
    """tfx.scripts.run_executor's arguments for that executor on these artifacts."""
    return ["--executor_class_path", executor_path,
            "--inputs-base64", _b64(artifact_utils.jsonify_artifact_dict(input_dict)),
            "--outputs-base64", _b64(artifact_utils.jsonify_artifact_dict(output_dict)),
            "--exec-properties-base64", _b64(json.dumps(exec_properties))]


def loopback_cluster(counts: Dict[str, int]) -> Dict[str, List[str]]:
    """{job: addresses}: `counts` tasks of each job on free loopback ports, in that order."""
    ports = iter(free_ports(sum(counts.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(count)]
            for job, count in counts.items() if count > 0}


def task_configs(cluster: Dict[str, List[str]], **extra) -> List[Tuple[str, str]]:
    """(task name, TF_CONFIG) per task, in the cluster's order: the same cluster, each its
    own task; `extra` keys join every TF_CONFIG."""
    return [(f"{job} {index}", json.dumps({"cluster": cluster, **extra,
                                           "task": {"type": job, "index": index}}))
            for job, addresses in cluster.items() for index in range(len(addresses))]


def tf_configs(workers: int, ps: int = 0) -> List[Tuple[str, str]]:
    """The local cluster's tasks: workers only, or a chief, the workers and the ps."""
    counts = {"chief": 1, "worker": workers, "ps": ps} if ps else {"worker": workers}
    return task_configs(loopback_cluster(counts))


RUN_EXECUTOR = ["-m", "tfx.scripts.run_executor"]  # after the interpreter


def run_workers(count: int, args: List[str], ps: int = 0) -> None:
    """Runs run_executor with `args` as every task of a local cluster; see run_tasks."""
    run_tasks([(name, config, [sys.executable, *RUN_EXECUTOR, *args])
               for name, config in tf_configs(count, ps)], everyone=not ps)


def run_tasks(tasks: List[Tuple[str, str, List[str]]], everyone: bool) -> None:
    """Starts (name, TF_CONFIG, argv) tasks, the chief first, and waits for them.

    `everyone`: every task must succeed; otherwise the run ends when the
    chief does (parameter servers), and the others are stopped. RuntimeError
    names the first task that failed.
    """
    with tempfile.TemporaryDirectory(prefix="imagepipe-workers-") as logs:
        processes = []
        try:
            for position, (name, config, argv) in enumerate(tasks):
                processes.append(_start(position, name, config, argv, logs))
            _wait(processes, logs, everyone=everyone)
        finally:
            stop(processes)


def _log(logs: str, name: str) -> str:
    return os.path.join(logs, name.replace(" ", "-") + ".log")


def _start(position: int, name: str, config: str, argv: List[str],
           logs: str) -> subprocess.Popen:
    # Its own TMPDIR inside the logs' folder: a task that is killed or stopped never runs
    # its exit handlers, and what it wrote to temp (TF's autograph sources) would stay.
    scratch = os.path.join(logs, name.replace(" ", "-") + "-tmp")
    os.mkdir(scratch)
    log = open(_log(logs, name), "wb")
    with log:  # the child keeps its own descriptor
        process = subprocess.Popen(
            argv, env={**os.environ, "TF_CONFIG": config, "TMPDIR": scratch}, stderr=log,
            stdout=None if position == 0 else log, start_new_session=True)
    process.task_name = name
    return process


def _wait(processes: List[subprocess.Popen], logs: str, everyone: bool = True) -> None:
    """Until every task (or the chief, the first) has succeeded, or one has failed."""
    while True:
        codes = [p.poll() for p in processes]
        failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            name = processes[failed[0]].task_name
            with open(_log(logs, name), "rb") as f:
                tail = f.read().decode("utf-8", "replace")[-_TAIL:]
            raise RuntimeError(f"training {name} (of {len(processes)} tasks) failed "
                               f"(exit code {codes[failed[0]]}){_last_error(tail)}; "
                               f"its log ends:\n{tail}")
        if codes[0] == 0 and (not everyone or all(code == 0 for code in codes)):
            return
        time.sleep(0.5)


def _last_error(log: str) -> str:
    """': ValueError: ...', the log's last exception line, for the one-line message."""
    errors = [line for line in log.splitlines() if _EXCEPTION.match(line)]
    return f": {errors[-1].strip()[:300]}" if errors else ""


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
