"""Run a compiled KFP PipelineSpec on this machine as the open-source KFP v2 backend would.

`kubeflow/run_local.py` is the command; this module is its testable core.
What it emulates, and where that behaviour lives upstream:
- the walk: Argo's DAG, as the backend's argocompiler builds it: every task
  starts once its upstream tasks are done (at most `parallelism` at once, as
  KFP's pipeline-level parallelism caps them), and after a failure none
  starts while the running ones finish (Argo's default failFast);
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
  backend or kfp.local runs them);
- trigger conditions (trigger.py): a false one skips the task, and every task
  downstream of a skipped one is skipped too (the Argo workflow makes each
  driver depend on `<upstream>.Succeeded`, argocompiler dag.go depends());
- the cache (kfp_cache.py), and outputs as the launcher records them
  (kfp_outputs.py).
Each task's container command runs as a local process with this interpreter;
the image is not pulled. `keep_types=True` passes the producer's declared type
instead, as Vertex does, for comparison.
"""
import dataclasses
import os
import time
import uuid
from concurrent import futures
from typing import Callable, Dict, List, Optional, Union

import yaml
from google.protobuf import json_format
from kfp.local import (dag_orchestrator, executor_input_utils, executor_output_utils,
                       graph_utils, io, utils)
from kfp.pipeline_spec import pipeline_spec_pb2 as pb

from core.storage import files
from core.errors import UsageError
from kfp_emulator import kfp_cache, kfp_launcher, kfp_outputs, trigger
from kfp_emulator.kfp_launcher import TaskFailed
from kfp_emulator.run_result import CACHED, DONE, SKIPPED, RunResult, TaskState

__all__ = ["TaskFailed", "load_spec", "run_pipeline", "default_root", "default_parallelism"]


@dataclasses.dataclass
class Run:
    """One run's fixed facts, and what its tasks have published so far."""

    spec: pb.PipelineSpec
    root: str  # the run's root: <pipeline root>/<pipeline name>/<run id>
    local_dir: str  # logs and executor output files (pod-local files on a cluster)
    state_dir: str  # the cache and the artifact ids, shared by runs (kfp_cache.state_dir)
    keep_types: bool
    executors: Dict[str, pb.PipelineDeploymentConfig.ExecutorSpec]
    cache: Optional[kfp_cache.CacheStore]  # None: caching off for the whole run
    result: RunResult
    store: io.IOStore = dataclasses.field(default_factory=io.IOStore)


def load_spec(path: str) -> pb.PipelineSpec:
    """The package's first YAML document as a PipelineSpec; UsageError if it is not one."""
    try:
        with open(path) as f:
            document = next(yaml.safe_load_all(f))
        return json_format.ParseDict(document, pb.PipelineSpec())
    except (OSError, StopIteration, yaml.YAMLError, json_format.ParseError, TypeError) as e:
        raise UsageError(f"{path}: not a compiled KFP pipeline package ({e})") from None


def refuse_unsupported(spec: pb.PipelineSpec) -> None:
    """Resolver tasks fail on the backend at compile time (argocompiler/dag.go); here too.

    So does a trigger condition that does not compile (trigger.py), which fails its
    task on the backend, before any task runs.
    """
    for name, task in spec.root.dag.tasks.items():
        label = spec.components[task.component_ref.name].executor_label
        executor = spec.deployment_spec["executors"][label]
        if "resolver" in executor:
            raise UsageError(f"task {name} is a resolver: open-source KFP does not run "
                             "resolver executors (compile with --target kubeflow)")
        if "container" not in executor:
            raise UsageError(f"task {name}: only container executors run here")
        if task.trigger_policy.condition:
            try:
                trigger.parse(task.trigger_policy.condition)
            except UsageError as e:
                raise UsageError(f"task {name}: {e}") from None


def run_pipeline(spec: pb.PipelineSpec, pipeline_root: str, keep_types: bool = False,
                 echo: Callable[[str], None] = print, enable_cache: bool = True,
                 parallelism: Optional[int] = None) -> RunResult:
    """Runs, reuses or skips every task, each once its upstream tasks are resolved.

    Args:
        spec: the compiled package.
        pipeline_root: where artifacts go (a local folder or gs://).
        keep_types: pass upstream artifacts with their declared types, as Vertex does.
        echo: takes each line the run prints, as its events happen.
        enable_cache: False is KFP's run-level `enable_caching=False`: no task
            reads or writes the cache.
        parallelism: at most this many task processes at once (KFP's pipeline-level
            parallelism); None: one per CPU. 1 runs them one after another.

    Returns:
        The run's result; its states in topological order, whatever order the tasks ended in.

    Raises:
        TaskFailed: a task failed; no task started after it, and the running ones finished.
        UsageError: the package cannot run here, or `parallelism` is under 1.
    """
    refuse_unsupported(spec)
    parallelism = default_parallelism() if parallelism is None else parallelism
    if parallelism < 1:
        raise UsageError(f"parallelism {parallelism}: at least one task must run at a time")
    run_id = uuid.uuid4().hex[:12]
    name = spec.pipeline_info.name
    state_dir = kfp_cache.state_dir(pipeline_root)
    root = f"{pipeline_root.rstrip('/')}/{name}/{run_id}"
    run = Run(spec=spec, root=root, local_dir=_local_dir(pipeline_root, name, run_id),
              state_dir=state_dir, keep_types=keep_types,
              executors={label: utils.struct_to_executor_spec(e) for label, e in
                         spec.deployment_spec["executors"].items()},
              cache=kfp_cache.CacheStore(state_dir, name) if enable_cache else None,
              result=RunResult(root=root, run_id=run_id))
    echo(f"run {run_id}: {len(spec.root.dag.tasks)} tasks under {run.root}")
    order = graph_utils.topological_sort_tasks(spec.root.dag.tasks)[::-1]  # a stack: reversed
    _Walk(run, order, parallelism, echo).walk()
    run.result.states = {task: run.result.states[task] for task in order}
    return run.result


