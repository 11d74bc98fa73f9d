"""What each `imagepipe` subcommand does, once cli/main.py has parsed its flags.

Heavy libraries (TensorFlow, TFX, Beam, kfp) load inside the handler that
needs them, so `--help` and bad flags answer at once.
"""
import contextlib
import dataclasses
import os
from typing import Iterator, Optional

from components.image_example_gen import spans
from core.storage import files
from core.storage.access import check_readable, check_writable
from modules.cluster.tf_config import read_cluster
from core import startup
from settings.config import PipelineConfig
from settings.flags import Own
from core.errors import UsageError

EXIT_ALERTING = 3  # `monitor`'s exit code when the window alerts (cli/main.py maps it)


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
    if os.environ.get("TF_CONFIG") and (config.cluster.workers > 1 or config.cluster.ps):
        raise UsageError("--workers and --ps start local tasks, but TF_CONFIG is set (this "
                         "process is already a cluster's task): give one or the other")
    return cluster


def _output_lock(config: PipelineConfig):
    """The output's run lock, in its local state folder; refuses at once if a run holds it."""
    from pipeline.local.lock import output_lock
    os.makedirs(config.state_path, exist_ok=True)
    label = None if config.state_path == config.run.output else \
        f"--output {config.run.output} (state folder {config.state_path})"
    return output_lock(config.state_path, label)


def _check_model_server(binary: Optional[str]) -> None:
    """A local run's --model-server is an executable file here (exit 2 otherwise); a
    compiled pipeline's names a path inside its image, which this machine cannot check."""
    if binary and not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise UsageError(f"--model-server {binary}: not an executable file (the "
                         "tensorflow_model_server binary; leave it out for the stand-in)")


def command_run(config: PipelineConfig, own: Own) -> None:
    _check_cluster(config)
    _check_data(config.ingest.data)
    _check_output(config.run.output)
    _check_model_server(config.serving.model_server)
    if config.tracking.mlflow_uri:
        from report.tracking import check_server
        check_server(config.tracking.mlflow_uri)
    from pipeline.local import state
    with _output_lock(config):
        state.prepare(config.state_path)  # under the lock: no other run is using it
        from pipeline.local import runner as local_runner  # heavy: TensorFlow, TFX, Beam
        local_runner.run(config, startup.command_started())


def command_ingest(config: PipelineConfig, own: Own) -> None:
    _check_data(config.ingest.data)
    _check_output(os.path.dirname(config.run.output) or ".")
    from pipeline.local import ingest_command as ingest_runner  # heavy: TF and Beam load here
    report = ingest_runner.run_ingest(config)
    print(ingest_runner.format_report(report, config.run.output))


def command_inspect(config: PipelineConfig, own: Own) -> None:
    _check_data(config.ingest.data)
    from pipeline.local import inspect as inspector  # heavy: TensorFlow and Beam load only here
    result = inspector.run_inspect(config)
    if own.listing.json:
        inspector.write_json(result, files.absolute(own.listing.json))
    print(inspector.format_summary(result))


def command_predict(config: PipelineConfig, own: Own) -> None:
    if own.predict.data is not None:
        if own.predict.log is not None:
            raise UsageError("--log is for IMAGE... files; with --data, the --output FILE.jsonl "
                             "holds the predictions, and `imagepipe monitor` reads it")
        _predict_batch(config, own)
        return
    if not own.predict.images or own.predict.output is not None:
        raise UsageError("give IMAGE... files, or --data DATA --output FILE")
    from prediction.predict import predict_files  # heavy: TensorFlow loads only here
    lines, errors = predict_files(own.predict.model_path, own.predict.images,
                                  own.predict.top_k, own.predict.log)
    print("\n".join(lines))
    if errors:
        raise UsageError(f"{errors} of {len(own.predict.images)} image(s) could not be read or "
                         "decoded (see above)")


def _predict_batch(config: PipelineConfig, own: Own) -> None:
    """`predict --data`: as for IMAGE..., any unreadable image makes the exit code 2."""
    if own.predict.images:
        raise UsageError("--data and IMAGE... are exclusive: give one or the other")
    if own.predict.output is None:
        raise UsageError("--data needs --output FILE (.jsonl or .csv)")
    from prediction.batch_io import output_kind, plan_job
    output = files.absolute(own.predict.output)
    output_kind(output)  # the extension, before anything heavy loads
    if not files.is_remote(output):
        _check_output(os.path.dirname(output))
    job = plan_job(own.predict.model_path, files.absolute(own.predict.data), output,
                   own.predict.top_k, config.tfrecord.image_key)
    from prediction.batch import run_batch_predict  # heavy: Beam loads only here
    predicted, failed = run_batch_predict(job, config.beam_pipeline_args)
    print(f"predicted {predicted:,} images, {failed:,} failed -> {output}")
    if failed:
        raise UsageError(f"{failed} of {predicted + failed} image(s) could not be read or "
                         f"decoded (rows with an error in {output})")


