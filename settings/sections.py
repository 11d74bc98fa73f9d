"""The pipeline's settings sections that are not a component's own.

A section is a frozen dataclass of `setting` fields (core/parameters.py): its default, help,
flag and bounds, written once. The components' own sections are their settings classes
(components/drift_validator/settings.py, components/image_evaluator/settings.py); the
config (settings/config.py) nests them all, and the CLI generates every subcommand's flags
from the sections that subcommand takes (settings/flags.py). The subcommands' own sections
are in settings/command_sections.py.
"""
import dataclasses
from pathlib import Path
from typing import ClassVar, Optional

from core.contract import IMAGE_KEY, LABEL_KEY
from core.parameters import setting
from components.image_example_gen.options import FORMATS
from components.tflite_converter.settings import QUANTIZATIONS
from modules import network_registry
from modules.params import WARP_ZOOM

REPO_ROOT = Path(__file__).resolve().parent.parent
# Over this, an image is refused before decoding (decompression bombs); also
# the limit of `imagepipe predict`, which checks images as ingestion does.
DEFAULT_MAX_PIXELS = 100_000_000
DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "png")
# In-process Beam: for datasets that fit one machine, Beam's worker processes
# (each re-importing TensorFlow) cost more than they save; ingestion encodes
# on every core anyway (bench/ingestion/ingest_speed.py).
LOCAL_BEAM_ARGS = "--direct_running_mode=in_memory --direct_num_workers=1"
NO_BUDGET = "none"  # --time-budget none: no budget, not even the planned one
NETWORKS = tuple(m for m in network_registry.MODELS if m != network_registry.MODULE)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """Where a run writes, and the names it writes under."""

    output: str = setting(
        "outputs",
        "Folder or bucket (gs://...) for everything a run writes: TFX artifacts, pushed models, "
        "summary.json, the report; ML Metadata too when it is local (else see --state-dir). "
        "Example: --output /tmp/run1")
    state_dir: Optional[str] = setting(
        None,
        "Local folder for what must stay on this machine: ML Metadata (SQLite), the run lock and "
        "the Trainer's decode cache; never a gs:// URI. Default: --output when it is local; for a"
        " gs:// --output, ~/.cache/imagepipe/<pipeline-name>-<hash of --output>. Example: "
        "--state-dir /var/tmp/imagepipe-flowers")
    pipeline_name: str = setting(
        "imagepipe",
        "TFX pipeline name; runs with the same name and output share the cache and the baseline "
        "model.",
        example="--pipeline-name flowers")
    model_name: str = setting(
        "imagepipe",
        "Name of the pushed model: <output>/serving/<model-name>/<version>/.",
        example="--model-name flowers")


@dataclasses.dataclass(frozen=True)
class IngestSettings:
    """How ImageExampleGen reads the dataset and splits it (components/image_example_gen/)."""

    data: str = setting(
        DEFAULT_DATA,
        "Dataset: a class-per-folder image tree (optionally under train/ and eval/ folders), a "
        "folder of MNIST-style IDX files, an .npz, TFRecords of tf.Example, a manifest "
        "listing images (a Vertex AI import file, .csv or .jsonl, or a CSV with a header), a "
        "Hugging Face dataset (the Hub's Parquet files or a save_to_disk folder) or a TFDS "
        "prepared folder; or a pattern with {SPAN} (and optionally {VERSION}) naming one such "
        "dataset per span, for continuous training. Example: --data ~/datasets/flowers, --data "
        "labels.csv, --data 'gs://b/photos/span-{SPAN}'")
    format: str = setting(
        "auto",
        "Dataset format; auto detects it from file names (and a .csv from its first row).",
        choices=FORMATS, example="--format idx")
    strict: bool = setting(
        False,
        "Fail if any image cannot be decoded, instead of skipping and reporting it.",
        example="--strict")
    eval_percent: int = setting(
        20,
        "Share of images, in percent, hashed into the eval split.",
        example="--eval-percent 10")
    train_spans: int = setting(
        0,
        "With a {SPAN} pattern: train on the latest N spans (0: all); evaluation uses the newest "
        "span's eval split. Example: --train-spans 3")
    span: Optional[int] = setting(
        None,
        "With a {SPAN} pattern: the span this run expects. The window ends at it (later spans "
        "wait for a later run), and the run fails if it is missing or not ready. Default: the "
        "newest ready span. Example: --span 47")
    span_quiet: int = setting(
        600,
        "With a {SPAN} pattern: a span folder without a _SUCCESS file is ready once none of its "
        "files changed for this many seconds; until then runs leave it out. 0: ready at once. "
        "Example: --span-quiet 3600")
    dedupe: bool = setting(
        False,
        "Drop copies before training: of each group of exact or near duplicates the first path is"
        " kept, and a group whose copies carry different labels is dropped whole. --strict "
        "refuses data with copies instead.",
        example="--dedupe")
    groups: Optional[str] = setting(
        None,
        "A CSV file of path,group rows (paths relative to --data, or to a manifest's folder): "
        "each image's group is carried from ingestion, and accuracy is reported per group. "
        "Example: --groups groups.csv")
    allowed_root: Optional[str] = setting(
        None,
        "A manifest (--data FILE.csv or .jsonl) may name images only under its own folder (a "
        "local manifest) or bucket (gs://); this adds other roots, comma-separated. Rows naming "
        "an image elsewhere are skipped and reported (--strict: refused). Example: "
        "--allowed-root /mnt/images,gs://b/photos")
    image_folder: Optional[str] = setting(
        None,
        "A manifest's relative image paths are under this folder (relative to the manifest's "
        "folder, absolute, or gs://) instead of the manifest's own folder; it is then an "
        "allowed root too. Example: --image-folder train (Kaggle's labels.csv beside train/)")
    path_column: Optional[str] = setting(
        None,
        "A CSV manifest with a header: the column holding each image's path. Default: the first "
        "of filename, file, file_name, filepath, image_path, image, image_id, path, ... (any "
        "case). Example: --path-column img")
    label_column: Optional[str] = setting(
        None,
        "A CSV manifest with a header: the column holding each image's class name. Default: the "
        "first of label, class, category, target, labels, ... (any case). Example: "
        "--label-column species")
    split_column: Optional[str] = setting(
        None,
        "A CSV manifest with a header: the column holding each image's split (train, "
        "validation, test, ...; empty: hashed). Default: split, ml_use, subset, set, fold or "
        "partition if present, else none. Example: --split-column fold")


