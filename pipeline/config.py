"""The one typed configuration of an imagepipe run, with every default.

CLI flags are generated from the fields below (see `pipeline.cli`), so a
default or a help text is written exactly once, here.
"""
import dataclasses
import os
import re
import shlex
from pathlib import Path
from typing import List, Optional

from components.image_example_gen.options import DEFAULT_MAX_PIXELS, FORMATS, IngestOptions

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "png")
# In-process Beam: for datasets that fit one machine, Beam's worker processes
# (each re-importing TensorFlow) cost more than they save; ingestion encodes
# on every core anyway (bench/ingest: 1.60x the plain loop in process, 0.56x
# with 2 Beam processes).
LOCAL_BEAM_ARGS = "--direct_running_mode=in_memory --direct_num_workers=1"


class ConfigError(ValueError):
    """A config value out of range; the message names the flag."""


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")
_NAME_RULE = "must be letters, digits, '-' and '_' (no '/', '.' or spaces)"


def _field(default, help_text: str, **kwargs):
    return dataclasses.field(default=default, metadata={"help": help_text, **kwargs})


@dataclasses.dataclass
class PipelineConfig:
    """Everything a run needs; paths derived from `output` are properties."""

    data: str = _field(DEFAULT_DATA, "Dataset: a class-per-folder image tree (optionally "
                       "under train/ and eval/ folders), a folder of MNIST-style IDX files, "
                       "an .npz, or TFRecords of tf.Example. Example: --data ~/datasets/flowers")
    format: str = _field("auto", "Dataset format; auto detects it from file names.",
                         choices=FORMATS)
    strict: bool = _field(False, "Fail if any image cannot be decoded, instead of "
                          "skipping and reporting it.")
    max_pixels: int = _field(DEFAULT_MAX_PIXELS, "Refuse images with more pixels than this "
                             "(decompression bombs). Example: --max-pixels 25000000")
    image_key: str = _field("image/encoded", "TFRecord input: feature with the encoded "
                            "image bytes. Example: --image-key image_raw")
    label_key: str = _field("image/class/label", "TFRecord input: int64 feature with the "
                            "0-based label. Example: --label-key label")
    output: str = _field("outputs", "Directory for everything a run writes: TFX artifacts, "
                         "ML Metadata, pushed models, summary.json. Example: --output /tmp/run1")
    pipeline_name: str = _field("imagepipe", "TFX pipeline name; runs with the same name and "
                                "output share the cache and the baseline model.")
    model_name: str = _field("imagepipe", "Name of the pushed model: "
                             "<output>/serving/<model-name>/<version>/.")
    image_size: Optional[int] = _field(None, "Side in pixels the images are resized to; "
                                       "default: the most common size in the data. Example: --image-size 64")
    channels: Optional[int] = _field(None, "1 (grayscale) or 3 (RGB); default: what most "
                                     "images have.", choices=(1, 3))
    eval_percent: int = _field(20, "Share of images, in percent, hashed into the eval split.")
    batch_size: int = _field(64, "Training batch per replica; the global batch is this times "
                             "the replicas (GPUs or TPU cores). On TPU, a multiple of 8.")
    train_steps: int = _field(400, "Training steps. 400 steps of 64 is ~32 epochs of mnist_1k.")
    eval_steps: int = _field(4, "Validation steps run by the Trainer after training "
                             "(the Evaluator always scores the whole eval split).")
    model: str = _field("cnn", "Model: cnn (the Cloud TPU MNIST example's CNN) or resnet "
                        "(a small ResNet, for RGB data).", choices=("cnn", "resnet"))
    optimizer: str = _field("adam", "Optimizer: adam, or sgd as in the TPU example (use "
                            "--learning-rate 0.05 with it).", choices=("adam", "sgd"))
    learning_rate: float = _field(1e-3, "Optimizer learning rate.")
    augment_crop: int = _field(2, "Training augmentation: pad images by this many pixels and "
                               "crop back at a random offset; 0 turns it off.")
    augment_flip: bool = _field(False, "Training augmentation: random horizontal flips "
                                "(leave off for digits and text).")
    augment_color: float = _field(0.0, "Training augmentation: random brightness and contrast "
                                  "change of up to this fraction; 0 turns it off. Example: --augment-color 0.2")
    steps_per_execution: int = _field(1, "Training steps per call into the compiled "
                                      "function; higher amortizes TPU round trips. Example: --steps-per-execution 50")
    tensorboard_update_freq: int = _field(100, "Write TensorBoard scalars and the custom "
                                          "summaries every this many steps.")
    tpu: Optional[str] = _field(None, "Train on a TPU: its address (grpc://10.0.0.2:8470 or a "
                                "name) or 'local' on a TPU VM. Default: GPUs if any, else CPU.")
    full_precision: bool = _field(False, "Train in float32 on GPU/TPU too (default: "
                                  "mixed_float16 on GPU, mixed_bfloat16 on TPU).")
    seed: int = _field(0, "Random seed for weights, shuffling, dropout and augmentation.")
    accuracy_threshold: float = _field(0.9, "Bless the model only if its eval accuracy is at "
                                       "least this. Example: --accuracy-threshold 0.95")
    baseline_tolerance: float = _field(0.01, "Bless only if accuracy >= the last blessed "
                                       "model's minus this (absolute).")
    quantize: str = _field("int8", "TFLite conversion of the blessed model: none, dynamic "
                           "(dynamic-range int8 weights), float16, or int8 (full integer, "
                           "calibrated on the train split).",
                           choices=("none", "dynamic", "float16", "int8"))
    tflite_tolerance: float = _field(0.01, "Push the TFLite file only if its eval accuracy is "
                                     "at most this much below the SavedModel's (absolute).")
    beam_args: str = _field(LOCAL_BEAM_ARGS, "Apache Beam pipeline options for ingestion, "
                            "statistics, Transform and evaluation, space-separated; write "
                            "it with '=' since the value starts with '--'. Example: "
                            "--beam-args='--direct_running_mode=multi_processing "
                            "--direct_num_workers=2'")
    verbose: bool = _field(False, "Show library logs (TensorFlow, Beam, absl) and tracebacks.")

    def __post_init__(self):
        """Fail at construction, naming the flag, rather than three components later."""
        checks = [
            ("batch_size", self.batch_size >= 1, "must be >= 1"),
            ("train_steps", self.train_steps >= 1, "must be >= 1"),
            ("eval_steps", self.eval_steps >= 1, "must be >= 1"),
            ("eval_percent", 0 < self.eval_percent < 100, "must be in 1..99"),
            ("max_pixels", self.max_pixels >= 1, "must be >= 1"),
            ("image_size", self.image_size is None or self.image_size >= 4, "must be >= 4"),
            ("learning_rate", self.learning_rate > 0, "must be > 0"),
            ("augment_crop", self.augment_crop >= 0, "must be >= 0"),
            ("augment_color", 0 <= self.augment_color < 1, "must be in [0, 1)"),
            ("steps_per_execution", self.steps_per_execution >= 1, "must be >= 1"),
            ("tensorboard_update_freq", self.tensorboard_update_freq >= 1, "must be >= 1"),
            ("accuracy_threshold", 0 <= self.accuracy_threshold <= 1, "must be in [0, 1]"),
            ("baseline_tolerance", self.baseline_tolerance >= 0, "must be >= 0"),
            ("tflite_tolerance", 0 <= self.tflite_tolerance <= 1, "must be in [0, 1]"),
            # Both become path components (serving/<model-name>/, the pipeline root's
            # context): no separators or '..' that could write outside the output.
            ("model_name", _SAFE_NAME.match(self.model_name) is not None, _NAME_RULE),
            ("pipeline_name", _SAFE_NAME.match(self.pipeline_name) is not None, _NAME_RULE),
        ]
        for name, ok, rule in checks:
            if not ok:
                raise ConfigError(f"--{name.replace('_', '-')} {rule}, "
                                  f"got {getattr(self, name)}")

    @property
    def pipeline_root(self) -> str:
        """Where TFX writes component artifacts."""
        return os.path.join(self.output, "tfx")

    @property
    def metadata_path(self) -> str:
        """SQLite ML Metadata store of this output directory."""
        return os.path.join(self.output, "metadata.sqlite")

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
        """The run summary contract (see README)."""
        return os.path.join(self.output, "summary.json")

    @property
    def beam_pipeline_args(self) -> List[str]:
        """`beam_args` split as a shell would."""
        return shlex.split(self.beam_args)

    def ingest_options(self) -> IngestOptions:
        """The reader settings, for ImageExampleGen and `imagepipe ingest`."""
        return IngestOptions(format=self.format, strict=self.strict,
                             max_pixels=self.max_pixels, image_key=self.image_key,
                             label_key=self.label_key, eval_percent=self.eval_percent)

    def trainer_config(self) -> dict:
        """The Trainer's custom_config: every training hyperparameter but the step counts."""
        names = ("batch_size", "model", "optimizer", "learning_rate", "augment_crop",
                 "augment_flip", "augment_color", "steps_per_execution",
                 "tensorboard_update_freq", "tpu", "full_precision", "seed")
        return {name: getattr(self, name) for name in names}

    def replace(self, **changes) -> "PipelineConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


