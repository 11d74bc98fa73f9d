"""How long and how fast to train: epochs and steps from the split, and the LR schedule."""
import dataclasses
import math
from typing import List, Optional

import numpy as np
import tensorflow as tf
import tf_keras as keras

from modules.params import (TrainerParams, epochs_for, head_epochs, held_epochs,
                            steps_per_epoch)


def epoch_plan(train_steps: int, max_epochs: int = 10):
    """(epochs, steps_per_epoch) whose product is exactly `train_steps`.

    For an exact step count (--train-steps): Keras reports and validates once
    per epoch, and the most epochs that divide the steps evenly (up to
    `max_epochs`) gives progress without training fewer steps than asked.
    """
    if train_steps < 1:
        raise ValueError(f"train_steps must be >= 1, got {train_steps}")
    epochs = max(d for d in range(1, max_epochs + 1) if train_steps % d == 0)
    return epochs, train_steps // epochs


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Epochs, steps per epoch and validation steps of one training."""

    epochs: int
    steps_per_epoch: int
    validation_steps: int

    @property
    def total_steps(self) -> int:
        return self.epochs * self.steps_per_epoch


def training_schedule(params: TrainerParams, train_examples: int, eval_examples: int,
                      global_batch: int) -> Schedule:
    """The schedule for these params and the actual split sizes."""
    if params.train_steps:
        epochs, steps = epoch_plan(params.train_steps)
    else:
        epochs = params.epochs or epochs_for(train_examples, params.examples_budget,
                                                 params.min_epochs, params.max_epochs)
        steps = steps_per_epoch(train_examples, global_batch)
    validation = params.eval_steps or max(1, math.ceil(eval_examples / global_batch))
    return Schedule(epochs, steps, validation)


class WarmupCosine(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup to `peak` over `warmup_steps`, then cosine decay to 0 at `total_steps`.

    Warmup keeps batch norm and Adam's moment estimates from being thrown by
    the first, large updates; the cosine tail settles the weights. With
    `hold_steps`, the rate stays at its peak until then and decays after: the
    steps before it do not depend on `total_steps`, so a time cap can set it
    there (make_adjustable, set_total_steps) and train exactly what a run
    planned with that total trains.
    """

    def __init__(self, peak: float, warmup_steps: int, total_steps: int, hold_steps: int = 0):
        super().__init__()
        self.peak, self.warmup_steps, self.total_steps = peak, warmup_steps, total_steps
        self.hold_steps = hold_steps
        self._total = None  # a variable once adjustable

    def make_adjustable(self) -> None:
        """Reads the total from a variable from now on; call it under the strategy's scope,
        before the optimizer traces, so the variable lives where the replicas read it."""
        if self._total is None:
            self._total = tf.Variable(float(self.total_steps), trainable=False,
                                      name="lr_total_steps")

    def set_total_steps(self, total_steps: int) -> None:
        """A new end of the decay, taking effect at the next step without re-tracing."""
        if self._total is None:
            raise ValueError("set_total_steps needs make_adjustable() first")
        self.total_steps = total_steps
        self._total.assign(float(total_steps))

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        warmup = max(1, self.warmup_steps)
        decay_from = float(max(warmup, self.hold_steps))
        total = self._total if self._total is not None else float(self.total_steps)
        progress = tf.minimum((step - decay_from) / tf.maximum(1.0, total - decay_from), 1.0)
        cosine = 0.5 * self.peak * (1.0 + tf.cos(np.pi * tf.maximum(progress, 0.0)))
        return tf.where(step < warmup, self.peak * (step + 1) / warmup, cosine)

    def get_config(self) -> dict:
        return {"peak": self.peak, "warmup_steps": self.warmup_steps,
                "total_steps": self.total_steps, "hold_steps": self.hold_steps}


def learning_rate(params: TrainerParams, schedule: Schedule,
                  warmup_steps: Optional[int] = None, peak: Optional[float] = None,
                  hold_epochs: int = 0) -> WarmupCosine:
    """The schedule for `params`: warmup of `params.warmup_epochs`; the peak held for
    `hold_epochs` epochs when training is longer (held_epochs).

    The warmup is at most a tenth of training; a held one ends within the hold instead,
    so that the held epochs do not depend on how many follow them.
    """
    hold = held_epochs(schedule.epochs, hold_epochs) * schedule.steps_per_epoch
    if warmup_steps is None:
        limit = hold or schedule.total_steps // 10
        warmup_steps = min(round(params.warmup_epochs * schedule.steps_per_epoch), limit)
    return WarmupCosine(peak or params.learning_rate, warmup_steps, schedule.total_steps, hold)


@dataclasses.dataclass(frozen=True)
class Phase:
    """One model.fit call: epochs [first_epoch, end_epoch) at its own learning rate."""

    name: str  # "train"; or "head" (backbone frozen), then "fine-tune" (top blocks open)
    first_epoch: int
    end_epoch: int
    learning_rate: WarmupCosine


def phases(params: TrainerParams, schedule: Schedule) -> List[Phase]:
    """One phase; or, for a pretrained backbone, the head alone and then fine-tuning.

    Each phase warms up and decays on its own: phase 2 starts a new optimizer
    on newly trainable weights, at `fine_tune_lr_factor` of the peak.
    """
    if not params.fine_tunes:
        return [Phase("train", 0, schedule.epochs, learning_rate(
            params, schedule, hold_epochs=params.hold_epochs))]
    head = head_epochs(schedule.epochs, params.head_share)
    part = lambda epochs: dataclasses.replace(schedule, epochs=epochs)  # noqa: E731
    result = [Phase("head", 0, head, learning_rate(params, part(head)))]
    if head < schedule.epochs:
        rest = part(schedule.epochs - head)
        result.append(Phase("fine-tune", head, schedule.epochs, learning_rate(
            params, rest, peak=params.learning_rate * params.fine_tune_lr_factor)))
    return result


# Without early stopping (which reads val_loss every epoch) a phase validates
# about this many times: on a small set the eval split is a large share of the
# data, and validating every epoch was a large share of the fit (docs/training.md).
VALIDATIONS = 10


def validation_epochs(params: TrainerParams, phase: Phase) -> List[int]:
    """Keras' validation_freq for `phase` (1-based epochs): every epoch under early
    stopping; else the first `hold_epochs` (a time budget times them, so its steady
    epochs include validation, as most epochs do), every k-th for about VALIDATIONS in
    all, and the last."""
    epochs = range(phase.first_epoch + 1, phase.end_epoch + 1)
    if params.early_stopping_patience:
        return list(epochs)
    every = max(1, len(epochs) // VALIDATIONS)
    timed = params.hold_epochs
    return [e for e in epochs if (e - phase.first_epoch) <= timed
            or (e - phase.first_epoch) % every == 0 or e == phase.end_epoch]
