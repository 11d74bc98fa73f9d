"""Run a compiled KFP PipelineSpec on this machine as the open-source KFP v2 backend would.

`kubeflow/run_local.py` is the command; this module is its testable core.
What it emulates, and where that behaviour lives upstream:
- the walk: kfp.local.graph_utils.topological_sort_tasks over the root DAG;
- task arguments, ExecutorInput and `{{$}}`: kfp.local's dag_orchestrator
  .make_task_arguments, executor_input_utils.construct_executor_input and
  placeholder_utils.replace_placeholders (private modules: kfp is pinned);
- output URIs `<root>/<pipeline name>/<run id>/<task>/<output>`: the backend's
  metadata.GenerateOutputURI, used by its driver's provisionOutputs and
  client.GetPipeline;
- upstream artifacts reach a task with an empty type (`instanceSchema: ""`) and
  their MLMD id as name: backend metadata/client.go GetOutputArtifactsByExecutionId
  leaves the schema "" ("TODO(Bobgy): figure out how to get schema") and
  OutputArtifact.ToRuntimeArtifact copies it into the type;
- resolver tasks are refused (backend argocompiler/dag.go: "resolver executors
  not implemented"), and `pre_cache_check` hooks never run (nothing in the
  backend or kfp.local runs them).
Each task's container command runs as a local process with this interpreter;
the image is not pulled. `keep_types=True` passes the producer's declared type
instead, as Vertex does, for comparison.
"""
import dataclasses
import os
import subprocess
import sys
import time
import uuid
from typing import Callable, Dict, List, Optional

import yaml
from google.protobuf import json_format
from kfp.local import (dag_orchestrator, executor_input_utils, executor_output_utils,
                       graph_utils, io, placeholder_utils, utils)
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from modules.cluster.tfjob import OPERATOR_ENV
from components.common.storage import files
from pipeline.errors import UsageError

# What the backend's launcher names the executor output file (component.OutputMetadataFilepath
# is /tmp/kfp_outputs/output_metadata.json): a pod-local file, so here a local one.
OUTPUT_METADATA = "output_metadata.json"
LOG_FILE = "log.txt"


class TaskFailed(Exception):
    """A task's process exited non-zero; names the task and its log."""

    def __init__(self, task: str, log: str):
        super().__init__(f"task {task} failed; its log: {log}")
        self.task, self.log = task, log


@dataclasses.dataclass
class Run:
    """One run's fixed facts; `artifact_ids` stands in for MLMD's id sequence."""

    spec: pb.PipelineSpec
    root: str  # the run's root: <pipeline root>/<pipeline name>/<run id>
    local_dir: str  # logs and executor output files (pod-local files on a cluster)
    keep_types: bool
    executors: Dict[str, pb.PipelineDeploymentConfig.ExecutorSpec]
    store: io.IOStore = dataclasses.field(default_factory=io.IOStore)
    next_artifact_id: int = 1


def load_spec(path: str) -> pb.PipelineSpec:
    """The package's first YAML document as a PipelineSpec; UsageError if it is not one."""
    try:
        with open(path) as f:
            document = next(yaml.safe_load_all(f))
        return json_format.ParseDict(document, pb.PipelineSpec())
    except (OSError, StopIteration, yaml.YAMLError, json_format.ParseError, TypeError) as e:
        raise UsageError(f"{path}: not a compiled KFP pipeline package ({e})") from None


def refuse_unsupported(spec: pb.PipelineSpec) -> None:
    """Resolver tasks fail on the backend at compile time (argocompiler/dag.go); here too."""
    for name, task in spec.root.dag.tasks.items():
        label = spec.components[task.component_ref.name].executor_label
        executor = spec.deployment_spec["executors"][label]
        if "resolver" in executor:
            raise UsageError(f"task {name} is a resolver: open-source KFP does not run "
                             "resolver executors (compile with --target kubeflow)")
        if "container" not in executor:
            raise UsageError(f"task {name}: only container executors run here")