def command_plan(config: PipelineConfig, own: Own) -> None:
    from pipeline.planning.memory import memory_line
    from pipeline.planning.plan import plan_lines
    from pipeline.planning.resolve import resolve_plan  # TensorFlow: hardware, model size
    _check_data(config.ingest.data)
    plan, memory = resolve_plan(config)
    facts = plan.facts
    counts = (f"train {facts.train_examples:,}, eval {facts.eval_examples:,}"
              if facts.train_examples is not None else "split sizes known after ingestion")
    print(f"data      {config.ingest.data}: {facts.classes or '?'} classes, {counts}")
    print("\n".join([*plan_lines(plan), memory_line(memory)]))


def command_config(config: PipelineConfig, own: Own) -> None:
    from settings.config_file import to_yaml
    print(to_yaml(config), end="")


def command_runs(config: PipelineConfig, own: Own) -> None:
    from report.runs import format_runs, list_runs  # ML Metadata and TFMA
    print(format_runs(list_runs(config)))


def command_versions(config: PipelineConfig, own: Own) -> None:
    from rollback.version_list import format_versions, list_versions, write_json
    listing = list_versions(config)
    if own.listing.json:
        write_json(listing, files.absolute(own.listing.json))
    print(format_versions(listing))


@contextlib.contextmanager
def _rollback_locks(config: PipelineConfig) -> Iterator[None]:
    """What keeps other writers of the push destination out during a rollback.

    Where the output has a local state folder (a local output; a bucket that
    local runs use), its run lock: a local run's Pusher would write the same
    files. On a bucket, also the lock object in it (rollback/
    bucket_lock.py), which other machines' rollbacks see; a compiled pipeline's
    --pipeline-root has only that, and no state folder is made for it here.
    """
    from rollback.bucket_lock import bucket_lock
    remote = files.is_remote(config.run.output)
    with contextlib.ExitStack() as held:
        if not remote or files.isdir(config.state_path):
            held.enter_context(_output_lock(config))
        if remote:
            held.enter_context(bucket_lock(config.run.output))
        yield


def command_rollback(config: PipelineConfig, own: Own) -> None:
    from rollback.version_list import require_versions
    require_versions(config)  # before the lock makes a state folder for a mistyped --output
    from rollback.rollback import describe, rollback
    with _rollback_locks(config):
        plan = rollback(config, own.rollback.to)
    print(describe(plan, config))


def command_gc(config: PipelineConfig, own: Own) -> None:
    """A dry run reads only, so it takes no lock (and works with read-only access); with
    --yes, the locks a rollback takes: no local run and no rollback of this output can
    write while the plan is made and carried out (a compiled run takes neither: --min-age)."""
    from retention.printout import describe
    from retention.sweep import carry_out, check_output, document, plan_gc, write_json
    settings, marked = own.retention, 0
    check_output(config)  # before the lock makes a state folder for a mistyped --output
    if settings.yes:
        with _rollback_locks(config):
            plan = plan_gc(config, settings)
            marked = carry_out(plan, config)
    else:
        plan = plan_gc(config, settings)
    if settings.json:
        write_json(document(plan, config, settings, settings.yes, marked),
                   files.absolute(settings.json))
    print(describe(plan, config.run.output, settings.keep_versions, settings.min_age,
                   settings.yes, marked))


def command_report(config: PipelineConfig, own: Own) -> None:
    from report.build import build_report  # heavy: TensorFlow, matplotlib
    print(f"report    {build_report(config)}")


def _vertex_job(config: PipelineConfig, own: Own, accelerator):
    """Vertex worker pools for a multi-worker Trainer; None for one worker or kubeflow."""
    if own.compile.target != "vertex" or (config.cluster.workers <= 1 and not config.cluster.ps):
        return None
    if not (own.compile.vertex_project and own.compile.vertex_region):
        raise UsageError(f"--workers {config.cluster.workers} with --target vertex runs the "
                         "Trainer as a Vertex AI custom job: give --vertex-project and "
                         "--vertex-region")
    from kfp_compiler.compiler import vertex_training_args
    job = own.compile
    return vertex_training_args(job.vertex_project, job.vertex_region, job.image,
                                config.cluster.workers, job.machine_type, accelerator,
                                config.cluster.ps)


