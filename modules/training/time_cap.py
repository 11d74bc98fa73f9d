"""--time-budget in the Trainer: how many epochs fit in the plan's training cap.

A run stopped at epoch k is not the run `--epochs k` trains unless the
learning rate agrees: it decays over the planned epochs. Every run holds the
rate's peak for its first few epochs, budgeted or not (modules/schedule.py:
held_epochs); a budget times them (the first pays for tracing and filling the
input pipeline; the later ones are the steady state) and decides the epochs
that fit before the decay starts: the decay is set to end there, and training
stops there, as `--epochs k --time-budget none` trains from the start
(FitTimeCap). That costs nothing when everything fits.

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
from statistics import mean
from typing import Callable, List, Optional, Sequence, Tuple

import tf_keras as keras

from core.storage import files
from modules.params import RUN_STARTED_ENV, TrainerParams, shortest_held
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


def first_and_steady(seconds: List[float], fastest: bool = True) -> Tuple[float, float]:
    """(the first epoch's seconds, the fastest of the later ones', or their mean if not
    `fastest`); needs two epochs.

    The fastest, where FitTimeCap decides: other work on the host only slows an
    epoch, so of the two or three timed the slower ones carry more of it than the
    rest of the fit averages, and the mean gave away epochs that would have fit
    (docs/training.md). An estimate too low is what its recheck corrects, where later
    epochs run much slower than the timed ones' mean. A throwaway timing has no
    recheck after it, so it takes the mean.
    """
    if len(seconds) < 2:
        raise ValueError(f"needs at least 2 timed epochs, got {len(seconds)}")
    later = seconds[1:]
    return seconds[0], min(later) if fastest else mean(later)


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
    # What the run took before the fit, on its own clock (measured_cap); None: the
    # plan's cap, unmeasured.
    before_fit_s: Optional[float] = None
    sized: Optional[str] = None  # how the cap was sized
    # The mean of the timed later epochs: what the recheck compares later epochs with, so
    # that its slack is over the timed pace, not over the fastest timed epoch.
    timed_mean_s: Optional[float] = None
    # The epochs decided before the decay began (`epochs` until a recheck ends it sooner);
    # None: the fit ended before it could decide.
    epochs_decided: Optional[int] = None


def cap_from_run_clock(params: TrainerParams) -> Tuple[float, Optional[float], Optional[str]]:
    """(the fit's cap in seconds, what the run took to reach the fit, how the cap was
    sized): measured_cap where the runner says when the run began (RUN_STARTED_ENV),
    else the plan's cap as it was (None, None)."""
    started = os.environ.get(RUN_STARTED_ENV)
    if not started or params.before_fit_s is None or params.after_fit_s is None:
        return params.train_cap_s, None, None
    took = max(0.0, time.time() - float(started))
    cap, sized = measured_cap(params.train_cap_s, params.before_fit_s, params.after_fit_s,
                              took)
    return cap, took, sized


# measured_cap scales the plan's estimate of the stages after the fit by how much
# slower than estimated the stages before it ran, within these bounds: never below
# the estimate (a fast start does not promise a fast finish), and a host more than
# 3x slower than the plan's reference is an outlier no estimate covers.
PACE_BOUNDS = (1.0, 3.0)


def measured_cap(planned_cap_s: float, before_fit_s: float, after_fit_s: float,
                 took_s: float) -> Tuple[float, str]:
    """(the fit's cap in seconds, how it was sized) once the run has taken `took_s` to
    reach the fit: the budget (the plan's cap plus its estimates of the stages before
    and after the fit) less `took_s` and the stages after, whose estimate grows as much
    as the stages before ran slower than theirs (within PACE_BOUNDS)."""
    budget = planned_cap_s + before_fit_s + after_fit_s
    low, high = PACE_BOUNDS
    pace = min(max(took_s / before_fit_s if before_fit_s > 0 else low, low), high)
    after = after_fit_s * pace
    cap = max(0.0, budget - took_s - after)
    return cap, (f"{cap:.0f} s to train: the {budget:.0f} s budget less the {took_s:.0f} s "
                 f"the run took to reach the fit (estimated {before_fit_s:.0f} s) and about "
                 f"{after:.0f} s for the stages after it (estimated {after_fit_s:.0f} s, "
                 f"x{pace:.2f})")


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
        return untimed_cap(cap_s, planned)
    started = time.perf_counter()
    first, steady = first_and_steady(timed(probe), fastest=False)  # no recheck follows
    probe_s = time.perf_counter() - started
    left = cap_s - probe_s
    epochs = affordable_epochs(left, first, steady, planned)
    fits = "all fit" if epochs == planned else f"{epochs} fit"
    return TimeCap(cap_s, probe_s, first, steady, planned, epochs,
                   f"{fits} of {planned} planned epochs in {left:.1f} s: the first "
                   f"{first:.2f} s, then {steady:.2f} s each (timed on {probe} epochs, "
                   f"{probe_s:.1f} s, of a throwaway copy)", epochs_decided=epochs)


def untimed_cap(cap_s: float, planned: int) -> TimeCap:
    """The record of a training too short to time first: every planned epoch runs."""
    return TimeCap(cap_s, 0.0, None, None, planned, planned,
                   f"{planned} epochs planned: too few to time first; all run",
                   epochs_decided=planned)


# After the decision, FitTimeCap rechecks every epoch: where the last RECHECK_EPOCHS
# epochs ran over RECHECK_SLACK slower than the timed ones, and the rest at that pace
# would overrun the cap, the decay ends sooner. The slack keeps ordinary jitter from
# changing a run that `--epochs k` must repeat; a loaded host slows by far more
# (docs/training.md has both, measured).
RECHECK_EPOCHS = 3
RECHECK_SLACK = 0.15