@dataclasses.dataclass(frozen=True)
class ImageLimits:
    """What any image read from a user may be: ingestion, inspect, predict and monitor."""

    max_pixels: int = setting(
        DEFAULT_MAX_PIXELS,
        "Refuse images with more pixels than this (decompression bombs). Example: --max-pixels "
        "25000000")


@dataclasses.dataclass(frozen=True)
class TFRecordKeys:
    """TFRecords of tf.Example given as input: which features hold what."""

    image_key: str = setting(
        IMAGE_KEY,
        "TFRecord input: feature with the encoded image bytes. Example: --image-key image_raw")
    label_key: str = setting(
        LABEL_KEY,
        "TFRecord input: int64 feature with the 0-based label. Example: --label-key label")


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    """The network and its input: what Transform and the Trainer build (modules/)."""

    network: Optional[str] = setting(
        None,
        f"Model: {network_registry.describe()}. Default: planned from the data (never a "
        "backbone).",
        flag="--model", choices=NETWORKS, example="--model photo",
        planned=True)
    width: Optional[float] = setting(
        None,
        "Width of the built-in networks (cnn, resnet, photo): every layer's filters times this. "
        "Default: planned: 0.5 for the cnn on a small set, else 1. Example: --model-width 0.5",
        flag="--model-width", planned=True, low=0, high=4, low_open=True)
    weights: Optional[str] = setting(
        None,
        "Backbones: imagenet (Keras downloads them once, into ~/.keras/models), a Keras weights "
        "file of the backbone without its top (.h5, or a checkpoint prefix; gs:// too), or none "
        "(random init, one phase). Default: imagenet. Example: --weights mnv2_notop.h5")
    module_file: Optional[str] = setting(
        None,
        "Your own network: a Python file defining build_model(input_shape, num_classes, params) "
        "and optionally augment(images, params) (docs/models.md). Example: --module-file "
        "modules/examples/tiny_convnet.py")
    image_size: Optional[int] = setting(
        None,
        "Side in pixels the images are resized to. Default: planned from the data, the model and "
        "the hardware (see `imagepipe plan`). Example: --image-size 64",
        planned=True, low=4)
    channels: Optional[int] = setting(
        None,
        "1 (grayscale) or 3 (RGB); default: what most images have.",
        choices=(1, 3), example="--channels 3", planned=True)
    test_flip: Optional[bool] = setting(
        None,
        "The served model (every signature, TFLite too) averages each image's scores with those "
        "of its mirror image, for twice the compute an image; the eval accuracy is that model's "
        "(--no-test-flip for digits and text). Default: planned (photos).",
        example="--no-test-flip", planned=True)


