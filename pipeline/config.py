"""The one typed configuration of an imagepipe run, with every default.

CLI flags are generated from the fields below (see `pipeline.cli`), so a
default or a help text is written exactly once, here.
"""
import dataclasses
import hashlib
import math
import os
import re
import shlex
from pathlib import Path
from typing import List, Optional, Type, TypeVar

from components.common.durations import DURATION_RULE, is_duration
from components.common.contract import EXAMPLE_GEN_ID, IMAGE_KEY, LABEL_KEY, SPAN_STORE_DIR
from components.common.storage.files import is_remote
from components.image_example_gen.options import FORMATS, IngestOptions, option_problems
from components.image_example_gen.spans import is_pattern
from components.drift_validator.settings import DriftSettings
from components.image_pusher.settings import PushSettings
from components.model_card.settings import CardSettings
from components.serving_validator.settings import ServingCheckSettings
from components.tflite_converter.settings import QUANTIZATIONS, TFLiteSettings
from components.image_evaluator.settings import AuditSettings
from modules import network_registry
from modules.network_registry import MODELS, MODULE
from modules.params import WARP_ZOOM

REPO_ROOT = Path(__file__).resolve().parent.parent
# Over this, an image is refused before decoding (decompression bombs); also
# the limit of `imagepipe predict`, which checks images as ingestion does.
DEFAULT_MAX_PIXELS = 100_000_000
DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "png")
# In-process Beam: for datasets that fit one machine, Beam's worker processes
# (each re-importing TensorFlow) cost more than they save; ingestion encodes
# on every core anyway (bench/ingestion/ingest_speed; measured: docs/performance.md).
LOCAL_BEAM_ARGS = "--direct_running_mode=in_memory --direct_num_workers=1"
NO_BUDGET = "none"  # --time-budget none: no budget, not even the planned one


T = TypeVar("T")


class ConfigError(ValueError):
    """A config value out of range; the message names the flag."""


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
_NAME_RULE = "must be letters, digits, '-' and '_' (no '/', '.' or spaces)"


def _field(default, help_text: str, **kwargs):
    return dataclasses.field(default=default, metadata={"help": help_text, **kwargs})


def _drift(default: float, measure: str):
    """A drift threshold of the DistributionValidator: beyond it, the Evaluator does not
    bless (--allow-drift)."""
    return _field(default, f"Drift threshold on {measure}; beyond it the model is not "
                           "blessed or pushed.")


def _gate(measure: str, example: str, below: bool = False):
    """An optional blessing gate of the audit: a model past it is not blessed."""
    rule = "below" if below else "above"
    return _field(None, f"Do not bless a model with {measure} {rule} this; unset, the "
                        f"figure is only reported. Example: {example}")


