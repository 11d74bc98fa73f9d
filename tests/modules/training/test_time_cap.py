"""--time-budget in the Trainer: the epochs that fit, projected from the steady ones."""
import time

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from modules.schedule import Schedule
from modules.training.time_cap import (EpochClock, affordable_epochs, capped_epochs,
                                       first_and_steady, probe_epochs)


def test_the_first_epoch_is_counted_once_and_the_steady_ones_project_the_rest():
    # 10 s of tracing and a first pass, then 2 s an epoch: 10 + 4 x 2 = 18 <= 19 < 20.
    assert affordable_epochs(19, 10, 2, planned=40) == 5
    assert affordable_epochs(20, 10, 2, planned=40) == 6
    assert affordable_epochs(1000, 10, 2, planned=40) == 40  # never more than planned
    assert affordable_epochs(5, 10, 2, planned=40) == 1  # never none


def test_steady_is_the_mean_of_the_epochs_after_the_first():
    assert first_and_steady([2.7, 0.5, 0.54]) == (2.7, pytest.approx(0.52))
    with pytest.raises(ValueError):
        first_and_steady([2.7])


def test_the_timed_epochs_count_against_the_cap():
    def timed(epochs):
        time.sleep(0.2)  # the probe's own time
        return [3.0] + [1.0] * (epochs - 1)

    cap = capped_epochs(10.5, Schedule(40, 12, 4), 3, timed)
    # About 10.3 s left after the 0.2 s probe: 3 + 7 x 1 fit, not a ninth.
    assert (cap.epochs, cap.planned_epochs, cap.first_epoch_s, cap.steady_epoch_s) == (
        8, 40, 3.0, 1.0)
    assert cap.probe_s >= 0.2 and "8 fit of 40 planned epochs" in cap.reason


def test_a_schedule_no_longer_than_the_probe_is_not_timed():
    cap = capped_epochs(10, Schedule(3, 12, 4), 3, lambda n: pytest.fail("timed"))
    assert (cap.epochs, cap.first_epoch_s) == (3, None)


class _Slow(keras.callbacks.Callback):
    """Sleeps at each epoch's end: longer after the first, as tracing does."""

    def on_epoch_end(self, epoch, logs=None):
        time.sleep(0.6 if epoch == 0 else 0.2)


def _tiny_fit_parts():
    x = np.random.default_rng(0).normal(size=(16, 4)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, (x[:, 0] > 0).astype("int32")))
    dataset = dataset.batch(8).repeat()

    def build():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    return build, dataset


@pytest.mark.integration  # a real Keras fit: seconds
def test_a_real_fit_is_timed_per_epoch_and_allows_exactly_the_epochs_that_fit():
    build, dataset = _tiny_fit_parts()
    clock = EpochClock()
    build().fit(dataset, epochs=4, steps_per_epoch=2, validation_data=dataset,
                validation_steps=1, verbose=0, callbacks=[_Slow(), clock])
    first, steady = first_and_steady(clock.seconds)
    assert first >= 0.6 and 0.2 <= steady < 0.3, clock.seconds
    # Room for the first epoch and 2.5 steady ones: the third would not fit.
    assert affordable_epochs(first + 2.5 * 0.2, first, steady, planned=40) == 3


@pytest.mark.integration  # a real Keras fit: seconds
def test_the_probe_fits_a_throwaway_model_for_the_epochs_asked():
    build, dataset = _tiny_fit_parts()
    built = []
    seconds = probe_epochs(lambda: built.append(build()) or built[-1], dataset, dataset,
                           Schedule(40, 2, 1), 3)
    assert len(seconds) == 3 and all(s > 0 for s in seconds)
    assert len(built) == 1 and built[0].optimizer.iterations.numpy() == 6