# Examples for the flags whose help above does not already end with one.
EXAMPLES = {
    "format": "--format idx", "strict": "--strict", "pipeline_name": "--pipeline-name flowers",
    "model_name": "--model-name flowers", "channels": "--channels 3",
    "eval_percent": "--eval-percent 10", "batch_size": "--batch-size 128",
    "train_steps": "--train-steps 2000", "eval_steps": "--eval-steps 10",
    "model": "--model resnet", "optimizer": "--optimizer sgd --learning-rate 0.05",
    "learning_rate": "--learning-rate 0.0005", "augment_crop": "--augment-crop 4",
    "augment_flip": "--augment-flip", "tensorboard_update_freq": "--tensorboard-update-freq 10",
    "tpu": "--tpu local", "full_precision": "--full-precision", "seed": "--seed 7",
    "baseline_tolerance": "--baseline-tolerance 0.005", "quantize": "--quantize float16",
    "tflite_tolerance": "--tflite-tolerance 0.02", "verbose": "--verbose",
}


def flag_help(field: dataclasses.Field) -> str:
    """A flag's help: what it does, its default and an example."""
    text = field.metadata["help"]
    if "Example:" not in text:
        text += f" Example: {EXAMPLES[field.name]}"
    return f"{text} (default: {field.default})"


def config_fields():
    """The dataclass fields, in declaration order, for building CLI flags."""
    return dataclasses.fields(PipelineConfig)