def default_parallelism() -> int:
    """One task process per CPU: each step's time is mostly its own work (and imports)."""
    return os.cpu_count() or 1


def _local_dir(pipeline_root: str, name: str, run_id: str) -> str:
    """Where logs go: beside the artifacts for a local root, else under ./kfp-local."""
    base = pipeline_root if not files.is_remote(pipeline_root) else os.path.abspath("kfp-local")
    return os.path.join(base, name, run_id, ".launcher")


@dataclasses.dataclass
class _Launch:
    """A task its driver sent to the launcher: what the process needs, and what follows it."""

    task: str
    component: pb.ComponentSpec
    executor_input: pb.ExecutorInput
    fingerprint: Optional[str]  # where set, the outputs are recorded in the cache
    started: float = 0.0


class _Walk:
    """Argo's DAG walk: every task starts once its upstream tasks are done, cached or skipped.

    Only the calling thread reads or writes the run (its IOStore, result and
    cache) and echoes, so those need no lock; the pool's threads each wait on
    one task's process (kfp_launcher.launch, whose artifact ids are locked).
    """

    def __init__(self, run: Run, order: List[str], parallelism: int,
                 echo: Callable[[str], None]):
        self.run, self.parallelism, self.echo = run, parallelism, echo
        self.order = order
        self.waiting = list(order)  # of the ready tasks, the first in topological order goes first
        self.running: Dict[futures.Future, _Launch] = {}
        self.failure: Optional[TaskFailed] = None

    def walk(self) -> None:
        """Runs the tasks to the end. Raises TaskFailed (the first failure) or UsageError.

        After a failure no task starts and the running ones finish (and are
        recorded) before the run fails, as Argo's DAG does by default (failFast).
        """
        with futures.ThreadPoolExecutor(max_workers=self.parallelism) as pool:
            self._start_ready(pool)
            while self.running:
                ended, _ = futures.wait(self.running, return_when=futures.FIRST_COMPLETED)
                for future in sorted(ended, key=lambda f: self.order.index(self.running[f].task)):
                    self._end(future)
                self._start_ready(pool)
        if self.failure:
            raise self.failure
        if self.waiting:
            raise UsageError("tasks never ready (a dependency cycle, or an upstream task not "
                             f"in the pipeline): {', '.join(self.waiting)}")

    def _start_ready(self, pool: futures.ThreadPoolExecutor) -> None:
        """Resolves ready tasks while a process slot is free; a skip or a cache hit takes none."""
        while self.failure is None and len(self.running) < self.parallelism:
            ready = next((task for task in self.waiting
                          if all(up in self.run.result.states
                                 for up in _upstream(self.run.spec.root.dag.tasks[task]))), None)
            if ready is None:
                return
            self.waiting.remove(ready)
            try:
                decided = _drive(self.run, ready)
            except TaskFailed as e:
                self.failure = e
                return
            if isinstance(decided, TaskState):
                self._resolve(ready, decided)
            else:
                self.running[self._start(decided, pool)] = decided

    def _start(self, launch: _Launch, pool: futures.ThreadPoolExecutor) -> futures.Future:
        self.echo(f"start {launch.task}")
        launch.started = time.monotonic()
        container = self.run.executors[launch.component.executor_label].container
        return pool.submit(kfp_launcher.launch, launch.task, container, launch.component,
                           launch.executor_input, self.run.root,
                           os.path.join(self.run.local_dir, launch.task), self.run.state_dir)

    def _end(self, future: futures.Future) -> None:
        """Publishes and caches a finished task's outputs, or keeps its failure."""
        launch = self.running.pop(future)
        try:
            outputs = future.result()
        except TaskFailed as e:
            self.failure = self.failure or e
            return
        _publish(self.run, launch.task, outputs)
        if launch.fingerprint:
            self.run.cache.record(launch.fingerprint, {
                "run": self.run.result.run_id, "task": launch.task, "outputs": outputs})
        self._resolve(launch.task, TaskState(DONE, seconds=time.monotonic() - launch.started))

    def _resolve(self, task: str, state: TaskState) -> None:
        self.run.result.states[task] = state
        self.echo(state.line(task))


