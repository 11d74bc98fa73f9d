"""`imagepipe compile`: the same DAG as `imagepipe run`, for Kubeflow Pipelines or Vertex AI.

kubeflow: a bare PipelineSpec YAML at schema 2.1.0 (all the open-source KFP
  API server accepts), with no resolver executors (it cannot run them), and
  GKE node selectors in a second YAML document, KFP's Kubernetes platform spec.
vertex: a PipelineJob JSON (same schema).
On both, the baseline and the warm-start base come from the push destination
(components/pushed_baseline, components/pushed_warm_start), so a rollback's pin
is honoured, and the steps after ImageExampleGen run only on new inputs.

Nothing is uploaded and no cloud storage is read: user code is in the image
and referenced by dotted paths, and the image shape comes from local data or
--image-size/--channels.
"""
import hashlib
import json
import os
import re
import tempfile
from typing import List, Optional

import yaml

from kfp_compiler.accelerators import Accelerator
from core.contract import (EXAMPLE_GEN_ID, PUSHED_WARM_START_ID, TRAINER_ID,
                           TUNER_ID)
from components.image_example_gen import spans
from components.image_example_gen.novelty import PIPELINE_DIGEST_KEY
from core.storage import files
from settings.config import PipelineConfig
from core.errors import UsageError
from pipeline.planning import rules

TARGETS = ("kubeflow", "vertex")
# The image's WORKDIR (kubeflow/Dockerfile), where setup.py is copied; see
# core/beam_deps.py for why Beam is told about it.
CONTAINER_SETUP_FILE = "/imagepipe/setup.py"
# TFX's container entrypoint, and ours, which restores the input artifact types
# open-source KFP empties before handing over to it (see kfp_compiler/entrypoint.py).
TFX_ENTRYPOINT = ["python", "-m",
                  "tfx.orchestration.kubeflow.v2.container.kubeflow_v2_run_executor"]
# KFP's stricter rule for pipeline names
# (kfp.compiler's _validate_pipeline_name).
KFP_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")
KFP_NAME_RULE = "KFP needs lowercase letters, digits and dashes, starting with a letter or digit"
KUBEFLOW_ENTRYPOINT = ["python", "-m", "kfp_compiler.entrypoint"]


def dataflow_args(project: str, region: str, temp_location: str, image: str) -> List[str]:
    """Beam options that move ingestion, statistics, Transform and evaluation to Dataflow.

    The workers run the pipeline image too (`sdk_container_image`): the DoFns
    import imagepipe's code.
    """
    return ["--runner=DataflowRunner", f"--project={project}", f"--region={region}",
            f"--temp_location={temp_location}", f"--sdk_container_image={image}",
            "--experiments=use_runner_v2"]


def _plan(config: PipelineConfig, accelerator: Optional[Accelerator], memory: int):
    """The training plan for the Trainer's own hardware and `memory` (bytes), from
    local data or the shape flags. This machine's memory plays no part: the
    Trainer's node is not this machine.
    """
    from pipeline.planning.model_source import read_source
    from pipeline.planning.data_facts import DataFacts
    from pipeline.planning.plan import make_plan
    source = read_source(config)  # the module file's text travels in the spec
    if source.weights_sha256:  # a file on this machine, which no cluster pod can read
        raise UsageError(f"--weights {config.model.weights}: a local file, which the cluster's "
                         "Trainer cannot read; copy it to gs:// and pass that path")
    hardware = accelerator.kind if accelerator else "cpu"
    local = os.path.exists(config.ingest.data) or spans.is_pattern(config.ingest.data)
    if files.is_remote(config.ingest.data) or not local:
        if not (config.model.image_size and config.model.channels):
            raise UsageError(f"--data {config.ingest.data} is not on this machine, so its image "
                             "size cannot be read at compile time (compiling reads no cloud "
                             "storage): give --image-size and --channels")
        side = config.model.image_size
        facts = DataFacts(None, None, None, side, side, side, config.model.channels)
        return make_plan(config, facts, hardware, memory, source, runs_here=False)
    from pipeline.planning.resolve import read_data_facts
    return make_plan(config, read_data_facts(config), hardware, memory, source,
                     runs_here=False)


