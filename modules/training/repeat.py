"""Whether a training can be repeated, and how: fit_stats' `epochs_decided`, `repeat_with`
and `interrupted` (summary.json's `training`; docs/data.md has the contract).

A training that ran its decided epochs to the end, from scratch and with the plan's or
the flags' own values, trains the same again, to the last bit on the same host, from its
command line plus `repeat_with`: the epoch count it decided, no time budget (which could
decide otherwise on a slower host), and no warm start (which would start from the model
this run blessed). One that something ended early is not called repeatable.
"""
from typing import List, Optional

import tf_keras as keras

from modules.params import TrainerParams


def fit_interruption(model: keras.Model, first_epoch: int, callbacks) -> Optional[dict]:
    """What cut short the fit `model` just ran from `first_epoch` (Keras counts epochs
    across phases), besides its own schedule: a resume from a backup, or early stopping
    among `callbacks`; None if nothing did."""
    ran = model.history.epoch
    if ran and ran[0] > first_epoch:  # BackupAndRestore restored a backup of an earlier fit
        return {"epoch": ran[0], "reason": (
            f"resumed from a backup after epoch {ran[0]} (the training had been stopped, "
            "a preemption say): the epochs after it drew other data orders and random "
            "numbers than an uninterrupted run")}
    stopper = next((c for c in callbacks if isinstance(c, keras.callbacks.EarlyStopping)),
                   None)
    if stopper is not None and stopper.stopped_epoch:
        return {"epoch": stopper.stopped_epoch + 1, "reason": (
            f"early stopping: val_loss did not improve for {stopper.patience} epochs; the "
            f"weights of epoch {stopper.best_epoch + 1} were kept")}
    return None


def first_interruption(*records: Optional[dict]) -> Optional[dict]:
    """The earliest of the interruption `records` (fit_interruption's, FitTimeCap's)."""
    return min((r for r in records if r), key=lambda r: r["epoch"], default=None)


def repeat_flags(params: TrainerParams, epochs: int) -> List[str]:
    """The flags that, added to the run's own command line, train it again: its length,
    no time budget, and from scratch where warm start was on."""
    length = (["--train-steps", str(params.train_steps)] if params.train_steps
              else ["--epochs", str(epochs)])
    return [*length, "--time-budget", "none"] + (["--warm-start", "off"] if params.warm_start
                                                 else [])


def repeat_record(params: TrainerParams, epochs_decided: Optional[int],
                  interrupted: Optional[dict], started_from_state: bool) -> dict:
    """fit_stats' `epochs_decided` (the epochs the decay was set to end at before it
    began), `repeat_with` (repeat_flags; None where `interrupted`, or where the run
    `started_from_state` no flag gives: a warm start's weights, --tune's search) and
    `interrupted` ({"epoch", "reason"} or None)."""
    repeatable = not interrupted and not started_from_state and epochs_decided is not None
    return {"epochs_decided": epochs_decided,
            "repeat_with": repeat_flags(params, epochs_decided) if repeatable else None,
            "interrupted": interrupted}
