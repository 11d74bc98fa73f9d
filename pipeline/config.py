"""The one typed configuration of an imagepipe run, with every default.

CLI flags are generated from the fields below (see `pipeline.cli`), so a
default or a help text is written exactly once, here.
"""
import dataclasses
import os
import shlex
from pathlib import Path
from typing import List, Optional

from components.image_example_gen.options import DEFAULT_MAX_PIXELS, FORMATS, IngestOptions

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "png")
# In-process Beam: for datasets that fit one machine, starting worker
# processes (each re-importing TensorFlow) costs more than it saves
# (bench/ingest: 0.77x the plain loop in process, 0.52x with 2 processes).
LOCAL_BEAM_ARGS = "--direct_running_mode=in_memory --direct_num_workers=1"


class ConfigError(ValueError):
    """A config value out of range; the message names the flag."""


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
                                       "default: the most common size in the data. Example: 64")
    channels: Optional[int] = _field(None, "1 (grayscale) or 3 (RGB); default: what most "
                                     "images have.", choices=(1, 3))
    eval_percent: int = _field(20, "Share of images, in percent, hashed into the eval split.")
    batch_size: int = _field(64, "Training batch size (global).")
    train_steps: int = _field(400, "Training steps. 400 steps of 64 is ~32 epochs of mnist_1k.")
    eval_steps: int = _field(4, "Validation steps run by the Trainer after training "
                             "(the Evaluator always scores the whole eval split).")
    learning_rate: float = _field(1e-3, "Adam learning rate.")
    accuracy_threshold: float = _field(0.9, "Bless the model only if its eval accuracy is at "
                                       "least this. Example: --accuracy-threshold 0.95")
    baseline_tolerance: float = _field(0.01, "Bless only if accuracy >= the last blessed "
                                       "model's minus this (absolute).")
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
            ("accuracy_threshold", 0 <= self.accuracy_threshold <= 1, "must be in [0, 1]"),
            ("baseline_tolerance", self.baseline_tolerance >= 0, "must be >= 0"),
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

    def replace(self, **changes) -> "PipelineConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def config_fields():
    """The dataclass fields, in declaration order, for building CLI flags."""
    return dataclasses.fields(PipelineConfig)