def run_pipeline(spec: pb.PipelineSpec, pipeline_root: str, keep_types: bool = False,
                 echo: Callable[[str], None] = print) -> str:
    """Runs every task in dependency order; returns the run's root. Raises TaskFailed."""
    refuse_unsupported(spec)
    run_id = uuid.uuid4().hex[:12]
    name = spec.pipeline_info.name
    run = Run(spec=spec, root=f"{pipeline_root.rstrip('/')}/{name}/{run_id}",
              local_dir=_local_dir(pipeline_root, name, run_id), keep_types=keep_types,
              executors={label: utils.struct_to_executor_spec(e) for label, e in
                         spec.deployment_spec["executors"].items()})
    echo(f"run {run_id}: {len(spec.root.dag.tasks)} tasks under {run.root}")
    stack = graph_utils.topological_sort_tasks(spec.root.dag.tasks)
    while stack:
        task = stack.pop()
        echo(f"start {task}")
        started = time.monotonic()
        _run_task(run, task)
        echo(f"done  {task} {time.monotonic() - started:.1f} s")
    return run.root


def _local_dir(pipeline_root: str, name: str, run_id: str) -> str:
    """Where logs go: beside the artifacts for a local root, else under ./kfp-local."""
    base = pipeline_root if not files.is_remote(pipeline_root) else os.path.abspath("kfp-local")
    return os.path.join(base, name, run_id, ".launcher")


def _run_task(run: Run, task_name: str) -> None:
    task = run.spec.root.dag.tasks[task_name]
    component = run.spec.components[task.component_ref.name]
    arguments = dag_orchestrator.make_task_arguments(task.inputs, run.store)
    executor_input = executor_input_utils.construct_executor_input(
        component_spec=component, arguments=arguments,
        task_root=f"{run.root}/{task_name}", block_input_artifact=False)
    _as_the_backend_passes_them(run, task, executor_input)
    local = os.path.join(run.local_dir, task_name)
    os.makedirs(local, exist_ok=True)
    executor_input.outputs.output_file = os.path.join(local, OUTPUT_METADATA)
    command = _command(run, task_name, component, executor_input)
    log = os.path.join(local, LOG_FILE)
    # A multi-worker Trainer submits a TFJob; here its replicas run as local
    # processes with the TF_CONFIG the Training Operator would set (modules/cluster/tfjob.py).
    env = {**os.environ, OPERATOR_ENV: "local"}
    with open(log, "w") as f:
        code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    if code != 0:
        raise TaskFailed(task_name, log)
    outputs = executor_output_utils.get_outputs_for_task(executor_input, component)
    for key, artifact in outputs.items():
        # The backend's downstream name for an artifact is its MLMD id (client.go,
        # GenerateExecutionConfig parses it as an int64).
        artifact.name = str(run.next_artifact_id)
        run.next_artifact_id += 1
        run.store.put_task_output(task_name, key, artifact)


def _as_the_backend_passes_them(run: Run, task: pb.PipelineTaskSpec,
                                executor_input: pb.ExecutorInput) -> None:
    """Input types: emptied as the backend does, or the producer's declared one."""
    for key, spec in task.inputs.artifacts.items():
        producer = spec.task_output_artifact
        for artifact in executor_input.inputs.artifacts[key].artifacts:
            if run.keep_types:
                artifact.type.CopyFrom(_declared_output_type(run.spec, producer))
            else:
                artifact.type.CopyFrom(pb.ArtifactTypeSchema(instance_schema=""))
    # Output artifacts have no name until MLMD records them (driver provisionOutputs).
    for artifacts in executor_input.outputs.artifacts.values():
        for artifact in artifacts.artifacts:
            artifact.ClearField("name")


def _declared_output_type(spec: pb.PipelineSpec, producer) -> pb.ArtifactTypeSchema:
    component = spec.components[spec.root.dag.tasks[producer.producer_task].component_ref.name]
    return component.output_definitions.artifacts[producer.output_artifact_key].artifact_type


def _command(run: Run, task_name: str, component: pb.ComponentSpec,
             executor_input: pb.ExecutorInput) -> List[str]:
    """The container's command and args, placeholders resolved, run by this interpreter."""
    container = run.executors[component.executor_label].container
    command = placeholder_utils.replace_placeholders(
        full_command=[*container.command, *container.args],
        executor_input_dict=executor_input_utils.executor_input_to_dict(
            executor_input, component),
        pipeline_resource_name=os.path.basename(run.root), task_resource_name=task_name,
        pipeline_root=run.root, unique_pipeline_id=os.path.basename(run.root))
    # The image's `python` is this checkout's environment (kubeflow/Dockerfile installs
    # the same pins); the image itself is never pulled.
    if command and command[0] in ("python", "python3"):
        command[0] = sys.executable
    return command


def default_root(spec: pb.PipelineSpec) -> Optional[str]:
    """The spec's defaultPipelineRoot, or None."""
    return spec.default_pipeline_root or None