@dataclasses.dataclass(frozen=True)
class TrainingSettings:
    """How the Trainer trains (modules/trainer.py, modules/training/)."""

    batch_size: Optional[int] = setting(
        None,
        "Training batch per replica; the global batch is this times the replicas (GPUs or TPU "
        "cores). On TPU, a multiple of 8. Default: planned (64).",
        example="--batch-size 128", planned=True, low=1)
    epochs: Optional[int] = setting(
        None,
        "Passes over the train split. Default: planned from its size (--early-stopping-patience "
        "may end sooner).",
        example="--epochs 20", planned=True, low=1)
    train_steps: Optional[int] = setting(
        None,
        "Exact number of training steps; overrides --epochs. Default: none (train in epochs).",
        example="--train-steps 2000", low=1)
    time_budget: Optional[str] = setting(
        None,
        "Wall-time budget of the whole run: training stops after the epochs that fit in what the "
        "other stages leave (the plan says how much, and why); 'none' trains every planned epoch."
        " Default: planned: 9m for a run on this machine's CPU, none on a GPU or TPU. Example: "
        "--time-budget 10m, 1h30m",
        planned=True)
    eval_steps: Optional[int] = setting(
        None,
        "Validation batches after each epoch. Default: the whole eval split (the Evaluator always"
        " scores all of it).",
        example="--eval-steps 10", low=1)
    optimizer: str = setting(
        "adam",
        "Optimizer: adam, or sgd as in the TPU example (use --learning-rate 0.05 with it).",
        choices=("adam", "sgd"), example="--optimizer sgd --learning-rate 0.05")
    learning_rate: Optional[float] = setting(
        None,
        "Peak learning rate (after warmup, then cosine decay). Default: planned per model.",
        example="--learning-rate 0.0005", planned=True, low=0, low_open=True)
    early_stopping_patience: Optional[int] = setting(
        None,
        "Stop when the eval split's loss has not improved for this many epochs, and keep the best"
        " epoch's weights (the eval accuracy is then of an epoch chosen on the eval images); 0 "
        "turns it off. Default: planned (off).",
        example="--early-stopping-patience 8", planned=True, low=0)
    label_smoothing: Optional[float] = setting(
        None,
        "Label smoothing of the training loss, in [0, 1). Default: planned per model.",
        example="--label-smoothing 0.1", planned=True, low=0, high=1, high_open=True)
    steps_per_execution: int = setting(
        1,
        "Training steps per call into the compiled function; higher amortizes TPU round trips. "
        "Example: --steps-per-execution 50",
        low=1)
    tensorboard_update_freq: int = setting(
        100,
        "Write TensorBoard scalars and the custom summaries every this many steps.",
        example="--tensorboard-update-freq 10", low=1)
    seed: int = setting(
        0,
        "Random seed for weights, shuffling, dropout and augmentation.",
        example="--seed 7")
    warm_start: str = setting(
        "on",
        "Start training from the last blessed model's weights when its classes and input shape "
        "allow, with fewer epochs (the plan says how many, and why).",
        choices=("on", "off"), example="--warm-start off")


@dataclasses.dataclass(frozen=True)
class AugmentSettings:
    """The Trainer's augmentation of training batches (modules/augment.py)."""
    FLAG_PREFIX: ClassVar[str] = "augment-"

    crop: Optional[int] = setting(
        None,
        "Training augmentation: pad images by this many pixels and crop back at a random offset "
        "(with --augment-rotate, the warp's largest shift instead); 0 turns it off. Default: "
        "planned (2 for the cnn).",
        example="--augment-crop 4", planned=True, low=0)
    scale: Optional[float] = setting(
        None,
        "Training augmentation: random resized crop keeping at least this share of the image "
        "area; 0 turns it off. Default: planned (photos).",
        example="--augment-scale 0.25", planned=True, low=0, high=1)
    flip: Optional[bool] = setting(
        None,
        "Training augmentation: random horizontal flips (--no-augment-flip for digits and text). "
        "Default: planned (photos).",
        example="--no-augment-flip", planned=True)
    color: Optional[float] = setting(
        None,
        "Training augmentation: random brightness and contrast change of up to this fraction; 0 "
        "turns it off. Default: planned (photos). Example: --augment-color 0.2",
        planned=True, low=0, high=1, high_open=True)
    rotate: Optional[float] = setting(
        None,
        "Training augmentation: a random warp that rotates by up to this many degrees, zooms by "
        f"up to {WARP_ZOOM:.0%} and shifts by up to --augment-crop pixels; 0 turns it off. "
        "Default: planned (15 for the cnn on a small set).",
        example="--augment-rotate 10", planned=True, low=0, high=180)