# For --monitor, the flags that only place or scale the training pipeline's steps.
_TRAINING_ONLY = ("accelerator", "dataflow_project", "dataflow_region",
                  "dataflow_temp_location", "vertex_project", "vertex_region", "trainer_memory")


def _compile_monitor(config: PipelineConfig, own: Own) -> None:
    """`compile --monitor`: the one-step pipeline that runs `imagepipe monitor` on a schedule."""
    values = dataclasses.asdict(own.compile)
    given = ["--" + name.replace("_", "-") for name in _TRAINING_ONLY if values[name]]
    if given:
        raise UsageError(f"{', '.join(given)}: for the training pipeline; --monitor compiles "
                         "the monitoring one, which takes none")
    from kfp_compiler.compiler import summary_line
    from kfp_compiler.monitor_pipeline import compile_monitor_pipeline, pipeline_name
    path = own.compile.output_file or f"{pipeline_name(config)}-{own.compile.target}." + (
        "yaml" if own.compile.target == "kubeflow" else "json")
    compile_monitor_pipeline(config, own.compile.target, own.compile.image, path)
    print(summary_line(path, own.compile.target))


def command_compile(config: PipelineConfig, own: Own) -> None:
    job = own.compile
    if job.monitor:
        return _compile_monitor(config.replace(output=job.pipeline_root), own)
    from kfp_compiler.accelerators import parse_accelerator
    accelerator = parse_accelerator(job.accelerator)
    config = config.replace(output=job.pipeline_root)
    vertex_job = _vertex_job(config, own, accelerator)  # refused before anything heavy
    from kfp_compiler.trainer_resources import trainer_memory
    memory = trainer_memory(job.trainer_memory, job.target, job.machine_type,
                            vertex_job is not None)
    dataflow = [job.dataflow_project, job.dataflow_region, job.dataflow_temp_location]
    if any(dataflow) and not all(dataflow):
        raise UsageError("--dataflow-project, --dataflow-region and --dataflow-temp-location "
                         "go together")
    from kfp_compiler import compiler as kubeflow_compile  # heavy: TFX and kfp load only here
    if all(dataflow):
        config = config.replace(beam_args=" ".join(
            kubeflow_compile.dataflow_args(*dataflow, image=job.image)))
    path = job.output_file or f"{config.run.pipeline_name}-{job.target}." + (
        "yaml" if job.target == "kubeflow" else "json")
    kubeflow_compile.compile_pipeline(config, job.target, job.image, path, accelerator,
                                      vertex_job, memory)
    print(kubeflow_compile.summary_line(path, job.target))


def _monitor_options(own: Own):
    """MonitorOptions from `monitor`'s window and thresholds."""
    from monitor.monitor import MonitorOptions
    window = own.window
    return MonitorOptions(data=files.absolute(window.data), json=_absolute(window.json),
                          version=window.version, labels=_absolute(window.labels),
                          format=window.format, since=window.since,
                          report=_absolute(window.report), settings=own.monitor)


def _absolute(path: Optional[str]) -> Optional[str]:
    return path and files.absolute(path)


def command_monitor(config: PipelineConfig, own: Own) -> int:
    """0 when the window is healthy, EXIT_ALERTING when a measure crossed its threshold."""
    options = _monitor_options(own)
    from monitor.monitor import json_path, run_monitor  # heavy: TF, TFDV
    from monitor.rendering import console_lines
    result = run_monitor(config, options)
    print("\n".join(console_lines(result, json_path(config, options))))
    if own.window.pushgateway:  # after monitor.json: a failed push leaves the result
        from monitor.prometheus import push_metrics
        push_metrics(own.window.pushgateway, result)
        print(f"pushed    {own.window.pushgateway}")
    return 0 if result["healthy"] else EXIT_ALERTING


COMMANDS = {"run": command_run, "ingest": command_ingest, "compile": command_compile,
            "report": command_report, "runs": command_runs, "config": command_config,
            "predict": command_predict, "plan": command_plan, "versions": command_versions,
            "rollback": command_rollback, "inspect": command_inspect,
            "monitor": command_monitor, "gc": command_gc}
