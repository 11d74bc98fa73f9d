"""Whether a training repeats, and with which flags: epochs_decided, repeat_with, interrupted."""
import dataclasses

import numpy as np
import pytest
import tf_keras as keras

from modules.training.repeat import (first_interruption, fit_interruption, repeat_flags,
                                     repeat_record)
from tests.support.tuning_params import PARAMS


def test_the_flags_pin_the_decided_epochs_and_turn_the_budget_off():
    assert repeat_flags(PARAMS, 13) == ["--epochs", "13", "--time-budget", "none"]
    # A run that trained from scratch with warm start on: its repeat would start from the
    # model it blessed.
    warm_on = dataclasses.replace(PARAMS, warm_start=True)
    assert repeat_flags(warm_on, 13)[-2:] == ["--warm-start", "off"]
    steps = dataclasses.replace(PARAMS, train_steps=30)
    assert repeat_flags(steps, 10) == ["--train-steps", "30", "--time-budget", "none"]


def test_only_a_run_that_ran_its_decided_epochs_from_scratch_is_repeatable():
    done = repeat_record(PARAMS, 13, None, started_from_state=False)
    assert done == {"epochs_decided": 13, "interrupted": None,
                    "repeat_with": ["--epochs", "13", "--time-budget", "none"]}
    cut = {"epoch": 9, "reason": "the host slowed down"}
    assert repeat_record(PARAMS, 13, cut, False) == {
        "epochs_decided": 13, "repeat_with": None, "interrupted": cut}
    assert repeat_record(PARAMS, 13, None, started_from_state=True)["repeat_with"] is None
    # Stopped before the budget could decide: nothing to repeat with.
    assert repeat_record(PARAMS, None, None, False)["repeat_with"] is None


def test_the_earliest_interruption_is_the_one_recorded():
    resumed, cut = {"epoch": 4, "reason": "resumed"}, {"epoch": 9, "reason": "slowed"}
    assert first_interruption(cut, None, resumed) == resumed
    assert first_interruption(None, None) is None


class _Interrupt(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:
            raise KeyboardInterrupt  # as a preemption would end the process


def _fit(callbacks, epochs=4, seed=0):
    """A tiny model's fit on random labels, which it memorizes: validation gets worse."""
    rng = np.random.default_rng(seed)
    x, xv = (rng.normal(size=(32, 8)).astype("float32") for _ in range(2))
    y, yv = (rng.integers(0, 2, 32) for _ in range(2))
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(64, "relu"),
                              keras.layers.Dense(2)])
    model.compile(keras.optimizers.Adam(1e-2),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=8, epochs=epochs, validation_data=(xv, yv), verbose=0,
              callbacks=callbacks)
    return model


@pytest.mark.integration  # real Keras fits: seconds
def test_a_fit_resumed_from_its_backup_is_an_interruption(tmp_path):
    backup = str(tmp_path / "backup")
    assert fit_interruption(_fit([keras.callbacks.BackupAndRestore(backup)]), 0, []) is None
    with pytest.raises(KeyboardInterrupt):
        _fit([keras.callbacks.BackupAndRestore(backup), _Interrupt()])
    resumed = fit_interruption(_fit([keras.callbacks.BackupAndRestore(backup)]), 0, [])
    assert resumed["epoch"] == 2 and resumed["reason"].startswith(
        "resumed from a backup after epoch 2")


@pytest.mark.integration  # a real Keras fit: seconds
def test_early_stopping_is_an_interruption_and_names_the_kept_epoch():
    stopper = keras.callbacks.EarlyStopping(patience=2, restore_best_weights=True)
    record = fit_interruption(_fit([stopper], epochs=60), 0, [stopper])
    assert record["epoch"] == stopper.stopped_epoch + 1 < 60
    assert record["reason"] == (f"early stopping: val_loss did not improve for 2 epochs; "
                                f"the weights of epoch {stopper.best_epoch + 1} were kept")
    # Run to the end, early stopping on or not, a fit is not interrupted.
    patient = keras.callbacks.EarlyStopping(patience=100)
    assert fit_interruption(_fit([patient], epochs=3), 0, [patient]) is None