def _drive(run: Run, task_name: str) -> Union[TaskState, _Launch]:
    """The driver's decisions in its order: upstream, condition, cache. Raises TaskFailed.

    Returns:
        The task's state where it is skipped or a cache hit (its outputs
        published), else what the launcher needs to run it.
    """
    task = run.spec.root.dag.tasks[task_name]
    skipped = [up for up in _upstream(task) if run.result.states[up].state == SKIPPED]
    if skipped:
        return TaskState(SKIPPED, why=f"upstream {skipped[0]} skipped")
    component = run.spec.components[task.component_ref.name]
    executor_input = _executor_input(run, task_name, task, component)
    if task.trigger_policy.condition and not _triggered(run, task_name, executor_input):
        return TaskState(SKIPPED, why="trigger condition false")
    fingerprint = _fingerprint(run, task, component, executor_input)
    entry = run.cache.lookup(fingerprint) if fingerprint else None
    if entry:
        _publish(run, task_name, entry["outputs"])
        return TaskState(CACHED)
    return _Launch(task_name, component, executor_input, fingerprint)


def _upstream(task: pb.PipelineTaskSpec) -> List[str]:
    """dependentTasks plus the producers of its inputs (argocompiler addImplicitDependencies)."""
    producers = {spec.task_output_parameter.producer_task
                 for spec in task.inputs.parameters.values()}
    producers |= {spec.task_output_artifact.producer_task
                  for spec in task.inputs.artifacts.values()}
    return sorted((producers - {""}) | set(task.dependent_tasks))


def _executor_input(run: Run, task_name: str, task: pb.PipelineTaskSpec,
                    component: pb.ComponentSpec) -> pb.ExecutorInput:
    arguments = dag_orchestrator.make_task_arguments(task.inputs, run.store)
    executor_input = executor_input_utils.construct_executor_input(
        component_spec=component, arguments=arguments,
        task_root=f"{run.root}/{task_name}", block_input_artifact=False)
    _as_the_backend_passes_them(run, task, component, executor_input)
    return executor_input


def _triggered(run: Run, task_name: str, executor_input: pb.ExecutorInput) -> bool:
    condition = run.spec.root.dag.tasks[task_name].trigger_policy.condition
    try:
        return trigger.evaluate(condition, executor_input)
    except trigger.ConditionError as e:
        # On a cluster the driver's pod fails with this message, and the run with it.
        log = kfp_launcher.write_log(os.path.join(run.local_dir, task_name),
                                     f"driver: trigger condition {condition!r}: {e}\n")
        raise TaskFailed(task_name, log) from None


def _fingerprint(run: Run, task: pb.PipelineTaskSpec, component: pb.ComponentSpec,
                 executor_input: pb.ExecutorInput) -> Optional[str]:
    """The cache key's fingerprint where the run and the task both cache, else None."""
    if run.cache is None or not task.caching_options.enable_cache:
        return None
    container = run.executors[component.executor_label].container
    return kfp_cache.fingerprint(kfp_cache.cache_key(executor_input, component, container))


def _publish(run: Run, task_name: str, outputs: dict) -> None:
    """Hands the task's recorded outputs to the tasks after it, and to the result."""
    for key, artifact in outputs["artifacts"].items():
        run.store.put_task_output(task_name, key, executor_output_utils
                                  .runtime_artifact_to_dsl_artifact(
                                      kfp_outputs.to_runtime_artifact(artifact)))
    for key, value in outputs["parameters"].items():
        run.store.put_task_output(task_name, key, value)
    run.result.outputs[task_name] = outputs


def _as_the_backend_passes_them(run: Run, task: pb.PipelineTaskSpec, component: pb.ComponentSpec,
                                executor_input: pb.ExecutorInput) -> None:
    """Input types: emptied as the backend does, or the producer's declared one.

    Outputs as the driver provisions them: no name yet, the declared metadata.
    """
    for key, spec in task.inputs.artifacts.items():
        producer = spec.task_output_artifact
        for artifact in executor_input.inputs.artifacts[key].artifacts:
            if run.keep_types:
                artifact.type.CopyFrom(_declared_output_type(run.spec, producer))
            else:
                artifact.type.CopyFrom(pb.ArtifactTypeSchema(instance_schema=""))
    # Output artifacts have no name until MLMD records them (driver provisionOutputs).
    for key, artifacts in executor_input.outputs.artifacts.items():
        declared = component.output_definitions.artifacts[key]
        for artifact in artifacts.artifacts:
            artifact.ClearField("name")
            if declared.HasField("metadata"):
                artifact.metadata.CopyFrom(declared.metadata)


def _declared_output_type(spec: pb.PipelineSpec, producer) -> pb.ArtifactTypeSchema:
    component = spec.components[spec.root.dag.tasks[producer.producer_task].component_ref.name]
    return component.output_definitions.artifacts[producer.output_artifact_key].artifact_type


def default_root(spec: pb.PipelineSpec) -> Optional[str]:
    """The spec's defaultPipelineRoot, or None."""
    return spec.default_pipeline_root or None