@dataclasses.dataclass
class PipelineConfig:
    """Everything a run needs; paths derived from `output` are properties."""

    data: str = _field(DEFAULT_DATA, "Dataset: a class-per-folder image tree (optionally "
                       "under train/ and eval/ folders), a folder of MNIST-style IDX files, "
                       "an .npz, or TFRecords of tf.Example; or a pattern with {SPAN} (and "
                       "optionally {VERSION}) naming one such dataset per span, for "
                       "continuous training. Example: --data ~/datasets/flowers, --data "
                       "'gs://b/photos/span-{SPAN}'")
    format: str = _field("auto", "Dataset format; auto detects it from file names.",
                         choices=FORMATS)
    strict: bool = _field(False, "Fail if any image cannot be decoded, instead of "
                          "skipping and reporting it.")
    max_pixels: int = _field(DEFAULT_MAX_PIXELS, "Refuse images with more pixels than this "
                             "(decompression bombs). Example: --max-pixels 25000000")
    image_key: str = _field(IMAGE_KEY, "TFRecord input: feature with the encoded "
                            "image bytes. Example: --image-key image_raw")
    label_key: str = _field(LABEL_KEY, "TFRecord input: int64 feature with the "
                            "0-based label. Example: --label-key label")
    output: str = _field("outputs", "Folder or bucket (gs://...) for everything a run "
                         "writes: TFX artifacts, pushed models, summary.json, the report; ML "
                         "Metadata too when it is local (else see --state-dir). Example: "
                         "--output /tmp/run1")
    state_dir: Optional[str] = _field(None, "Local folder for what must stay on this "
                                      "machine: ML Metadata (SQLite), the run lock and the "
                                      "Trainer's decode cache; never a gs:// URI. Default: "
                                      "--output when it is local; for a gs:// --output, "
                                      "~/.cache/imagepipe/<pipeline-name>-<hash of --output>. "
                                      "Example: --state-dir /var/tmp/imagepipe-flowers")
    pipeline_name: str = _field("imagepipe", "TFX pipeline name; runs with the same name and "
                                "output share the cache and the baseline model.")
    model_name: str = _field("imagepipe", "Name of the pushed model: "
                             "<output>/serving/<model-name>/<version>/.")
    image_size: Optional[int] = _field(None, "Side in pixels the images are resized to. "
                                       "Default: planned from the data, the model and the "
                                       "hardware (see `imagepipe plan`). Example: --image-size 64")
    channels: Optional[int] = _field(None, "1 (grayscale) or 3 (RGB); default: what most "
                                     "images have.", choices=(1, 3))
    eval_percent: int = _field(20, "Share of images, in percent, hashed into the eval split.")
    train_spans: int = _field(0, "With a {SPAN} pattern: train on the latest N spans (0: "
                              "all); evaluation uses the newest span's eval split. "
                              "Example: --train-spans 3")
    span: Optional[int] = _field(None, "With a {SPAN} pattern: the span this run expects. "
                                 "The window ends at it (later spans wait for a later run), "
                                 "and the run fails if it is missing or not ready. Default: "
                                 "the newest ready span. Example: --span 47")
    span_quiet: int = _field(600, "With a {SPAN} pattern: a span folder without a _SUCCESS "
                             "file is ready once none of its files changed for this many "
                             "seconds; until then runs leave it out. 0: ready at once. "
                             "Example: --span-quiet 3600")
    warm_start: str = _field("on", "Start training from the last blessed model's weights "
                             "when its classes and input shape allow, with fewer epochs "
                             "(the plan says how many, and why).", choices=("on", "off"))
    mlflow_uri: Optional[str] = _field(None, "Also log each run to this MLflow tracking "
                                       "server: settings, metrics, spans, verdicts and the "
                                       "pushed version (needs the mlflow extra). Example: "
                                       "--mlflow-uri http://127.0.0.1:5000")
    allow_drift: bool = _field(False, "Push even when the newest span drifted from the one "
                               "before it (see the --drift-* thresholds).")
    # The newest span against the one before, judged by TFDV's comparators
    # (components/drift_validator/; defaults measured on photos: docs/continuous.md).
    drift_label: float = _drift(0.15, "class shares: the largest change of one (L-infinity)")
    drift_brightness: float = _drift(0.1, "brightness: Jensen-Shannon divergence, base 2")
    drift_size: float = _drift(0.3, "image heights and widths: Jensen-Shannon divergence of "
                                    "their quantiles, base 2")
    drift_grayscale: float = _drift(0.2, "the share of grayscale images: its change")
    # Trust (docs/trust.md): data health at ingestion, the audit at evaluation.
    dedupe: bool = _field(False, "Drop copies before training: of each group of exact or near "
                          "duplicates the first path is kept, and a group whose copies carry "
                          "different labels is dropped whole. --strict refuses data with "
                          "copies instead.")
    groups: Optional[str] = _field(None, "A CSV file of path,group rows (paths relative to "
                                   "--data): each image's group is carried from ingestion, "
                                   "and accuracy is reported per group. Example: --groups "
                                   "groups.csv")
    max_leakage_gain: Optional[float] = _gate("accuracy minus accuracy without the eval images "
                                              "that have a copy in train",
                                              "--max-leakage-gain 0.01")
    min_robust_accuracy: Optional[float] = _gate(
        "the mean accuracy under common corruptions", "--min-robust-accuracy 0.5",
        below=True)
    max_slice_gap: Optional[float] = _gate("overall accuracy minus the worst slice's",
                                           "--max-slice-gap 0.1")
    model: Optional[str] = _field(None, f"Model: {network_registry.describe()}. Default: "
                                  "planned from the data (never a backbone).",
                                  choices=tuple(m for m in MODELS if m != MODULE))
    model_width: Optional[float] = _field(None, "Width of the built-in networks (cnn, resnet, "
                                          "photo): every layer's filters times this. "
                                          "Default: planned: 0.5 for the cnn on a small "
                                          "set, else 1. Example: --model-width 0.5")
    weights: Optional[str] = _field(None, "Backbones: imagenet (Keras downloads them once, "
                                    "into ~/.keras/models), a Keras weights file of the "
                                    "backbone without its top (.h5, or a checkpoint prefix; "
                                    "gs:// too), or none (random init, one phase). "
                                    "Default: imagenet. Example: --weights mnv2_notop.h5")
    module_file: Optional[str] = _field(None, "Your own network: a Python file defining "
                                        "build_model(input_shape, num_classes, params) and "
                                        "optionally augment(images, params) (docs/models.md). "
                                        "Example: --module-file "
                                        "modules/examples/tiny_convnet.py")
    batch_size: Optional[int] = _field(None, "Training batch per replica; the global batch is "
                                       "this times the replicas (GPUs or TPU cores). On TPU, "
                                       "a multiple of 8. Default: planned (64).")
    epochs: Optional[int] = _field(None, "Passes over the train split. Default: planned from "
                                   "its size (--early-stopping-patience may end sooner).")
    train_steps: Optional[int] = _field(None, "Exact number of training steps; overrides "
                                        "--epochs. Default: none (train in epochs).")
    time_budget: Optional[str] = _field(None, "Wall-time budget of the whole run: training "
                                        "stops after the epochs that fit in what the other "
                                        "stages leave (the plan says how much, and why); "
                                        "'none' trains every planned epoch. Default: "
                                        "planned: 9m for a run on this machine's CPU, none "
                                        "on a GPU or TPU. Example: --time-budget 10m, 1h30m")
    eval_steps: Optional[int] = _field(None, "Validation batches after each epoch. Default: "
                                       "the whole eval split (the Evaluator always scores "
                                       "all of it).")
    tune: bool = _field(False, "Search before training: a Tuner step tries models of other "
                        "widths, depths, dropout, image sizes, learning rates and augmentation "
                        "strengths (backbones: both phases' learning rates and how much to "
                        "unfreeze; a module file: its own tuner_fn if it has one) on a sample "
                        "of the train split, and the Trainer keeps the plan's own settings "
                        "(trial 0) unless a trial is right on significantly more of the same "
                        "held-out images (McNemar's exact test, Holm-corrected; "
                        "docs/tuning.md).")
    tune_trials: int = _field(10, "With --tune: at most this many trials, the plan's own "
                              "settings (trial 0) among them.")
    tune_minutes: float = _field(30.0, "With --tune: start no trial after this many minutes, "
                                 "and stop the one running then.")
    optimizer: str = _field("adam", "Optimizer: adam, or sgd as in the TPU example (use "
                            "--learning-rate 0.05 with it).", choices=("adam", "sgd"))
    learning_rate: Optional[float] = _field(None, "Peak learning rate (after warmup, then "
                                            "cosine decay). Default: planned per model.")
    early_stopping_patience: Optional[int] = _field(
        None, "Stop when the eval split's loss has not improved for this many epochs, and "
        "keep the best epoch's weights (the eval accuracy is then of an epoch chosen on the "
        "eval images); 0 turns it off. Default: planned (off).")
    label_smoothing: Optional[float] = _field(None, "Label smoothing of the training loss, "
                                              "in [0, 1). Default: planned per model.")
    augment_crop: Optional[int] = _field(None, "Training augmentation: pad images by this many "
                                         "pixels and crop back at a random offset (with "
                                         "--augment-rotate, the warp's largest shift instead); "
                                         "0 turns it off. Default: planned (2 for the cnn).")
    augment_scale: Optional[float] = _field(None, "Training augmentation: random resized crop "
                                            "keeping at least this share of the image area; 0 "
                                            "turns it off. Default: planned (photos).")
    augment_flip: Optional[bool] = _field(None, "Training augmentation: random horizontal "
                                          "flips (--no-augment-flip for digits and text). "
                                          "Default: planned (photos).")
    test_flip: Optional[bool] = _field(None, "The served model (every signature, TFLite too) "
                                       "averages each image's scores with those of its "
                                       "mirror image, for twice the compute an image; the "
                                       "eval accuracy is that model's (--no-test-flip for "
                                       "digits and text). Default: planned (photos).")
    augment_color: Optional[float] = _field(None, "Training augmentation: random brightness "
                                            "and contrast change of up to this fraction; 0 "
                                            "turns it off. Default: planned (photos). "
                                            "Example: --augment-color 0.2")
    augment_rotate: Optional[float] = _field(
        None, "Training augmentation: a random warp that rotates by up to this many degrees, "
        f"zooms by up to {WARP_ZOOM:.0%} and shifts by up to --augment-crop pixels; 0 turns "
        "it off. Default: planned (15 for the cnn on a small set).")
    steps_per_execution: int = _field(1, "Training steps per call into the compiled "
                                      "function; higher amortizes TPU round trips. "
                                      "Example: --steps-per-execution 50")
    tensorboard_update_freq: int = _field(100, "Write TensorBoard scalars and the custom "
                                          "summaries every this many steps.")
    workers: int = _field(1, "Train on this many worker processes on this machine, with "
                          "MultiWorkerMirroredStrategy over loopback ports (a TF_CONFIG "
                          "each), as a cluster's workers would: for proving and debugging "
                          "multi-worker training, not for speed. Example: --workers 2")
    ps: int = _field(0, "With --workers: also start this many parameter servers, and "
                     "train under ParameterServerStrategy, the chief coordinating "
                     "asynchronous workers. Example: --workers 2 --ps 1")
    tpu: Optional[str] = _field(None, "Train on a TPU: its address (grpc://10.0.0.2:8470 or a "
                                "name) or 'local' on a TPU VM. Default: GPUs if any, else CPU.")
    full_precision: bool = _field(False, "Train in float32 on GPU/TPU too (default: "
                                  "mixed_float16 on GPU, mixed_bfloat16 on TPU).")
    seed: int = _field(0, "Random seed for weights, shuffling, dropout and augmentation.")
    accuracy_threshold: Optional[float] = _field(
        None, "Bless the model only if its eval accuracy is at least this. Default: "
        "planned per model. Example: --accuracy-threshold 0.95")
    baseline_tolerance: float = _field(0.01, "Bless only if accuracy >= the last blessed "
                                       "model's minus this (absolute).")
    quantize: str = _field("int8", "TFLite conversion of the blessed model: none, dynamic "
                           "(dynamic-range int8 weights), float16, or int8 (full integer, "
                           "calibrated on the train split).",
                           choices=QUANTIZATIONS)
    tflite_tolerance: float = _field(0.01, "Push the TFLite file only if its eval accuracy is "
                                     "at most this much below the SavedModel's (absolute).")
    model_server: Optional[str] = _field(
        None, "A tensorflow_model_server binary for the serving check: it loads the model "
        "with its warmup records and answers the check's REST requests. Compiled "
        "pipelines take the path inside the image. Default: a TensorFlow-only process "
        "stands in. Example: --model-server /usr/bin/tensorflow_model_server")
    beam_args: str = _field(LOCAL_BEAM_ARGS, "Apache Beam pipeline options for ingestion, "
                            "statistics, Transform and evaluation, space-separated; write "
                            "it with '=' since the value starts with '--'. Example: "
                            "--beam-args='--direct_running_mode=multi_processing "
                            "--direct_num_workers=2'")
    verbose: bool = _field(False, "Show library logs (TensorFlow, Beam, absl) and tracebacks.")

    def __post_init__(self):
        """Fail at construction, naming the flag, rather than three components later."""
        unset = self._unset
        checks = [
            ("batch_size", unset("batch_size") or self.batch_size >= 1, "must be >= 1"),
            ("epochs", unset("epochs") or self.epochs >= 1, "must be >= 1"),
            ("train_steps", unset("train_steps") or self.train_steps >= 1, "must be >= 1"),
            ("eval_steps", unset("eval_steps") or self.eval_steps >= 1, "must be >= 1"),
            ("image_size", unset("image_size") or self.image_size >= 4, "must be >= 4"),
            ("learning_rate", unset("learning_rate") or self.learning_rate > 0, "must be > 0"),
            ("model_width", unset("model_width") or 0 < self.model_width <= 4, "must be in (0, 4]"),
            ("early_stopping_patience", unset("early_stopping_patience")
             or self.early_stopping_patience >= 0, "must be >= 0"),
            ("label_smoothing", unset("label_smoothing") or 0 <= self.label_smoothing < 1,
             "must be in [0, 1)"),
            ("steps_per_execution", self.steps_per_execution >= 1, "must be >= 1"),
            ("workers", 1 <= self.workers <= 8, "must be in [1, 8]"),
            ("tune_trials", self.tune_trials >= 1, "must be >= 1"),
            ("tune_minutes", math.isfinite(self.tune_minutes) and self.tune_minutes > 0,
             "must be > 0"),
            ("ps", 0 <= self.ps <= 4, "must be in [0, 4]"),
            ("tensorboard_update_freq", self.tensorboard_update_freq >= 1, "must be >= 1"),
            ("accuracy_threshold", unset("accuracy_threshold")
             or 0 <= self.accuracy_threshold <= 1, "must be in [0, 1]"),
            ("baseline_tolerance", self.baseline_tolerance >= 0, "must be >= 0"),
            ("tflite_tolerance", 0 <= self.tflite_tolerance <= 1, "must be in [0, 1]"),
            # Both become path components (serving/<model-name>/, the pipeline root's
            # context): no separators or '..' that could write outside the output.
            ("model_name", _SAFE_NAME.match(self.model_name) is not None, _NAME_RULE),
            ("pipeline_name", _SAFE_NAME.match(self.pipeline_name) is not None, _NAME_RULE),
            ("state_dir", unset("state_dir") or not is_remote(self.state_dir),
             "must be a local folder (SQLite and file locks need one)"),
            ("span", unset("span") or is_pattern(self.data),
             "needs a {SPAN} pattern in --data"),
        ]
        checks += self._augment_checks() + self._budget_checks()
        problems = [(name, rule) for name, ok, rule in checks if not ok]
        problems += option_problems(self.format, self.eval_percent, self.max_pixels,
                                    self.train_spans, self.span, self.span_quiet)
        problems += [(name, "must be in [0, 1]") for name in AUDIT_GATES
                     if getattr(self, name) is not None and not 0 <= getattr(self, name) <= 1]
        problems += [(name, "must be a finite number >= 0") for name in DRIFT_THRESHOLDS
                     if not math.isfinite(getattr(self, name)) or getattr(self, name) < 0]
        if problems:
            name, rule = problems[0]
            raise ConfigError(f"--{name.replace('_', '-')} {rule}, got {getattr(self, name)}")

    def _unset(self, name: str) -> bool:
        """Whether flag `name` was left unset: the plan fills it later."""
        return getattr(self, name) is None

    def _augment_checks(self):
        """The --augment-* flags' (name, ok, rule) checks; unset ones are planned later."""
        unset = self._unset
        return [
            ("augment_crop", unset("augment_crop") or self.augment_crop >= 0, "must be >= 0"),
            ("augment_scale", unset("augment_scale") or 0 <= self.augment_scale <= 1,
             "must be in [0, 1]"),
            ("augment_color", unset("augment_color") or 0 <= self.augment_color < 1,
             "must be in [0, 1)"),
            ("augment_rotate", unset("augment_rotate") or 0 <= self.augment_rotate <= 180,
             "must be in [0, 180]"),
        ]

    def _budget_checks(self):
        """--time-budget's (name, ok, rule) checks."""
        unset = self.time_budget in (None, NO_BUDGET)
        return [("time_budget", unset or is_duration(self.time_budget),
                 f"{DURATION_RULE}, or {NO_BUDGET}"),
                # The budget sizes epochs; an exact step count leaves nothing to size.
                ("time_budget", unset or self.train_steps is None,
                 "caps epochs, and --train-steps asks for an exact step count: give one"),
                # Each worker would time its own epochs and could settle on another count.
                ("time_budget", unset or self.workers == 1, "needs --workers 1")]

    @property
    def pipeline_root(self) -> str:
        """Where TFX writes component artifacts."""
        return os.path.join(self.output, "tfx")

    @property
    def state_path(self) -> str:
        """The local state folder (see `state_dir`); the same for every run of one output."""
        if self.state_dir:
            return self.state_dir
        if not is_remote(self.output):
            return self.output
        digest = hashlib.sha256(self.output.rstrip("/").encode()).hexdigest()[:12]
        return os.path.join(os.path.expanduser("~"), ".cache", "imagepipe",
                            f"{self.pipeline_name}-{digest}")

    @property
    def metadata_path(self) -> str:
        """The SQLite ML Metadata store of this output, in the local state folder."""
        return os.path.join(self.state_path, "metadata.sqlite")

    @property
    def serving_dir(self) -> str:
        """TF Serving model base directory that the Pusher writes versions into."""
        return os.path.join(self.output, "serving", self.model_name)

    @property
    def tflite_dir(self) -> str:
        """Base directory of the TFLite versions: <version>/model.tflite, labels, info."""
        return os.path.join(self.output, "tflite", self.model_name)

    @property
    def summary_path(self) -> str:
        """The run summary contract (docs/data.md)."""
        return os.path.join(self.output, "summary.json")

    @property
    def beam_pipeline_args(self) -> List[str]:
        """`beam_args` split as a shell would."""
        return shlex.split(self.beam_args)

    def settings_for(self, settings: Type[T], **derived) -> T:
        """A stage's settings dataclass: each field named like a config field takes the
        config's value, `derived` gives the others (and may override); a field that
        neither names is an error, so a new setting cannot be forgotten on the way."""
        own = {f.name for f in dataclasses.fields(self)}
        names = [f.name for f in dataclasses.fields(settings)]
        missing = [n for n in names if n not in derived and n not in own]
        if missing:
            raise TypeError(f"{settings.__name__}: no config field or derived value for "
                            f"{missing}")
        return settings(**{n: derived[n] if n in derived else getattr(self, n)
                           for n in names})

    def ingest_options(self) -> IngestOptions:
        """The reader settings, for ImageExampleGen and `imagepipe ingest`."""
        return self.settings_for(IngestOptions, expected_span=self.span, span_store=os.path.join(
            self.pipeline_root, EXAMPLE_GEN_ID, SPAN_STORE_DIR))

    def drift_settings(self) -> DriftSettings:
        """What the DistributionValidator is told: a threshold per feature."""
        return DriftSettings(label=self.drift_label, brightness=self.drift_brightness,
                             size=self.drift_size, grayscale=self.drift_grayscale)

    def push_settings(self) -> PushSettings:
        """What the Pusher is told: where TFLite versions go, and the drift rule."""
        return self.settings_for(PushSettings, tflite_dir=self.tflite_dir)

    def serving_check_settings(self) -> ServingCheckSettings:
        """What the InfraValidator is told: the warmup records and the serving check."""
        return self.settings_for(ServingCheckSettings, **SERVING_CHECK)

    def tflite_settings(self) -> TFLiteSettings:
        """What the TFLiteConverter is told: the conversion and its parity gate."""
        return self.settings_for(TFLiteSettings, parity_tolerance=self.tflite_tolerance)

    def card_settings(self) -> CardSettings:
        """What the ModelCardGenerator is told."""
        return self.settings_for(CardSettings)

    def audit_settings(self) -> AuditSettings:
        """The Evaluator's blessing gates beyond TFMA's thresholds."""
        return self.settings_for(AuditSettings)

    def replace(self, **changes) -> "PipelineConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