@dataclasses.dataclass(frozen=True)
class ClusterSettings:
    """Where the Trainer runs: local workers, parameter servers, a TPU, precision."""

    workers: int = setting(
        1,
        "Train on this many worker processes on this machine, with MultiWorkerMirroredStrategy "
        "over loopback ports (a TF_CONFIG each), as a cluster's workers would: for proving and "
        "debugging multi-worker training, not for speed. Example: --workers 2",
        low=1, high=8)
    ps: int = setting(
        0,
        "With --workers: also start this many parameter servers, and train under "
        "ParameterServerStrategy, the chief coordinating asynchronous workers. Example: --workers"
        " 2 --ps 1",
        low=0, high=4)
    tpu: Optional[str] = setting(
        None,
        "Train on a TPU: its address (grpc://10.0.0.2:8470 or a name) or 'local' on a TPU VM. "
        "Default: GPUs if any, else CPU.",
        example="--tpu local")
    full_precision: bool = setting(
        False,
        "Train in float32 on GPU/TPU too (default: mixed_float16 on GPU, mixed_bfloat16 on TPU).",
        example="--full-precision")


@dataclasses.dataclass(frozen=True)
class TuningSettings:
    """The Tuner step's search (components/image_tuner/, modules/tuning/)."""
    FLAG_PREFIX: ClassVar[str] = "tune-"

    enabled: bool = setting(
        False,
        "Search before training: a Tuner step tries models of other widths, depths, dropout, "
        "image sizes, learning rates and augmentation strengths (backbones: both phases' learning"
        " rates and how much to unfreeze; a module file: its own tuner_fn if it has one) on a "
        "sample of the train split, and the Trainer keeps the plan's own settings (trial 0) "
        "unless a trial is right on significantly more of the same held-out images (McNemar's "
        "exact test, Holm-corrected; docs/tuning.md).",
        flag="--tune", example="--tune")
    trials: int = setting(
        10,
        "With --tune: at most this many trials, the plan's own settings (trial 0) among them.",
        example="--tune --tune-trials 6", low=1)
    minutes: float = setting(
        30.0,
        "With --tune: start no trial after this many minutes, and stop the one running then.",
        example="--tune --tune-minutes 10", low=0, low_open=True, finite=True)


@dataclasses.dataclass(frozen=True)
class PushRules:
    """The release's rule on drift: the Evaluator, the card and the Pusher apply it."""

    allow_drift: bool = setting(
        False,
        "Push even when the newest span drifted from the one before it (see the --drift-* "
        "thresholds).",
        example="--allow-drift")


@dataclasses.dataclass(frozen=True)
class TFLiteOptions:
    """The TFLite conversion and its parity gate (components/tflite_converter/)."""

    quantize: str = setting(
        "int8",
        "TFLite conversion of the blessed model: none, dynamic (dynamic-range int8 weights), "
        "float16, or int8 (full integer, calibrated on the train split).",
        choices=QUANTIZATIONS, example="--quantize float16")
    tolerance: float = setting(
        0.01,
        "Push the TFLite file only if its eval accuracy is at most this much below the "
        "SavedModel's (absolute).",
        flag="--tflite-tolerance", example="--tflite-tolerance 0.02", low=0, high=1)


@dataclasses.dataclass(frozen=True)
class ServingOptions:
    """The serving check (components/serving_validator/)."""

    model_server: Optional[str] = setting(
        None,
        "A tensorflow_model_server binary for the serving check: it loads the model with its "
        "warmup records and answers the check's REST requests. Compiled pipelines take the path "
        "inside the image. Default: a TensorFlow-only process stands in. Example: --model-server "
        "/usr/bin/tensorflow_model_server")
    check_timeout: int = setting(
        600,
        "Seconds the serving check may take: loading the model, replaying its warmup records "
        "and answering the REST requests. A check that takes longer fails the step as an "
        "infrastructure failure, which the next run retries (docs/continuous.md).",
        flag="--serving-timeout", example="--serving-timeout 120", low=1)


@dataclasses.dataclass(frozen=True)
class BeamSettings:
    """Apache Beam's options for the stages that run on Beam."""
    FLAG_PREFIX: ClassVar[str] = "beam-"

    args: str = setting(
        LOCAL_BEAM_ARGS,
        "Apache Beam pipeline options for ingestion, statistics, Transform and evaluation, "
        "space-separated; write it with '=' since the value starts with '--'. Example: "
        "--beam-args='--direct_running_mode=multi_processing --direct_num_workers=2'")


@dataclasses.dataclass(frozen=True)
class TrackingSettings:
    """Where else a run is logged."""

    mlflow_uri: Optional[str] = setting(
        None,
        "Also log each run to this MLflow tracking server: settings, metrics, spans, verdicts and"
        " the pushed version (needs the mlflow extra). Example: --mlflow-uri "
        "http://127.0.0.1:5000")


@dataclasses.dataclass(frozen=True)
class LoggingSettings:
    """What the command prints."""

    verbose: bool = setting(
        False,
        "Show library logs (TensorFlow, Beam, absl) and tracebacks.",
        example="--verbose")
