"""Scheduled monitoring on a cluster: a one-step KFP pipeline that runs `imagepipe monitor`.

    imagepipe compile --monitor --target kubeflow --image IMAGE --pipeline-root gs://B/R
    (then a recurring run of the package, docs/monitoring.md)

The step runs this module in the pipeline image (kubeflow/Dockerfile):

    python -m kfp_compiler.monitor_pipeline --output gs://B/R --data gs://B/logs ...

which runs `imagepipe monitor` with those flags, less any whose value is empty
(a run parameter left blank), and turns its exit code 3 (alerting) into 0.
Why the step succeeds on alerts: alerting is Prometheus's job (the step
pushes every measure to --pushgateway; kubeflow/alert_rules/alerts.rules.yml
fires on them and Alertmanager routes, groups and silences them), while a
failed KFP run pages nobody and, worse, KFP records no output artifact of a
failed step, so the run's monitor.json and report would vanish from it
exactly when they matter. A failed step then means one thing: monitoring
itself did not happen (bad input, no served model, the Pushgateway down),
which the ImagepipeMonitorStale rule catches as well.
"""
import dataclasses
import json
import os
import subprocess
import sys
from typing import List, Optional

from core.parameters import flag_of
from settings.config import PipelineConfig
from core.errors import UsageError

STEP_COMMAND = ["python", "-m", "kfp_compiler.monitor_pipeline"]
# Run parameters, with their defaults; an empty one drops its flag. `since`
# matches a daily schedule over a log folder that keeps growing; set it to
# the schedule's period, or empty to read all of `data`.
PARAMETER_DEFAULTS = {"since": "24h", "pushgateway": "", "labels": "", "version": "",
                      "format": ""}
# `imagepipe monitor`'s exit code when the window alerts: cli/commands.py's
# EXIT_ALERTING, spelled out because pipeline/kubeflow sits below the commands
# and imports none of them (a test keeps the two equal).
EXIT_ALERTING = 3


def pipeline_name(config: PipelineConfig) -> str:
    """The monitoring pipeline's name: the training pipeline's, `-monitor` added."""
    return f"{config.run.pipeline_name}-monitor"


def compile_monitor_pipeline(config: PipelineConfig, target: str, image: str,
                             output_file: str) -> str:
    """Writes the monitoring pipeline for `target` (kubeflow or vertex); returns its path.

    `config.run.output` is the pipeline root the training pipeline pushes to (its
    serving/ folder is what the step monitors), the default of the `output`
    parameter; the model name, --max-pixels and the input-drift thresholds
    are fixed at compile time (_fixed_flags).
    """
    from kfp_compiler.compiler import KFP_NAME, KFP_NAME_RULE, TARGETS
    if target not in TARGETS:
        raise UsageError(f"--target must be one of {', '.join(TARGETS)}, got {target!r}")
    if not KFP_NAME.match(pipeline_name(config)):
        raise UsageError(f"--pipeline-name {config.run.pipeline_name!r}: {KFP_NAME_RULE}")
    spec = _kfp_compiled(config, image)
    text = json.dumps(vertex_job(spec, config.run.output), indent=2, sort_keys=True) \
        if target == "vertex" else spec
    os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
    with open(output_file, "w") as f:
        f.write(text)
    return output_file


def vertex_job(spec_yaml: str, pipeline_root: str) -> dict:
    """The PipelineJob JSON Vertex AI takes: the PipelineSpec and the run's root."""
    import yaml
    spec = yaml.safe_load(spec_yaml)
    return {"displayName": spec["pipelineInfo"]["name"], "pipelineSpec": spec,
            "runtimeConfig": {"gcsOutputDirectory": pipeline_root}}


def _fixed_flags(config: PipelineConfig) -> List[str]:
    """The flags fixed at compile time: which model, the ingestion's pixel limit, and the
    drift thresholds (every field of the drift section, so a new one travels too), all from
    the flags that compile the training pipeline."""
    drift = [word for field in dataclasses.fields(config.drift)
             for word in (flag_of(config.drift, field.name),
                          str(getattr(config.drift, field.name)))]
    return ["--model-name", config.run.model_name,
            "--max-pixels", str(config.images.max_pixels)] + drift


def _kfp_compiled(config: PipelineConfig, image: str) -> str:
    """The PipelineSpec YAML kfp's compiler writes for the one-step pipeline."""
    import tempfile

    from kfp import compiler, dsl
    fixed = _fixed_flags(config)

    @dsl.container_component
    def monitor(output: str, data: str, since: str, pushgateway: str, labels: str,
                version: str, format: str, monitor_json: dsl.Output[dsl.Artifact],
                report: dsl.Output[dsl.HTML]):
        return dsl.ContainerSpec(image=image, command=STEP_COMMAND, args=[
            "--output", output, "--data", data, "--since", since,
            "--pushgateway", pushgateway, "--labels", labels, "--version", version,
            "--format", format, "--json", monitor_json.path, "--report", report.path,
            *fixed])

    @dsl.pipeline(name=pipeline_name(config), pipeline_root=config.run.output,
                  description="imagepipe monitor on a window of production traffic")
    def monitoring(data: str, output: str = config.run.output,
                   since: str = PARAMETER_DEFAULTS["since"],
                   pushgateway: str = PARAMETER_DEFAULTS["pushgateway"],
                   labels: str = PARAMETER_DEFAULTS["labels"],
                   version: str = PARAMETER_DEFAULTS["version"],
                   format: str = PARAMETER_DEFAULTS["format"]):
        task = monitor(output=output, data=data, since=since, pushgateway=pushgateway,
                       labels=labels, version=version, format=format)
        # KFP keys its cache on the parameters, the same on every scheduled run:
        # a cached step would report the first window for good.
        task.set_caching_options(False)
        task.set_display_name("imagepipe monitor")

    with tempfile.TemporaryDirectory() as staging:
        path = os.path.join(staging, "monitor.yaml")
        compiler.Compiler().compile(monitoring, path)
        with open(path) as f:
            return f.read()


def monitor_argv(step_args: List[str]) -> List[str]:
    """`imagepipe monitor`'s argv from the step's `--flag value` pairs, less empty values."""
    if len(step_args) % 2:
        raise ValueError(f"the monitoring step takes --flag value pairs, got {step_args}")
    pairs = zip(step_args[::2], step_args[1::2])
    return ["monitor"] + [word for flag, value in pairs if value != "" for word in (flag, value)]


def step_exit_code(code: int) -> int:
    """The step's exit code for `imagepipe monitor`'s: alerting (3) is a success here."""
    return 0 if code == EXIT_ALERTING else code


def main(step_args: Optional[List[str]] = None) -> int:
    """The step: `imagepipe monitor` with the run's parameters; 0 on healthy or alerting.

    The command line runs in a process of its own, as the image's `imagepipe`
    would, its output going to the step's log.
    """
    argv = monitor_argv(sys.argv[1:] if step_args is None else step_args)
    code = subprocess.run([sys.executable, "-m", "cli.main", *argv]).returncode
    if code == EXIT_ALERTING:
        print("alerting: the alerts are in the monitor JSON and on the Pushgateway, "
              "for Prometheus to route; the step succeeds", file=sys.stderr)
    return step_exit_code(code)


if __name__ == "__main__":
    sys.exit(main())