def _resources(accelerator: Optional[Accelerator], target: str, memory: int):
    """The Trainer container's resource request (KFP PipelineSpec ResourceSpec)."""
    from kfp.pipeline_spec import pipeline_spec_pb2
    resource_spec = pipeline_spec_pb2.PipelineDeploymentConfig.PipelineContainerSpec.ResourceSpec
    spec = resource_spec(memory_limit=round(memory / 1e9, 2))  # KFP's unit: GB
    if accelerator:
        # Open-source KFP copies the type verbatim into the pod's resources.limits;
        # Vertex expects its own accelerator names.
        kind = accelerator.resource if target == "kubeflow" else accelerator.vertex_type()
        spec.accelerator.CopyFrom(resource_spec.AcceleratorConfig(type=kind,
                                                                  count=accelerator.count))
    return spec


def _platform_spec(executor_labels: List[str], accelerator: Accelerator) -> dict:
    """KFP's Kubernetes platform spec (the YAML's second document): node selectors."""
    return {"platforms": {"kubernetes": {"deploymentSpec": {"executors": {
        label: {"nodeSelector": {"labels": accelerator.node_selector()}}
        for label in executor_labels}}}}}


def compile_pipeline(config: PipelineConfig, target: str, image: str, output_file: str,
                     accelerator: Optional[Accelerator] = None,
                     vertex_job: Optional[dict] = None,
                     trainer_memory: int = rules.COMPILED_TRAINER_MEMORY) -> str:
    """Writes the compiled pipeline to `output_file`; returns its path.

    `vertex_job` (from `vertex_training_args`): the Trainer runs as a Vertex AI
    custom job with those worker pools instead of in its pipeline step. On
    kubeflow, several --workers (or --ps) make the Trainer step submit a
    TFJob (kfp_compiler/tfjob.py), whose replicas get the accelerator and
    `trainer_memory`; otherwise the step itself does.
    """
    if target not in TARGETS:
        raise UsageError(f"--target must be one of {', '.join(TARGETS)}, got {target!r}")
    if not KFP_NAME.match(config.run.pipeline_name):
        raise UsageError(f"--pipeline-name {config.run.pipeline_name!r}: {KFP_NAME_RULE}")
    if accelerator and accelerator.kind == "tpu":
        if config.cluster.workers > 1 or config.cluster.ps:
            raise UsageError("--accelerator tpu:... trains on one TPU slice (TPUStrategy); "
                             "--workers and --ps are for GPU or CPU machines")
        if target == "vertex":
            raise UsageError("--accelerator tpu:... is for --target kubeflow (GKE TPU node "
                             "pools); Vertex pipeline steps take GPUs here")
        config = config.replace(tpu="local")  # the TPU VM the Trainer's pod lands on
    plan = _plan(config, accelerator, trainer_memory)
    from pipeline.dag import create_pipeline  # heavy: TFX, after the checks above
    pipeline = create_pipeline(plan, config.beam_pipeline_args,
                               baseline_kind="pushed",
                               setup_file=CONTAINER_SETUP_FILE)
    trainer = next(c for c in pipeline.components if c.id == TRAINER_ID)
    tfjob = _place_trainer(trainer, config, target, image, accelerator, trainer_memory,
                           vertex_job)
    # The Tuner trains too, in its own step (trial by trial, one process): the
    # Trainer's machine, never its TFJob or custom job.
    tuner = next((c for c in pipeline.components if c.id == TUNER_ID), None)
    if tuner is not None:
        tuner.with_platform_config(_resources(accelerator, target, trainer_memory))
    text = _never_cached(_tfx_compiled(pipeline, target, image), target)
    if target == "kubeflow":
        # Node selectors for the steps that train here: not a TFJob's submitting step.
        placed = ([TUNER_ID] if tuner is not None else []) + ([] if tfjob else [TRAINER_ID])
        text = _finish_kubeflow(text, accelerator, config.pipeline_root, placed)
    text = with_pipeline_digest(text, target)
    os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
    with open(output_file, "w") as f:
        f.write(text)
    return output_file


