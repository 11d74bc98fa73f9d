"""The Trainer's side of --time-budget: how many epochs fit in the training cap.

The plan sizes the cap (pipeline/planning/time_budget.py) and hands it over as
TrainerParams.train_cap_s; run_fn asks here, twice: `cap_epochs` before the fit, where a
throwaway copy must be timed (several phases or workers), and `fit_cap`, the callback that
decides during the fit of one phase on one worker. The timing itself is time_cap.py's.
"""
import dataclasses
import os
import tempfile

import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs

from modules.params import TrainerParams, held_epochs
from modules.training.callbacks import backup_callback, backup_dir, tensorboard_freq
from modules.training.time_cap import (FitTimeCap, cap_from_run_clock, capped_epochs,
                                       probe_epochs, untimed_cap)


def _one_fit(params: TrainerParams, dist) -> bool:
    """One phase on one worker: where --time-budget's epochs are decided during the fit
    (FitTimeCap); elsewhere a throwaway copy is timed first (cap_epochs)."""
    return not params.fine_tunes and dist.workers == 1 and not dist.coordinated


def fit_cap(params: TrainerParams, dist, schedule, phase, fn_args: FnArgs):
    """The callback that caps this fit in --time-budget's training cap, or None: no
    budget, decided before the fit, or too few epochs planned to time first.

    Every fit of one phase on one worker reads its decay's end from a variable, with a
    budget or without: the same graph either way, so that `--epochs k --time-budget none`
    repeats a budgeted run that decided k to the last bit.
    """
    if not _one_fit(params, dist):
        return None
    with dist.strategy.scope():
        phase.learning_rate.make_adjustable()
    probe = params.hold_epochs
    if params.train_cap_s is None or not held_epochs(schedule.epochs, probe):
        return None
    cap, took, sized = cap_from_run_clock(params)
    print(f"          time budget: {sized or f'{cap:.0f} s to train'}; the first {probe} "
          "epochs decide how many fit", flush=True)
    return FitTimeCap(cap, schedule.epochs, schedule.steps_per_epoch, phase.learning_rate,
                      probe, backup_dir(fn_args) + "-time-cap.json", (took, sized))


def cap_epochs(params: TrainerParams, dist, schedule, build, train, evaluation, datasets):
    """(fit_stats' `time_cap`, the schedule of the epochs that fit in --time-budget's
    training cap, and the datasets to train them on), timed on a throwaway model where
    the fit cannot decide (_one_fit); with no budget, (None, and what it was given)."""
    if params.train_cap_s is None:
        return None, schedule, train, evaluation
    if _one_fit(params, dist):
        planned = schedule.epochs
        too_few = None if held_epochs(planned, params.hold_epochs) else (
            dataclasses.asdict(untimed_cap(params.train_cap_s, planned)))
        return too_few, schedule, train, evaluation
    cap_s, took, sized = cap_from_run_clock(params)
    print(f"          time budget: {sized or f'{cap_s:.0f} s to train'}; timing "
          f"{params.hold_epochs} epochs of a throwaway copy", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        per_epoch = [backup_callback(os.path.join(scratch, "backup"), dist),
                     keras.callbacks.TensorBoard(scratch, update_freq=tensorboard_freq(
                         params, dist))]
        cap = capped_epochs(cap_s, schedule, params.hold_epochs,
                            lambda n: probe_epochs(lambda: build(schedule), train, evaluation,
                                                   schedule, n, per_epoch))
    cap = dataclasses.replace(cap, before_fit_s=took, sized=sized)
    print(f"          time budget: {cap.reason}", flush=True)
    if cap.first_epoch_s is None:  # nothing was timed: nothing to redo
        return dataclasses.asdict(cap), schedule, train, evaluation
    # From here on exactly what `--epochs N` runs: the timing drew random numbers
    # and advanced the datasets' shuffles.
    keras.utils.set_random_seed(params.seed)
    train, evaluation, _ = datasets()
    return (dataclasses.asdict(cap), dataclasses.replace(schedule, epochs=cap.epochs),
            train, evaluation)
