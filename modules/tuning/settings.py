"""The Tuner's settings: a typed dataclass carried in TFX's `custom_config`, as the Trainer's.

Light on purpose (no TensorFlow); pipeline/planning/plan.py builds them, and
settings/config.py and pipeline/planning/rules.py hold their values.
"""
import dataclasses
import math
from typing import Optional, Sequence

from core import parameters

TUNING_CONFIG_KEY = "tuning_params"


@dataclasses.dataclass(frozen=True)
class TuningParams:
    """How much a search may spend, and on what."""

    trials: int  # at most this many trials
    minutes: float  # no trial starts after this; the one running stops at it
    epoch_share: float  # a trial runs this share of the epochs the Trainer would
    holdout_share: float  # of the train images sampled, scored on (never the eval split)
    max_examples: int  # train images sampled for the trials
    max_bytes: int  # ... and their decoded size, held in memory for every trial
    initial_points: int  # random trials before the Bayesian model proposes

    def to_custom_config(self) -> dict:
        return parameters.to_custom_config(TUNING_CONFIG_KEY, self)

    @classmethod
    def from_custom_config(cls, custom_config: dict) -> "TuningParams":
        return parameters.from_custom_config(cls, TUNING_CONFIG_KEY, custom_config)


def sample_size(train_examples: int, image_shape: Sequence[int], settings: TuningParams) -> int:
    """How many train images the trials use: all, or as many as the caps allow."""
    per_image = 4 * math.prod(image_shape)  # float32 pixels
    return max(2, min(train_examples, settings.max_examples, settings.max_bytes // per_image))


def holdout_size(sampled: int, holdout_share: float) -> int:
    """How many of the `sampled` images score the trials: the share, at least one, and at
    least one left to train on."""
    return min(sampled - 1, max(1, round(sampled * holdout_share)))


def planned_holdout(train_examples: Optional[int], image_shape: Sequence[int],
                    settings: TuningParams) -> Optional[int]:
    """The holdout a search will score its trials on; None where the train split's size
    is not known before ingestion (TFRecords)."""
    if not train_examples:
        return None
    return holdout_size(sample_size(train_examples, image_shape, settings),
                        settings.holdout_share)