def vertex_training_args(project: str, region: str, image: str, workers: int,
                         machine_type: str, accelerator: Optional[Accelerator],
                         ps: int = 0) -> dict:
    """A Vertex AI custom job for the Trainer: pool 0 the chief, pool 1 the other workers.

    Vertex sets each replica's TF_CONFIG (pool 0 as `chief`, pool 1 as
    `worker`, pool 2 as `ps`), and TFX's google_cloud_ai_platform extension
    runs its plain GenericExecutor, so our run_fn, on every one of them.
    With parameter servers the chief only coordinates, so pool 1 holds all
    `workers`, and pool 2 the parameter servers, on machines without
    accelerators (they hold variables and apply updates).
    """
    machine = {"machine_type": machine_type}
    if accelerator:
        machine.update(accelerator_type=accelerator.vertex_type(),
                       accelerator_count=accelerator.count)

    def pool(count: int, spec: dict) -> dict:
        return {"machine_spec": spec, "replica_count": count,
                "container_spec": {"image_uri": image}}

    if ps:
        pools = [pool(1, machine), pool(workers, machine),
                 pool(ps, {"machine_type": machine_type})]
    else:
        pools = [pool(1, machine)] + ([pool(workers - 1, machine)] if workers > 1 else [])
    return {"project": project, "region": region,
            "job_spec": {"worker_pool_specs": pools}}


def _as_vertex_custom_job(trainer, job: dict) -> None:
    """The Trainer node runs TFX's Vertex Training executor with `job`'s worker pools."""
    from tfx.dsl.components.base import executor_spec
    from tfx.extensions.google_cloud_ai_platform import constants
    from tfx.extensions.google_cloud_ai_platform.trainer import executor as vertex
    trainer.executor_spec = executor_spec.ExecutorClassSpec(vertex.GenericExecutor)
    custom = json.loads(trainer.exec_properties["custom_config"])
    custom.update({vertex.TRAINING_ARGS_KEY: {"project": job["project"],
                                              "job_spec": job["job_spec"]},
                   constants.ENABLE_VERTEX_KEY: True,
                   constants.VERTEX_REGION_KEY: job["region"]})
    trainer.exec_properties["custom_config"] = json.dumps(custom, sort_keys=True)


def _place_trainer(trainer, config: PipelineConfig, target: str, image: str,
                   accelerator: Optional[Accelerator], memory: int,
                   vertex_job: Optional[dict]) -> bool:
    """The Trainer's resources, or where it runs instead; True when it submits a TFJob."""
    tfjob = target == "kubeflow" and (config.cluster.workers > 1 or config.cluster.ps > 0)
    if tfjob:
        _as_tfjob(trainer, config, image, accelerator, memory)
    elif vertex_job is not None:  # the step only submits: the job's pools train
        _as_vertex_custom_job(trainer, vertex_job)
    else:
        trainer.with_platform_config(_resources(accelerator, target, memory))
    return tfjob


def _as_tfjob(trainer, config: PipelineConfig, image: str,
              accelerator: Optional[Accelerator], memory: int) -> None:
    """The Trainer step submits a TFJob whose replicas train (kfp_compiler/tfjob.py)."""
    from tfx.dsl.components.base import executor_spec
    from kfp_compiler import tfjob
    from kfp_compiler.trainer_resources import kubernetes_quantity
    trainer.executor_spec = executor_spec.ExecutorClassSpec(tfjob.Executor)
    limits = {"memory": kubernetes_quantity(memory)}
    if accelerator and accelerator.kind == "gpu":
        limits[accelerator.resource] = str(accelerator.count)
    selector = accelerator.node_selector() if accelerator else None
    custom = json.loads(trainer.exec_properties["custom_config"])
    cluster = config.cluster
    custom[tfjob.TFJOB_KEY] = tfjob.job_settings(config.run.pipeline_name, image, cluster.workers,
                                                 cluster.ps, limits, selector)
    trainer.exec_properties["custom_config"] = json.dumps(custom, sort_keys=True)


def _tfx_compiled(pipeline, target: str, image: str) -> str:
    """The spec TFX's Kubeflow V2 runner writes (YAML for kubeflow, a PipelineJob for vertex)."""
    from tfx import v1 as tfx
    suffix = ".yaml" if target == "kubeflow" else ".json"
    with tempfile.TemporaryDirectory() as staging:
        runner = tfx.orchestration.experimental.KubeflowV2DagRunner(
            config=tfx.orchestration.experimental.KubeflowV2DagRunnerConfig(
                default_image=image, use_pipeline_spec_2_1=True),
            output_dir=staging, output_filename="pipeline" + suffix)
        runner.run(pipeline, write_out=True)
        with open(os.path.join(staging, "pipeline" + suffix)) as f:
            return f.read()