class FitTimeCap(keras.callbacks.Callback):
    """Decides, after `decide_after` epochs of this fit, how many of `planned` fit in
    `cap_s` (at least shortest_held: `--epochs k` holds the peak as this fit did); then
    ends `learning_rate`'s decay there and stops the fit there.

    `learning_rate` must hold its peak through those epochs and be adjustable
    (WarmupCosine.make_adjustable). Epochs that then run much slower end the
    decay sooner (_recheck), which `interrupted` records ({"epoch", "reason"}). The
    decision is kept in `state_path`, so a fit resumed from its backup after it keeps
    it; the file goes when the fit ends. `result` is the TimeCap once decided.
    """

    def __init__(self, cap_s: float, planned: int, steps_per_epoch: int,
                 learning_rate: WarmupCosine, decide_after: int, state_path: str,
                 sized: Tuple[Optional[float], Optional[str]] = (None, None)):
        super().__init__()
        self.cap_s, self.planned, self.steps_per_epoch = cap_s, planned, steps_per_epoch
        self.sized = sized  # TimeCap's before_fit_s and sized: cap_from_run_clock's
        self.learning_rate, self.decide_after = learning_rate, decide_after
        self.state_path = state_path
        self.result: Optional[TimeCap] = None
        self.interrupted: Optional[dict] = None
        self._clock = EpochClock()
        # Rechecked only where this fit timed its epochs: a resumed one's clock is partial.
        self._decided_here = False

    def on_train_begin(self, logs=None):
        if files.exists(self.state_path):  # on disk or in a bucket, as the backups are
            self._apply(TimeCap(**json.loads(files.read_text(self.state_path))))

    def on_epoch_begin(self, epoch, logs=None):
        self._clock.on_epoch_begin(epoch)

    def on_epoch_end(self, epoch, logs=None):
        self._clock.on_epoch_end(epoch)
        ran = len(self._clock.seconds)
        if self.result is None and ran == self.decide_after:
            self._decide()
        elif self._decided_here and ran > self.decide_after:
            self._recheck(epoch + 1)
        if self.result is not None and epoch + 1 >= self.result.epochs:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        files.remove(self.state_path)
        ran = len(self._clock.seconds)
        if self.result is None and ran:  # early stopping ended it before the decision
            self.result = TimeCap(self.cap_s, 0.0, None, None, self.planned, ran,
                                  f"the fit ended after {ran} of {self.planned} planned "
                                  f"epochs, before the {self.decide_after} timed ones could "
                                  "decide", *self.sized)

    def _decide(self) -> None:
        first, steady = first_and_steady(self._clock.seconds)
        epochs = max(shortest_held(self.decide_after),
                     affordable_epochs(self.cap_s, first, steady, self.planned))
        fits = "all fit" if epochs == self.planned else f"{epochs} fit"
        cap = TimeCap(self.cap_s, 0.0, first, steady, self.planned, epochs,
                      f"{fits} of {self.planned} planned epochs in {self.cap_s:.0f} s: the "
                      f"first {first:.2f} s, then {steady:.2f} s each (timed on this "
                      f"training's first {self.decide_after} epochs)", *self.sized,
                      timed_mean_s=first_and_steady(self._clock.seconds, fastest=False)[1],
                      epochs_decided=epochs)
        self._decided_here = True
        self._keep(cap)

    def _recheck(self, done: int) -> None:
        """Ends the decay sooner where the last epochs ran over RECHECK_SLACK slower than the
        timed ones and the rest would overrun the cap (a host loaded after the timing), but
        never before shortest_held, the least the decision trains whatever the cap. Then the
        run no longer repeats `--epochs k` (`interrupted`); a steady host never gets here."""
        elapsed, recent = sum(self._clock.seconds), mean(self._clock.seconds[-RECHECK_EPOCHS:])
        left = self.result.epochs - done
        timed = self.result.timed_mean_s or self.result.steady_epoch_s
        if (left <= 0 or recent <= timed * (1 + RECHECK_SLACK)
                or elapsed + left * recent <= self.cap_s):
            return
        epochs = max(shortest_held(self.decide_after),
                     done + math.floor(max(0.0, self.cap_s - elapsed) / recent))
        if epochs >= self.result.epochs:  # the least it trains already
            return
        change = f"after epoch {done} they ran at {recent:.2f} s, so {epochs} fit"
        first_cut = (self.interrupted or {}).get("epoch", done)
        self.interrupted = {"epoch": first_cut, "reason": (
            f"the host slowed down: the decay was set to end at epoch {epochs} instead of "
            f"{self.result.epochs_decided} (epochs ran at {recent:.2f} s, timed at "
            f"{timed:.2f} s)")}
        self._keep(dataclasses.replace(self.result, epochs=epochs,
                                       reason=f"{self.result.reason}; {change}"), change)

    def _keep(self, cap: "TimeCap", change: Optional[str] = None) -> None:
        """Applies `cap`, keeps it beside the backup, and says what changed."""
        self._apply(cap)
        files.makedirs(os.path.dirname(self.state_path))
        files.write_text(self.state_path, json.dumps(dataclasses.asdict(cap)))
        print(f"          time budget: {change or cap.reason}", flush=True)

    def _apply(self, cap: "TimeCap") -> None:
        self.result = cap
        if cap.epochs < self.planned:
            self.learning_rate.set_total_steps(cap.epochs * self.steps_per_epoch)
