"""What each `imagepipe` subcommand does, once pipeline/cli.py has parsed its flags.

Heavy libraries (TensorFlow, TFX, Beam, kfp) load inside the handler that
needs them, so `--help` and bad flags answer at once.
"""
import argparse
import contextlib
import dataclasses
import os
from typing import Iterator, Optional

from components.image_example_gen import spans
from components.common.storage import files
from components.common.storage.access import check_readable, check_writable
from modules.cluster.tf_config import read_cluster
from pipeline import startup
from pipeline.config import PipelineConfig
from pipeline.errors import UsageError

EXIT_ALERTING = 3  # `monitor`'s exit code when the window alerts (pipeline/cli.py maps it)


def _check_output(path: str) -> None:
    """Fail fast, with exit 2, if `--output` cannot be written (a folder or a bucket)."""
    check_writable(path, "--output")


def _check_data(path: str) -> None:
    """A remote --data's bucket and prefix, checked before anything else (exit 2)."""
    if files.is_remote(path):
        check_readable(spans.base_of(path) if spans.is_pattern(path) else path, "--data")


def _check_cluster(config: PipelineConfig) -> None:
    """A TF_CONFIG in the environment is checked now (exit 2), not in the Trainer."""
    cluster = read_cluster()  # raises ClusterConfigError naming what is wrong
    if os.environ.get("TF_CONFIG") and (config.workers > 1 or config.ps):
        raise UsageError("--workers and --ps start local tasks, but TF_CONFIG is set (this "
                         "process is already a cluster's task): give one or the other")
    return cluster


def _output_lock(config: PipelineConfig):
    """The output's run lock, in its local state folder; refuses at once if a run holds it."""
    from pipeline.local.lock import output_lock
    os.makedirs(config.state_path, exist_ok=True)
    label = None if config.state_path == config.output else \
        f"--output {config.output} (state folder {config.state_path})"
    return output_lock(config.state_path, label)


def _check_model_server(binary: Optional[str]) -> None:
    """A local run's --model-server is an executable file here (exit 2 otherwise); a
    compiled pipeline's names a path inside its image, which this machine cannot check."""
    if binary and not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise UsageError(f"--model-server {binary}: not an executable file (the "
                         "tensorflow_model_server binary; leave it out for the stand-in)")


def command_run(config: PipelineConfig, args: argparse.Namespace) -> None:
    _check_cluster(config)
    _check_data(config.data)
    _check_output(config.output)
    _check_model_server(config.model_server)
    if config.mlflow_uri:
        from pipeline.report.tracking import check_server
        check_server(config.mlflow_uri)
    from pipeline.local import state
    with _output_lock(config):
        state.prepare(config.state_path)  # under the lock: no other run is using it
        from pipeline.local import runner as local_runner  # heavy: TensorFlow, TFX, Beam
        local_runner.run(config, startup.command_started())


def command_ingest(config: PipelineConfig, args: argparse.Namespace) -> None:
    _check_data(config.data)
    _check_output(os.path.dirname(config.output) or ".")
    from pipeline.local import ingest_command as ingest_runner  # heavy: TF and Beam load here
    report = ingest_runner.run_ingest(config)
    print(ingest_runner.format_report(report, config.output))


def command_inspect(config: PipelineConfig, args: argparse.Namespace) -> None:
    _check_data(config.data)
    from pipeline.local import inspect as inspector  # heavy: TensorFlow and Beam load only here
    result = inspector.run_inspect(config)
    if args.inspect_json:
        inspector.write_json(result, files.absolute(args.inspect_json))
    print(inspector.format_summary(result))


def command_predict(config: PipelineConfig, args: argparse.Namespace) -> None:
    if args.top_k < 1:
        raise UsageError(f"--top-k must be >= 1, got {args.top_k}")
    if args.predict_data is not None:
        if args.predict_log is not None:
            raise UsageError("--log is for IMAGE... files; with --data, the --output FILE.jsonl "
                             "holds the predictions, and `imagepipe monitor` reads it")
        _predict_batch(config, args)
        return
    if not args.images or args.predict_output is not None:
        raise UsageError("give IMAGE... files, or --data DATA --output FILE")
    from pipeline.prediction.predict import predict_files  # heavy: TensorFlow loads only here
    lines, errors = predict_files(args.model, args.images, args.top_k, args.predict_log)
    print("\n".join(lines))
    if errors:
        raise UsageError(f"{errors} of {len(args.images)} image(s) could not be read or "
                         "decoded (see above)")


