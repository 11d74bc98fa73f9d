"""The subcommands' own sections: what one command alone takes, never part of a run's config.

`imagepipe monitor`'s thresholds and window, `compile`'s target and cluster, `predict`'s
model and images, and the few flags of the listings, rollback and gc; settings/flags.py
COMMANDS says which subcommand takes which. Each is a frozen dataclass of `setting` fields
(core/parameters.py), as the pipeline's sections in settings/sections.py are.
"""
import dataclasses
from typing import Optional, Tuple

from core.durations import DURATION_RULE, is_duration
from core.parameters import check_bounds, setting


def _field(default, help_text: str):
    return setting(default, help_text, low=0, high=1)


@dataclasses.dataclass(frozen=True)
class MonitorSettings:
    """What counts as alerting; every share and distance lies in 0..1."""

    prediction_drift: float = _field(
        0.15, "alert when the predicted class shares move this far from the eval split's "
              "(L-infinity: the largest change of one class's share)")
    confidence_drift: float = _field(
        0.1, "alert when the top probability's distribution moves this far from the eval "
             "split's (Jensen-Shannon divergence, base 2)")
    low_confidence: float = _field(
        0.5, "an answer whose top probability is below this is a low-confidence one")
    low_confidence_rise: float = _field(
        0.1, "alert when the window's share of low-confidence answers is over the eval "
             "split's by more than this")
    accuracy_drop: float = _field(
        0.05, "with --labels: alert when the accuracy on the labelled records is under "
              "the eval accuracy by more than this")
    min_labeled: int = setting(
        20, "with --labels: the fewest matched records the accuracy is measured on", low=1)

    def __post_init__(self):
        check_bounds(self)


def _dataflow(what: str, example: str):
    return setting(None, f"run Beam stages on Dataflow: its {what} (all three --dataflow "
                         f"flags together). Example: {example}")


@dataclasses.dataclass(frozen=True)
class CompileSettings:
    """`imagepipe compile`: the target, the image, where runs write, the cluster's resources."""

    target: Optional[str] = setting(None, "kubeflow (open-source KFP on GKE) or vertex",
                                    choices=("kubeflow", "vertex"), required=True)
    image: Optional[str] = setting(None, "the pipeline image, built from kubeflow/Dockerfile",
                                   required=True)
    pipeline_root: Optional[str] = setting(
        None, "where runs write (gs://...): TFX artifacts under tfx/, pushed models under "
              "serving/ and tflite/", required=True)
    accelerator: Optional[str] = setting(
        None, "the Trainer's accelerator: tpu:TYPE:TOPOLOGY (e.g. tpu:tpu-v5-lite-podslice:2x4) "
              "or gpu:TYPE:COUNT (e.g. gpu:nvidia-tesla-t4:1); default: CPU")
    dataflow_project: Optional[str] = _dataflow("project", "my-project")
    dataflow_region: Optional[str] = _dataflow("region", "us-central1")
    dataflow_temp_location: Optional[str] = _dataflow("temp location", "gs://b/tmp")
    vertex_project: Optional[str] = setting(
        None, "with --target vertex and --workers N > 1: the Trainer runs as a Vertex AI "
              "custom job in this project (pool 0 the chief, pool 1 the other workers). "
              "Example: my-project")
    vertex_region: Optional[str] = setting(None, "that job's region. Example: us-central1")
    machine_type: str = setting("n1-standard-8",
                                "that job's machines (--accelerator adds its GPUs)")
    trainer_memory: Optional[str] = setting(
        None, "memory of each machine that trains: what sizes the decode cache, and the limit "
              "of the Trainer's pod or of each TFJob replica (a Vertex custom job's machines "
              "are --machine-type). Default: the --machine-type's for a Vertex custom job, "
              "else 8G. Example: 32G")
    output_file: Optional[str] = setting(
        None, "default: <pipeline-name>-<target>.yaml (kubeflow) or .json")
    monitor: bool = setting(
        False, "compile the scheduled monitoring pipeline instead: one step running "
               "`imagepipe monitor` on the model served under --pipeline-root "
               "(docs/monitoring.md#scheduled-monitoring)")