# The audit's blessing gates (components/image_evaluator/settings.py).
AUDIT_GATES = ("max_leakage_gain", "min_robust_accuracy", "max_slice_gap")
DRIFT_THRESHOLDS = ("drift_label", "drift_brightness", "drift_size", "drift_grayscale")

# The fields a training plan fills when the user leaves them unset (pipeline/planning/plan.py).
PLANNED = ("image_size", "channels", "model", "model_width", "batch_size", "epochs",
           "learning_rate",
           "early_stopping_patience", "label_smoothing", "augment_crop", "augment_scale",
           "augment_flip", "augment_color", "augment_rotate", "test_flip",
           "accuracy_threshold", "time_budget")


# Examples for the flags whose help above does not already end with one.
EXAMPLES = {
    "format": "--format idx", "strict": "--strict", "pipeline_name": "--pipeline-name flowers",
    "model_name": "--model-name flowers", "channels": "--channels 3",
    "eval_percent": "--eval-percent 10", "batch_size": "--batch-size 128",
    "train_steps": "--train-steps 2000", "eval_steps": "--eval-steps 10",
    "model": "--model photo", "epochs": "--epochs 20",
    "early_stopping_patience": "--early-stopping-patience 8",
    "label_smoothing": "--label-smoothing 0.1", "augment_scale": "--augment-scale 0.25",
    "optimizer": "--optimizer sgd --learning-rate 0.05",
    "learning_rate": "--learning-rate 0.0005", "augment_crop": "--augment-crop 4",
    "augment_rotate": "--augment-rotate 10",
    "augment_flip": "--no-augment-flip", "test_flip": "--no-test-flip",
    "tensorboard_update_freq": "--tensorboard-update-freq 10",
    "tpu": "--tpu local", "full_precision": "--full-precision", "seed": "--seed 7",
    "baseline_tolerance": "--baseline-tolerance 0.005", "quantize": "--quantize float16",
    "tflite_tolerance": "--tflite-tolerance 0.02", "verbose": "--verbose",
    "warm_start": "--warm-start off", "allow_drift": "--allow-drift",
    "drift_label": "--drift-label 0.3", "drift_brightness": "--drift-brightness 0.2",
    "drift_size": "--drift-size 0.4", "drift_grayscale": "--drift-grayscale 0.5",
    "dedupe": "--dedupe", "tune": "--tune", "tune_trials": "--tune --tune-trials 6",
    "tune_minutes": "--tune --tune-minutes 10",
}


def flag_help(field: dataclasses.Field) -> str:
    """A flag's help: what it does, its default and an example."""
    text = field.metadata["help"]
    if "Example:" not in text:
        text += f" Example: {EXAMPLES[field.name]}"
    default = "planned" if field.default is None and field.name in PLANNED else field.default
    return f"{text} (default: {default})"


def config_fields():
    """The dataclass fields, in declaration order, for building CLI flags."""
    return dataclasses.fields(PipelineConfig)


# The InfraValidator's warmup records and serving check (components/serving_validator/).
SERVING_CHECK = {
    "warmup_records": 100,  # eval images, one request each; TF Serving replays at most 1,000
    "warmup_max_bytes": 8 << 20,  # the file is copied into every version: bound camera photos
    "warmup_batch_sizes": (8, 32),  # batches batching.config's max_batch_size lets form
    "rest_requests": 32,  # timed single-image REST requests, for p50/p99
    "atol": 1e-4,  # REST answers vs the Evaluator's signature, per probability
    "timeout_s": 600,  # a load that hangs fails the check instead of the run
}
