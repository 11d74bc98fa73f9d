"""The Trainer's and Transform's settings: typed dataclasses carried in TFX's `custom_config`.

Light on purpose (no TensorFlow): the planner, the compiler and `run_fn` all
import it. Both travel by core/parameters.py's one convention, which
casts every value back to its type and names unknown or missing settings.
pipeline/planning/plan.py builds them from the config; they hold no
defaults of their own.
"""
import dataclasses
import json
import math
from typing import Optional

from core import parameters
# Which networks exist: the one registry. Re-exported: the planner and the
# trainer ask params which names are backbones.
from modules import network_registry
from modules.network_registry import BACKBONE_NAMES, MODELS, MODULE  # noqa: F401

CUSTOM_CONFIG_KEY = "trainer_params"
# When the run began (Unix seconds), set by the local runner for its components:
# the clock that --time-budget counts on. Not a setting: it would change the
# Trainer's cache key every run.
RUN_STARTED_ENV = "IMAGEPIPE_RUN_STARTED_AT"
TRANSFORM_CONFIG_KEY = "transform_params"


# The random warp's zoom (modules/augment.py), beside its rotation
# (augment_rotate): handwriting and scans come a little larger or smaller.
WARP_ZOOM = 0.1


@dataclasses.dataclass(frozen=True)
class TrainerParams:
    """Everything `run_fn` needs besides the artifacts; see settings/config.py for meanings."""

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
    # The epoch rule, applied at run time when the train split's size is known
    # only then (TFRecords): see epochs_for.
    examples_budget: int
    min_epochs: int
    max_epochs: int
    disk_headroom: int  # a decode cache file is written only if this much disk stays free
    workers: int  # >1: run_fn trains on that many local processes (modules/cluster/launcher.py)
    rendezvous_s: float  # how long a cluster's workers may take to find each other
    ps: int = 0  # >0: that many local parameter servers and a coordinator, with the workers
    # Backbones: 'imagenet', a weights file's path, or None (random init, one phase).
    weights: Optional[str] = None
    weights_sha256: Optional[str] = None  # of a local weights file: part of the cache key
    head_share: float = 1.0  # share of the epochs that train the head alone (phase 1)
    fine_tune_lr_factor: float = 1.0  # phase 2's peak learning rate, relative to phase 1's
    model_width: float = 1.0  # the built-in networks' filters times this (tuning overrides)
    # The exported model averages each image's scores with its mirror image's.
    test_flip: bool = False
    augment_rotate: float = 0.0  # degrees of a random warp (modules/augment.py); 0 is off
    # --module-file: its path (for messages), its text (run here, and on KFP and
    # Vertex, without a copy of the file) and the text's sha256.
    module_file: Optional[str] = None
    module_source: Optional[str] = None
    module_sha256: Optional[str] = None
    # Warm start (modules/training/warm_start.py): start from the base model's
    # weights when they fit, for warm_start_share of the planned epochs.
    warm_start: bool = False
    warm_start_share: float = 1.0
    # Class weights when the largest class has over this many times the smallest's
    # train images (modules/class_weights.py); 0: never.
    imbalance_ratio: float = 0.0
    # The decode cache's root: the local state folder's on a local run
    # (pipeline/local/state.py); None: beside the Trainer's outputs (a cluster).
    cache_root: Optional[str] = None
    # The best trial's values as JSON (modules/networks/space.py), set by the
    # Trainer from the Tuner's artifact; None: untuned.
    hyperparameters: Optional[str] = None
    # Epochs the learning rate holds its peak after the warmup, in every training over
    # twice as long (modules/schedule.py: held_epochs), budgeted or not; 0: none.
    hold_epochs: int = 0
    # --time-budget (modules/training/time_cap.py): the fit's cap in seconds, or None: no
    # budget. It times the held epochs (or as many of a throwaway copy) to decide.
    train_cap_s: Optional[float] = None
    # ... and the plan's estimates of the run's time before the fit and after it, of
    # which the Trainer measures the first (RUN_STARTED_ENV) and re-sizes the cap.
    before_fit_s: Optional[float] = None
    after_fit_s: Optional[float] = None

    def __post_init__(self):
        # The registry's table, read now: a network registered after import counts too.
        if self.model != MODULE and self.model not in network_registry.NETWORKS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if (self.model == MODULE) != (self.module_source is not None):
            raise ValueError("model 'module' goes with a module file, and only it")

    @property
    def fine_tunes(self) -> bool:
        """Two phases (head, then top blocks) for a backbone that starts with weights."""
        return self.model in BACKBONE_NAMES and self.weights is not None

    @property
    def tuned_values(self) -> dict:
        """The tuned values by name ({} when untuned); a module file's build_model may read
        its own tuner_fn's here."""
        return json.loads(self.hyperparameters) if self.hyperparameters else {}

    def to_custom_config(self) -> dict:
        """The `custom_config` of the Trainer component (JSON-serializable)."""
        return parameters.to_custom_config(CUSTOM_CONFIG_KEY, self)

    @classmethod
    def from_custom_config(cls, custom_config: dict) -> "TrainerParams":
        """The inverse of to_custom_config; names what is missing or unknown."""
        return parameters.from_custom_config(cls, CUSTOM_CONFIG_KEY, custom_config)


@dataclasses.dataclass(frozen=True)
class TransformParams:
    """What `preprocessing_fn` needs: the planned image shape."""

    image_size: int
    channels: int

    def to_custom_config(self) -> dict:
        """The `custom_config` of the Transform component."""
        return parameters.to_custom_config(TRANSFORM_CONFIG_KEY, self)

    @classmethod
    def from_custom_config(cls, custom_config: dict) -> "TransformParams":
        """The inverse of to_custom_config."""
        return parameters.from_custom_config(cls, TRANSFORM_CONFIG_KEY, custom_config)


def epochs_for(train_examples: int, examples_budget: int, min_epochs: int,
               max_epochs: int) -> int:
    """Epochs of the train split: about `examples_budget` examples seen in all, within
    [min_epochs, max_epochs] (the numbers: pipeline/planning/rules.py)."""
    if train_examples < 1:
        raise ValueError(f"train_examples must be >= 1, got {train_examples}")
    return min(max_epochs, max(min_epochs, math.ceil(examples_budget / train_examples)))


def head_epochs(epochs: int, head_share: float) -> int:
    """Epochs of phase 1 (head only); the rest fine-tune. All of them below 2 epochs."""
    if head_share >= 1 or epochs < 2:
        return epochs
    return min(epochs - 1, max(1, round(epochs * head_share)))


def held_epochs(epochs: int, hold_epochs: int) -> int:
    """Epochs the peak holds in a training of `epochs`: `hold_epochs` when training is over
    twice as long, else 0, so a short training (a warm start's eighth of the epochs) spends
    most of it decaying.

    Every run holds, with a time budget or without: the budget times the held epochs and
    decides its epoch count before the decay starts (modules/training/time_cap.py), so a
    budgeted run that decided k trains exactly the schedule `--epochs k --time-budget none`
    trains (docs/training.md, "A wall-time budget").
    """
    return hold_epochs if hold_epochs and epochs > 2 * hold_epochs else 0


def shortest_held(hold_epochs: int) -> int:
    """The fewest epochs whose training holds the peak (held_epochs): the least a time
    budget decides, so that `--epochs k` holds it too."""
    return 2 * hold_epochs + 1


def steps_per_epoch(train_examples: int, global_batch: int) -> int:
    """Complete batches in one pass over the train split (at least 1)."""
    return max(1, train_examples // global_batch)