@dataclasses.dataclass(frozen=True)
class PredictSettings:
    """`imagepipe predict`: which model, on which images, and where the answers go."""

    # A path, where `run --model` names a network: hence --model-path (--model still works).
    model_path: Optional[str] = setting(
        None, "the model to predict with: a SavedModel version folder, a serving base folder "
              "(latest version), or a .tflite file with labels.txt beside it (image files "
              "only). Example: --model-path outputs/serving/imagepipe", required=True,
        metavar="MODEL", aliases=("--model",))
    top_k: int = setting(3, "classes shown per image", low=1)
    images: Tuple[str, ...] = setting((), "image files", positional=True, metavar="IMAGE")
    data: Optional[str] = setting(
        None, "instead of IMAGE...: a folder of images (walked recursively) or TFRecords of "
              "tf.Example (a file, a folder or a glob). Example: --data photos/")
    output: Optional[str] = setting(
        None, "with --data: the predictions, .jsonl (one JSON object per line) or .csv. "
              "Example: --output predictions.csv", metavar="FILE")
    log: Optional[str] = setting(
        None, "with IMAGE...: also write each request and its answer to FILE, a TF Serving "
              "PredictionLog TFRecord (local or gs://), which `imagepipe monitor` reads. "
              "Example: --log requests.tfrecord", metavar="FILE")


@dataclasses.dataclass(frozen=True)
class WindowSettings:
    """`imagepipe monitor`: the window of production traffic, and where the verdict goes."""

    data: Optional[str] = setting(
        None, "the window: a file, folder or glob, local or gs://. Example: --data "
              "gs://b/requests/", required=True, metavar="WINDOW")
    json: Optional[str] = setting(
        None, "where monitor.json goes (local or gs://); default: "
              "OUTPUT/monitoring/MODEL_NAME/monitor.json", metavar="FILE")
    version: Optional[int] = setting(
        None, "the pushed version to judge (see imagepipe versions); default: the served one")
    labels: Optional[str] = setting(
        None, "true classes of some records, CSV id,label or JSON lines {\"id\",\"label\"}: "
              "adds the accuracy. Example: --labels labels.csv", metavar="FILE")
    format: Optional[str] = setting(
        None, "the window's format (images, prediction_log, kserve, vertex, rest, "
              "imagepipe); default: told from its first files", metavar="NAME")
    since: Optional[str] = setting(
        None, "only files modified within this long. Example: --since 24h",
        metavar="DURATION")
    pushgateway: Optional[str] = setting(
        None, "also push the measures to this Prometheus Pushgateway. Example: "
              "--pushgateway http://pushgateway:9091", metavar="URL")
    report: Optional[str] = setting(
        None, "where monitor.html goes; default: beside monitor.json", metavar="FILE")


@dataclasses.dataclass(frozen=True)
class ListingSettings:
    """`imagepipe versions` and `imagepipe inspect`: a JSON copy of what they print."""

    json: Optional[str] = setting(
        None, "also write the listing as JSON (local or gs://). Example: --json out.json",
        metavar="FILE")


@dataclasses.dataclass(frozen=True)
class RollbackSettings:
    """`imagepipe rollback`: the version to serve."""

    to: Optional[int] = setting(
        None, "the version to serve (see imagepipe versions); default: the served version's "
              "predecessor", metavar="VERSION")


# `imagepipe gc --min-age 0`: no age limit (core/durations.py refuses a zero duration).
NO_MIN_AGE = "0"


@dataclasses.dataclass(frozen=True)
class RetentionSettings:
    """`imagepipe gc`: how much history to keep, what counts as in use, whether to delete."""

    keep_versions: int = setting(
        3, "keep the N newest pushed versions (SavedModel and TFLite), besides the served "
           "and the pinned one, with the model and the run behind each", low=1, metavar="N")
    min_age: str = setting(
        "1d", "keep anything with a file modified within this long: what a running pipeline "
              "may be writing (set it longer than a run); 0: no age limit. Example: "
              "--min-age 12h", metavar="DURATION")
    yes: bool = setting(False, "delete; without it gc only prints what it would delete")
    json: Optional[str] = setting(
        None, "also write what was kept and deleted, with sizes and reasons, as JSON (local "
              "or gs://). Example: --json gc.json", metavar="FILE")

    def __post_init__(self):
        check_bounds(self)
        if self.min_age != NO_MIN_AGE and not is_duration(self.min_age):
            raise ValueError(f"--min-age {DURATION_RULE}, or {NO_MIN_AGE}, got "
                             f"{self.min_age!r}")


@dataclasses.dataclass(frozen=True)
class ShowSettings:
    """`imagepipe config`: what to do with the config."""

    action: str = setting("show", "show: print the effective config", choices=("show",),
                          positional=True)
