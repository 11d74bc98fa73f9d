"""The Trainer's settings as one typed dataclass, carried in TFX's `custom_config`.

Light on purpose (no TensorFlow): the planner, the compiler and `run_fn` all
import it. `to_custom_config` / `from_custom_config` are each other's inverse,
and the reading side rejects unknown or missing settings by name instead of
casting an untyped dict key by key.
"""
import dataclasses
import json
import math
from typing import Optional

CUSTOM_CONFIG_KEY = "trainer_params"
# Keras Applications networks (modules/backbones.py), fine-tuned when pretrained.
BACKBONE_NAMES = ("mobilenet_v2", "efficientnet_b0", "resnet50")
# "module": the network comes from the user's --module-file (modules/user_module.py).
MODULE = "module"
MODELS = ("cnn", "resnet", "photo") + BACKBONE_NAMES + (MODULE,)


@dataclasses.dataclass(frozen=True)
class TrainerParams:
    """Everything `run_fn` needs besides the artifacts; see pipeline/config.py for meanings."""

    model: str
    batch_size: int
    epochs: Optional[int]  # None: from the train split's size (epochs_for), at run time
    train_steps: Optional[int]  # exact step count; overrides epochs when given
    eval_steps: Optional[int]  # None: the whole eval split every epoch
    optimizer: str
    learning_rate: float
    warmup_epochs: float
    early_stopping_patience: int  # 0: off
    label_smoothing: float
    augment_crop: int
    augment_scale: float  # random resized crop: smallest area kept; 0 is off
    augment_flip: bool
    augment_color: float
    cache_bytes: int  # decoded splits up to this size are cached in memory, else on disk
    steps_per_execution: int
    tensorboard_update_freq: int
    tpu: Optional[str]
    full_precision: bool
    seed: int
    # Backbones: 'imagenet', a weights file's path, or None (random init, one phase).
    weights: Optional[str] = None
    weights_sha256: Optional[str] = None  # of a local weights file: part of the cache key
    head_share: float = 1.0  # share of the epochs that train the head alone (phase 1)
    fine_tune_lr_factor: float = 1.0  # phase 2's peak learning rate, relative to phase 1's
    # --module-file: its path (for messages), its text (run here, and on KFP and
    # Vertex, without a copy of the file) and the text's sha256.
    module_file: Optional[str] = None
    module_source: Optional[str] = None
    module_sha256: Optional[str] = None

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if (self.model == MODULE) != (self.module_source is not None):
            raise ValueError("model 'module' goes with a module file, and only it")

    @property
    def fine_tunes(self) -> bool:
        """Two phases (head, then top blocks) for a backbone that starts with weights."""
        return self.model in BACKBONE_NAMES and self.weights is not None

    def to_custom_config(self) -> dict:
        """The `custom_config` of the Trainer component (JSON-serializable)."""
        return {CUSTOM_CONFIG_KEY: dataclasses.asdict(self)}

    @classmethod
    def from_custom_config(cls, custom_config: dict) -> "TrainerParams":
        """The inverse of to_custom_config; names what is missing or unknown."""
        values = custom_config.get(CUSTOM_CONFIG_KEY)
        if isinstance(values, str):  # some orchestrators hand nested values back as JSON
            values = json.loads(values)
        if not isinstance(values, dict):
            raise ValueError(f"custom_config has no {CUSTOM_CONFIG_KEY!r}: {custom_config!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown, missing = set(values) - names, names - set(values)
        if unknown or missing:
            raise ValueError(f"TrainerParams: unknown {sorted(unknown)}, missing {sorted(missing)}")
        return cls(**values)


# Training length from the train split's size: about this many examples seen
# in all, within [MIN_EPOCHS, MAX_EPOCHS] epochs. Small sets need many passes;
# large ones learn enough in a few, and a laptop CPU cannot afford more.
EXAMPLES_BUDGET = 900_000
MIN_EPOCHS, MAX_EPOCHS = 3, 40


def epochs_for(train_examples: int) -> int:
    """Epochs of the train split to train for, from its size alone."""
    if train_examples < 1:
        raise ValueError(f"train_examples must be >= 1, got {train_examples}")
    return min(MAX_EPOCHS, max(MIN_EPOCHS, math.ceil(EXAMPLES_BUDGET / train_examples)))


def head_epochs(epochs: int, head_share: float) -> int:
    """Epochs of phase 1 (head only); the rest fine-tune. All of them below 2 epochs."""
    if head_share >= 1 or epochs < 2:
        return epochs
    return min(epochs - 1, max(1, round(epochs * head_share)))


def steps_per_epoch(train_examples: int, global_batch: int) -> int:
    """Complete batches in one pass over the train split (at least 1)."""
    return max(1, train_examples // global_batch)
