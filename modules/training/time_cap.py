"""--time-budget in the Trainer: how many epochs fit in the plan's training cap.

A run stopped at epoch k is not the run `--epochs k` trains unless the
learning rate agrees: it decays over the planned epochs. So the first few
epochs are timed (the first pays for tracing and filling the input pipeline;
the later ones are the steady state) while the rate holds its peak
(modules/schedule.py: `hold_steps`), and the epochs that fit are decided
then: the decay is set to end there, and training stops there, as
`--epochs k` would have trained from the start (FitTimeCap). That costs
nothing when everything fits.

Where epochs cannot be decided during the fit (a backbone's two phases; several
workers, which must all stop at the same epoch) a throwaway copy of the model
is timed first instead (probe_epochs, capped_epochs), and the caller trains
the epochs that fit, from the same seed.
"""
import dataclasses
import json
import math
import os
import time
from typing import Callable, List, Optional, Sequence, Tuple

import tf_keras as keras

from components.common.storage import files
from modules.schedule import Schedule, WarmupCosine


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


class FitTimeCap(keras.callbacks.Callback):
    """Decides, after `decide_after` epochs of this fit, how many of `planned` fit in
    `cap_s`; then ends `learning_rate`'s decay there and stops the fit there.

    `learning_rate` must hold its peak through those epochs and be adjustable
    (WarmupCosine.make_adjustable). The decision is kept in `state_path`, so a
    fit resumed from its backup after it keeps it; the file goes when the fit ends.
    `result` is the TimeCap once decided.
    """

    def __init__(self, cap_s: float, planned: int, steps_per_epoch: int,
                 learning_rate: WarmupCosine, decide_after: int, state_path: str):
        super().__init__()
        self.cap_s, self.planned, self.steps_per_epoch = cap_s, planned, steps_per_epoch
        self.learning_rate, self.decide_after = learning_rate, decide_after
        self.state_path = state_path
        self.result: Optional[TimeCap] = None
        self._clock = EpochClock()

    def on_train_begin(self, logs=None):
        if files.exists(self.state_path):  # on disk or in a bucket, as the backups are
            self._apply(TimeCap(**json.loads(files.read_text(self.state_path))))

    def on_epoch_begin(self, epoch, logs=None):
        self._clock.on_epoch_begin(epoch)

    def on_epoch_end(self, epoch, logs=None):
        self._clock.on_epoch_end(epoch)
        if self.result is None and len(self._clock.seconds) == self.decide_after:
            self._decide()
        if self.result is not None and epoch + 1 >= self.result.epochs:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        files.remove(self.state_path)

    def _decide(self) -> None:
        first, steady = first_and_steady(self._clock.seconds)
        epochs = max(self.decide_after,
                     affordable_epochs(self.cap_s, first, steady, self.planned))
        fits = "all fit" if epochs == self.planned else f"{epochs} fit"
        cap = TimeCap(self.cap_s, 0.0, first, steady, self.planned, epochs,
                      f"{fits} of {self.planned} planned epochs in {self.cap_s:.0f} s: the "
                      f"first {first:.2f} s, then {steady:.2f} s each (timed on this "
                      f"training's first {self.decide_after} epochs)")
        self._apply(cap)
        files.makedirs(os.path.dirname(self.state_path))
        files.write_text(self.state_path, json.dumps(dataclasses.asdict(cap)))
        print(f"          time budget: {cap.reason}", flush=True)

    def _apply(self, cap: "TimeCap") -> None:
        self.result = cap
        if cap.epochs < self.planned:
            self.learning_rate.set_total_steps(cap.epochs * self.steps_per_epoch)
