"""The Tuner's settings: a typed dataclass carried in TFX's `custom_config`, as the Trainer's.

Light on purpose (no TensorFlow); pipeline/planning/plan.py builds them, and
pipeline/config.py and pipeline/planning/rules.py hold their values.
"""
import dataclasses

from components.common import parameters

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