def _documents(text: str, target: str):
    """(every document, the PipelineSpec dict among them) of a compiled package."""
    documents = list(yaml.safe_load_all(text)) if target == "kubeflow" else [json.loads(text)]
    first = documents[0]
    return documents, (first if target == "kubeflow" else first["pipelineSpec"])


def _dumped(documents: list, target: str) -> str:
    if target == "kubeflow":
        return yaml.safe_dump_all(documents, sort_keys=False)
    return json.dumps(documents[0], indent=2, sort_keys=True)


def _never_cached(text: str, target: str) -> str:
    """ImageExampleGen and the warm-start step without KFP's cache: they always run.

    KFP keys its cache on a step's inputs and parameters, and `--data` is the
    same string whether or not data arrived, so a cached step would never see
    a new span or a changed file. Run, it lists the data, ingests only what its
    span store lacks, and says whether its inputs are new; the later steps'
    trigger conditions read that (pipeline/dag.py). The warm-start step reads the
    push destination and has no input that changes when a version is pushed, so a
    cached answer would be the first run's for good.
    """
    documents, spec = _documents(text, target)
    for step in (EXAMPLE_GEN_ID, PUSHED_WARM_START_ID):
        task = spec["root"]["dag"]["tasks"].get(step)
        if task is not None:
            task.setdefault("cachingOptions", {})["enableCache"] = False
    return _dumped(documents, target)


def _digest_parameter(spec: dict) -> dict:
    parameters = spec["root"]["dag"]["tasks"][EXAMPLE_GEN_ID]["inputs"]["parameters"]
    return parameters[PIPELINE_DIGEST_KEY]["runtimeValue"]


def with_pipeline_digest(text: str, target: str) -> str:
    """The package with ImageExampleGen's `pipeline_digest` set to a digest of the package.

    Everything a run's model depends on is in the package: the module file's
    text, every flag, the image. ImageExampleGen adds the digest to its inputs'
    (components/image_example_gen/novelty.py), so a scheduled run of a
    recompiled package with any change is new, and one of the same package
    on the same data is not. The digest is taken with the parameter empty.
    """
    documents, spec = _documents(text, target)
    _digest_parameter(spec)["constant"] = ""
    digest = hashlib.sha256(_dumped(documents, target).encode()).hexdigest()
    _digest_parameter(spec)["constant"] = digest
    return _dumped(documents, target)


def _finish_kubeflow(text: str, accelerator: Optional[Accelerator], pipeline_root: str,
                     placed: List[str]) -> str:
    """Checks the spec has no resolver; points its containers at our entrypoint; sets
    defaultPipelineRoot; appends the platform spec for node selectors.

    TFX writes the root only into a PipelineJob (Vertex). Without it in the
    PipelineSpec, open-source KFP puts the artifacts of a run submitted
    without a root under the cluster's default root, not --pipeline-root.
    """
    spec = yaml.safe_load(text)
    executors = spec["deploymentSpec"]["executors"]
    resolvers = [label for label, executor in executors.items() if "resolver" in executor]
    if resolvers:  # a bug here, not a user error: open-source KFP would fail at run time
        raise RuntimeError(f"resolver executors in the kubeflow target: {resolvers}")
    for executor in executors.values():
        if executor["container"]["command"] == TFX_ENTRYPOINT:
            executor["container"]["command"] = KUBEFLOW_ENTRYPOINT
    spec["defaultPipelineRoot"] = pipeline_root
    text = yaml.safe_dump(spec, sort_keys=False)
    if not accelerator or not placed:
        return text
    tasks = spec["root"]["dag"]["tasks"]
    labels = [spec["components"][tasks[node]["componentRef"]["name"]]["executorLabel"]
              for node in placed]
    return text.rstrip("\n") + "\n---\n" + yaml.safe_dump(
        _platform_spec(labels, accelerator), sort_keys=False)


def summary_line(path: str, target: str) -> str:
    """What `imagepipe compile` prints."""
    with open(path) as f:
        first = (next(yaml.safe_load_all(f)) if target == "kubeflow" else json.load(f))
    spec = first if target == "kubeflow" else first["pipelineSpec"]
    tasks = spec["root"]["dag"]["tasks"]
    return (f"compiled {spec['pipelineInfo']['name']} for {target}: {len(tasks)} "
            f"step{'' if len(tasks) == 1 else 's'}, "
            f"schema {spec['schemaVersion']} -> {path}")