def _predict_batch(config: PipelineConfig, args: argparse.Namespace) -> None:
    """`predict --data`: as for IMAGE..., any unreadable image makes the exit code 2."""
    if args.images:
        raise UsageError("--data and IMAGE... are exclusive: give one or the other")
    if args.predict_output is None:
        raise UsageError("--data needs --output FILE (.jsonl or .csv)")
    from pipeline.prediction.batch_io import output_kind, plan_job
    output = files.absolute(args.predict_output)
    output_kind(output)  # the extension, before anything heavy loads
    if not files.is_remote(output):
        _check_output(os.path.dirname(output))
    job = plan_job(args.model, files.absolute(args.predict_data), output, args.top_k,
                   config.image_key)
    from pipeline.prediction.batch import run_batch_predict  # heavy: Beam loads only here
    predicted, failed = run_batch_predict(job, config.beam_pipeline_args)
    print(f"predicted {predicted:,} images, {failed:,} failed -> {output}")
    if failed:
        raise UsageError(f"{failed} of {predicted + failed} image(s) could not be read or "
                         f"decoded (rows with an error in {output})")


def command_plan(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.planning.memory import memory_line
    from pipeline.planning.plan import plan_lines
    from pipeline.planning.resolve import resolve_plan  # TensorFlow: hardware, model size
    _check_data(config.data)
    plan, memory = resolve_plan(config)
    facts = plan.facts
    counts = (f"train {facts.train_examples:,}, eval {facts.eval_examples:,}"
              if facts.train_examples is not None else "split sizes known after ingestion")
    print(f"data      {config.data}: {facts.classes or '?'} classes, {counts}")
    print("\n".join([*plan_lines(plan), memory_line(memory)]))


def command_config(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.config_file import to_yaml
    print(to_yaml(config), end="")


def command_runs(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.report.runs import format_runs, list_runs  # ML Metadata and TFMA
    print(format_runs(list_runs(config)))


def command_versions(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.continuous.version_list import format_versions, list_versions, write_json
    listing = list_versions(config)
    if args.versions_json:
        write_json(listing, files.absolute(args.versions_json))
    print(format_versions(listing))


@contextlib.contextmanager
def _rollback_locks(config: PipelineConfig) -> Iterator[None]:
    """What keeps other writers of the push destination out during a rollback.

    Where the output has a local state folder (a local output; a bucket that
    local runs use), its run lock: a local run's Pusher would write the same
    files. On a bucket, also the lock object in it (pipeline/continuous/
    bucket_lock.py), which other machines' rollbacks see; a compiled pipeline's
    --pipeline-root has only that, and no state folder is made for it here.
    """
    from pipeline.continuous.bucket_lock import bucket_lock
    remote = files.is_remote(config.output)
    with contextlib.ExitStack() as held:
        if not remote or files.isdir(config.state_path):
            held.enter_context(_output_lock(config))
        if remote:
            held.enter_context(bucket_lock(config.output))
        yield


def command_rollback(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.continuous.version_list import require_versions
    require_versions(config)  # before the lock makes a state folder for a mistyped --output
    from pipeline.continuous.rollback import describe, rollback
    with _rollback_locks(config):
        plan = rollback(config, args.to)
    print(describe(plan, config))


def command_report(config: PipelineConfig, args: argparse.Namespace) -> None:
    from pipeline.report.build import build_report  # heavy: TensorFlow, matplotlib
    print(f"report    {build_report(config)}")


def _vertex_job(config: PipelineConfig, args: argparse.Namespace, accelerator):
    """Vertex worker pools for a multi-worker Trainer; None for one worker or kubeflow."""
    if args.target != "vertex" or (config.workers <= 1 and not config.ps):
        return None
    if not (args.vertex_project and args.vertex_region):
        raise UsageError(f"--workers {config.workers} with --target vertex runs the Trainer "
                         "as a Vertex AI custom job: give --vertex-project and --vertex-region")
    from pipeline.kubeflow.compiler import vertex_training_args
    return vertex_training_args(args.vertex_project, args.vertex_region, args.image,
                                config.workers, args.machine_type, accelerator, config.ps)


# For --monitor, the flags that only place or scale the training pipeline's steps.
_TRAINING_ONLY = ("accelerator", "dataflow_project", "dataflow_region",
                  "dataflow_temp_location", "vertex_project", "vertex_region", "trainer_memory")


def _compile_monitor(config: PipelineConfig, args: argparse.Namespace) -> None:
    """`compile --monitor`: the one-step pipeline that runs `imagepipe monitor` on a schedule."""
    given = ["--" + name.replace("_", "-") for name in _TRAINING_ONLY if getattr(args, name)]
    if given:
        raise UsageError(f"{', '.join(given)}: for the training pipeline; --monitor compiles "
                         "the monitoring one, which takes none")
    from pipeline.kubeflow.compiler import summary_line
    from pipeline.kubeflow.monitor_pipeline import compile_monitor_pipeline, pipeline_name
    path = args.output_file or f"{pipeline_name(config)}-{args.target}." + (
        "yaml" if args.target == "kubeflow" else "json")
    compile_monitor_pipeline(config, args.target, args.image, path)
    print(summary_line(path, args.target))


def command_compile(config: PipelineConfig, args: argparse.Namespace) -> None:
    if args.monitor:
        return _compile_monitor(config.replace(output=args.pipeline_root), args)
    from pipeline.kubeflow.accelerators import parse_accelerator
    accelerator = parse_accelerator(args.accelerator)
    config = config.replace(output=args.pipeline_root)
    vertex_job = _vertex_job(config, args, accelerator)  # refused before anything heavy
    from pipeline.kubeflow.trainer_resources import trainer_memory
    memory = trainer_memory(args.trainer_memory, args.target, args.machine_type,
                            vertex_job is not None)
    dataflow = [args.dataflow_project, args.dataflow_region, args.dataflow_temp_location]
    if any(dataflow) and not all(dataflow):
        raise UsageError("--dataflow-project, --dataflow-region and --dataflow-temp-location "
                         "go together")
    from pipeline.kubeflow import compiler as kubeflow_compile  # heavy: TFX and kfp load only here
    if all(dataflow):
        config = config.replace(beam_args=" ".join(
            kubeflow_compile.dataflow_args(*dataflow, image=args.image)))
    path = args.output_file or f"{config.pipeline_name}-{args.target}." + (
        "yaml" if args.target == "kubeflow" else "json")
    kubeflow_compile.compile_pipeline(config, args.target, args.image, path, accelerator,
                                      vertex_job, memory)
    print(kubeflow_compile.summary_line(path, args.target))


def _monitor_options(args: argparse.Namespace):
    """MonitorOptions from `monitor`'s flags; a threshold out of range is a UsageError."""
    from pipeline.monitoring.monitor import MonitorOptions
    from pipeline.monitoring.settings import MonitorSettings
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(MonitorSettings)
             if getattr(args, f.name, None) is not None}
    try:
        settings = MonitorSettings(**given)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return MonitorOptions(data=files.absolute(args.monitor_data),
                          json=_absolute(args.monitor_json), version=args.monitor_version,
                          labels=_absolute(args.monitor_labels), format=args.monitor_format,
                          since=args.monitor_since, report=_absolute(args.monitor_report),
                          settings=settings)


def _absolute(path: Optional[str]) -> Optional[str]:
    return path and files.absolute(path)


def command_monitor(config: PipelineConfig, args: argparse.Namespace) -> int:
    """0 when the window is healthy, EXIT_ALERTING when a measure crossed its threshold."""
    options = _monitor_options(args)
    from pipeline.monitoring.monitor import json_path, run_monitor  # heavy: TF, TFDV
    from pipeline.monitoring.rendering import console_lines
    result = run_monitor(config, options)
    print("\n".join(console_lines(result, json_path(config, options))))
    if args.monitor_pushgateway:  # after monitor.json: a failed push leaves the result
        from pipeline.monitoring.prometheus import push_metrics
        push_metrics(args.monitor_pushgateway, result)
        print(f"pushed    {args.monitor_pushgateway}")
    return 0 if result["healthy"] else EXIT_ALERTING


COMMANDS = {"run": command_run, "ingest": command_ingest, "compile": command_compile,
            "report": command_report, "runs": command_runs, "config": command_config,
            "predict": command_predict, "plan": command_plan, "versions": command_versions,
            "rollback": command_rollback, "inspect": command_inspect,
            "monitor": command_monitor}
