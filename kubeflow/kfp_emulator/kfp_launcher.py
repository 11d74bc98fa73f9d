"""The launcher's part of a task: its container command as a local process, then its outputs.

On a cluster KFP's launcher runs the user command in the task's pod and
records the outputs in ML Metadata (launcher_v2 Execute); here the command
runs with this interpreter and the outputs are recorded as kfp_outputs.py says.
`launch` runs in a thread of its own while other tasks run in theirs: it
writes only its task's folder, and takes its artifact ids under a lock.
"""
import os
import subprocess
import sys
from typing import Any, Dict, List

from kfp.local import executor_input_utils, placeholder_utils
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from kfp_emulator import kfp_cache, kfp_outputs

# What the backend's launcher names the executor output file (component.OutputMetadataFilepath
# is /tmp/kfp_outputs/output_metadata.json): a pod-local file, so here a local one.
OUTPUT_METADATA = "output_metadata.json"
LOG_FILE = "log.txt"
# kfp_compiler.tfjob.OPERATOR_ENV, spelled out: importing that module loads TFX
# and TensorFlow, which would slow every run_local.py start (a test keeps them equal).
OPERATOR_ENV = "IMAGEPIPE_TFJOB_OPERATOR"


class TaskFailed(Exception):
    """A task's process exited non-zero, or its driver failed; names the task and its log."""

    def __init__(self, task: str, log: str):
        super().__init__(f"task {task} failed; its log: {log}")
        self.task, self.log = task, log


def write_log(task_dir: str, text: str) -> str:
    """Appends to the task's log; returns its path."""
    os.makedirs(task_dir, exist_ok=True)
    log = os.path.join(task_dir, LOG_FILE)
    with open(log, "a") as f:
        f.write(text)
    return log


def launch(task_name: str, container: pb.PipelineDeploymentConfig.PipelineContainerSpec,
           component: pb.ComponentSpec, executor_input: pb.ExecutorInput, run_root: str,
           task_dir: str, state_dir: str) -> Dict[str, Any]:
    """Runs the command; returns the outputs as recorded (kfp_outputs.recorded).

    `task_dir` takes the log and the executor output file; `state_dir` gives
    the artifact ids. Raises TaskFailed.
    """
    os.makedirs(task_dir, exist_ok=True)
    executor_input.outputs.output_file = os.path.join(task_dir, OUTPUT_METADATA)
    command = _command(container, component, executor_input, run_root, task_name)
    log = os.path.join(task_dir, LOG_FILE)
    # A multi-worker Trainer submits a TFJob; here its replicas run as local
    # processes with the TF_CONFIG the Training Operator would set (kfp_compiler/tfjob.py).
    env = {**os.environ, OPERATOR_ENV: "local"}
    with open(log, "w") as f:
        code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    if code != 0:
        raise TaskFailed(task_name, log)
    ids = kfp_cache.next_artifact_ids(state_dir, len(executor_input.outputs.artifacts))
    try:
        return kfp_outputs.recorded(executor_input, component, ids)
    except ValueError as e:
        raise TaskFailed(task_name, write_log(task_dir, f"launcher: {e}\n")) from None


def _command(container: pb.PipelineDeploymentConfig.PipelineContainerSpec,
             component: pb.ComponentSpec, executor_input: pb.ExecutorInput, run_root: str,
             task_name: str) -> List[str]:
    """The container's command and args, placeholders resolved, run by this interpreter."""
    command = placeholder_utils.replace_placeholders(
        full_command=[*container.command, *container.args],
        executor_input_dict=executor_input_utils.executor_input_to_dict(
            executor_input, component),
        pipeline_resource_name=os.path.basename(run_root), task_resource_name=task_name,
        pipeline_root=run_root, unique_pipeline_id=os.path.basename(run_root))
    # The image's `python` is this checkout's environment (kubeflow/Dockerfile installs
    # the same pins); the image itself is never pulled.
    if command and command[0] in ("python", "python3"):
        command[0] = sys.executable
    return command
