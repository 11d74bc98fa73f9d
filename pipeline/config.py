"""The one typed configuration of an imagepipe run, with every default.

CLI flags are generated from the fields below (see `pipeline.cli`), so a
default or a help text is written exactly once, here.
"""
import dataclasses
import os
from pathlib import Path
from typing import Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "png")


class ConfigError(ValueError):
    """A config value out of range; the message names the flag."""


def _field(default, help_text: str, **kwargs):
    return dataclasses.field(default=default, metadata={"help": help_text, **kwargs})


@dataclasses.dataclass
class PipelineConfig:
    """Everything a run needs; paths derived from `output` are properties."""

    data: str = _field(DEFAULT_DATA, "Dataset root: a class-per-folder tree of images. "
                       "Example: --data ~/datasets/flowers")
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
    verbose: bool = _field(False, "Show library logs (TensorFlow, Beam, absl) and tracebacks.")

    def __post_init__(self):
        """Fail at construction, naming the flag, rather than three components later."""
        checks = [
            ("batch_size", self.batch_size >= 1, "must be >= 1"),
            ("train_steps", self.train_steps >= 1, "must be >= 1"),
            ("eval_steps", self.eval_steps >= 1, "must be >= 1"),
            ("eval_percent", 0 < self.eval_percent < 100, "must be in 1..99"),
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

    def replace(self, **changes) -> "PipelineConfig":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def config_fields():
    """The dataclass fields, in declaration order, for building CLI flags."""
    return dataclasses.fields(PipelineConfig)
