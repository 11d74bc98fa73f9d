"""--time-budget in the Trainer: how many epochs fit in the plan's training cap.

The epochs are decided before training, not by stopping it: the learning
rate warms up and decays over the planned epochs, so a run stopped at epoch
k is not the run `--epochs k` trains. A throwaway copy of the model is timed
for a few epochs instead (the first pays for tracing and filling the input
pipeline; the later ones are the steady state), and the caller then trains
the epochs that fit, from the same seed, as `--epochs k` would.
"""
import dataclasses
import math
import time
from typing import Callable, List, Optional, Sequence, Tuple

import tf_keras as keras

from modules.schedule import Schedule


class EpochClock(keras.callbacks.Callback):
    """Each epoch's wall seconds, validation included."""

    def __init__(self):
        super().__init__()
        self.seconds: List[float] = []
        self._start = 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self._start)


def first_and_steady(seconds: List[float]) -> Tuple[float, float]:
    """(the first epoch's seconds, the mean of the later ones'); needs two epochs."""
    if len(seconds) < 2:
        raise ValueError(f"needs at least 2 timed epochs, got {len(seconds)}")
    return seconds[0], sum(seconds[1:]) / len(seconds[1:])


def affordable_epochs(cap_s: float, first_s: float, steady_s: float, planned: int) -> int:
    """The most epochs, at most `planned` and at least 1, whose projected time (the
    first epoch, then steady ones) is within `cap_s`."""
    if cap_s < first_s:
        return 1
    return max(1, min(planned, 1 + math.floor((cap_s - first_s) / max(steady_s, 1e-9))))


@dataclasses.dataclass(frozen=True)
class TimeCap:
    """What the cap decided, for fit_stats.json (summary.json's `training.time_cap`)."""

    cap_s: float
    probe_s: float
    first_epoch_s: Optional[float]
    steady_epoch_s: Optional[float]
    planned_epochs: int
    epochs: int
    reason: str


def probe_epochs(build: Callable[[], keras.Model], train, evaluation, schedule: Schedule,
                 epochs: int, callbacks: Sequence[keras.callbacks.Callback] = ()
                 ) -> List[float]:
    """Seconds of each of `epochs` epochs of a model from `build`, which is then dropped.

    `callbacks`: ones that cost time every epoch in the real fit (its backups and
    TensorBoard, writing elsewhere), so the steady epochs are timed with them.
    """
    clock = EpochClock()
    build().fit(train, epochs=epochs, steps_per_epoch=schedule.steps_per_epoch,
                validation_data=evaluation, validation_steps=schedule.validation_steps,
                verbose=0, callbacks=[*callbacks, clock])
    return clock.seconds


def capped_epochs(cap_s: float, schedule: Schedule, probe: int,
                  timed: Callable[[int], List[float]]) -> TimeCap:
    """How many of `schedule`'s epochs fit in `cap_s`, `timed(probe)` epochs timed first
    (their time counts against the cap). A schedule of no more epochs than the probe
    would time trains in full."""
    planned = schedule.epochs
    if planned <= probe:
        return TimeCap(cap_s, 0.0, None, None, planned, planned,
                       f"{planned} epochs planned: too few to time first; all run")
    started = time.perf_counter()
    first, steady = first_and_steady(timed(probe))
    probe_s = time.perf_counter() - started
    left = cap_s - probe_s
    epochs = affordable_epochs(left, first, steady, planned)
    fits = "all fit" if epochs == planned else f"{epochs} fit"
    return TimeCap(cap_s, probe_s, first, steady, planned, epochs,
                   f"{fits} of {planned} planned epochs in {left:.1f} s: the first "
                   f"{first:.2f} s, then {steady:.2f} s each (timed on {probe} epochs, "
                   f"{probe_s:.1f} s, of a throwaway copy)")
