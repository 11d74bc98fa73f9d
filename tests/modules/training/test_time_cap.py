"""--time-budget in the Trainer: the epochs that fit, projected from the steady ones."""
import dataclasses
import json
import time
import types

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from modules.params import RUN_STARTED_ENV
from modules.schedule import Schedule, WarmupCosine
from modules.training.time_cap import (PACE_BOUNDS, EpochClock, FitTimeCap, affordable_epochs,
                                       cap_from_run_clock, capped_epochs, first_and_steady,
                                       measured_cap, probe_epochs)
from tests.support.tuning_params import PARAMS


def test_the_first_epoch_is_counted_once_and_the_steady_ones_project_the_rest():
    # 10 s of tracing and a first pass, then 2 s an epoch: 10 + 4 x 2 = 18 <= 19 < 20.
    assert affordable_epochs(19, 10, 2, planned=40) == 5
    assert affordable_epochs(20, 10, 2, planned=40) == 6
    assert affordable_epochs(1000, 10, 2, planned=40) == 40  # never more than planned
    assert affordable_epochs(5, 10, 2, planned=40) == 1  # never none


def test_steady_is_the_fastest_of_the_epochs_after_the_first():
    # The second epoch was slowed by other work: the third is the estimate.
    assert first_and_steady([21.3, 15.4, 13.6]) == (21.3, 13.6)
    # A throwaway timing, with no recheck after it, takes their mean.
    assert first_and_steady([2.7, 0.5, 0.54], fastest=False) == (2.7, pytest.approx(0.52))
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
    assert cap.epochs_decided == 8  # the caller then trains 8 from the same seed


def test_a_throwaway_timing_projects_from_the_mean_of_its_later_epochs():
    # Nothing rechecks the epochs a throwaway timing decides, so it is not optimistic.
    cap = capped_epochs(30.5, Schedule(40, 12, 4), 3, lambda epochs: [3.0, 1.0, 2.0])
    # 3 + 18 x 1.5 = 30 s; the fastest (1.0 s) would have allowed 28 epochs.
    assert (cap.steady_epoch_s, cap.epochs) == (1.5, 19)


def test_the_cap_counts_what_the_run_took_before_the_fit():
    # A 600 s budget planned as 60 s before the fit, 500 s of training and 40 s after.
    assert measured_cap(500, 60, 40, took_s=60)[0] == pytest.approx(500)  # as planned
    # Twice as slow before the fit: 120 s gone, and the stages after expected to take
    # twice their 40 s as well.
    cap, sized = measured_cap(500, 60, 40, took_s=120)
    assert cap == pytest.approx(600 - 120 - 80)
    assert "the 600 s budget less the 120 s" in sized and "x2.00" in sized
    # Faster than planned: the time saved trains, the stages after keep their estimate.
    assert measured_cap(500, 60, 40, took_s=30)[0] == pytest.approx(600 - 30 - 40)
    # Far slower: the stages after are expected at most PACE_BOUNDS[1] times as slow.
    assert measured_cap(500, 60, 40, took_s=300)[0] == pytest.approx(
        600 - 300 - 40 * PACE_BOUNDS[1])
    assert measured_cap(500, 60, 40, took_s=700)[0] == 0.0  # none left: never negative


def test_the_run_clock_is_read_only_where_the_runner_set_it(monkeypatch):
    params = dataclasses.replace(PARAMS, train_cap_s=500.0, hold_epochs=3,
                                 before_fit_s=60.0, after_fit_s=40.0)
    monkeypatch.delenv(RUN_STARTED_ENV, raising=False)
    assert cap_from_run_clock(params) == (500.0, None, None)  # no clock: the plan's cap
    monkeypatch.setenv(RUN_STARTED_ENV, repr(time.time() - 120))
    cap, took, sized = cap_from_run_clock(params)
    assert took == pytest.approx(120, abs=5)
    assert cap == pytest.approx(600 - took - 40 * took / 60, abs=0.1)
    assert sized.startswith(f"{cap:.0f} s to train")


def test_a_schedule_no_longer_than_the_probe_is_not_timed():
    cap = capped_epochs(10, Schedule(3, 12, 4), 3, lambda n: pytest.fail("timed"))
    assert (cap.epochs, cap.first_epoch_s, cap.epochs_decided) == (3, None, 3)


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


class _Slowing(_Slow):
    """As _Slow, then from the sixth epoch 0.5 s an epoch: a host loaded after the timing."""

    def on_epoch_end(self, epoch, logs=None):
        time.sleep(0.5) if epoch >= 5 else super().on_epoch_end(epoch, logs)


def _seeded_fit(epochs: int, planned: int, cap=None, state_path=None, slow=_Slow):
    """A tiny seeded fit of `epochs` epochs under a schedule planned for `planned`; with
    `cap`, a FitTimeCap decides after 3 epochs. Returns (weights, the callback)."""
    keras.utils.set_random_seed(0)
    build, dataset = _tiny_fit_parts()
    rate = WarmupCosine(peak=0.5, warmup_steps=2, total_steps=planned * 2, hold_steps=3 * 2)
    model = build()
    rate.make_adjustable()
    model.compile(keras.optimizers.SGD(rate),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    capper = None if cap is None else FitTimeCap(cap, planned, 2, rate, 3, state_path)
    model.fit(dataset, epochs=epochs, steps_per_epoch=2, verbose=0,
              callbacks=[slow()] + ([capper] if capper else []))
    return [w.numpy() for w in model.weights], capper, model


@pytest.fixture(scope="module")
def warmed():
    """A first fit in the process, whose start-up (tens of seconds on a loaded host) would
    otherwise count as the first epoch of the fit a test times."""
    _seeded_fit(1, 1)


@pytest.mark.integration  # real Keras fits: seconds
def test_a_fit_capped_while_it_runs_trains_what_its_epochs_planned_from_the_start_train(
        tmp_path, warmed):
    state = str(tmp_path / "cap.json")
    # The first epoch takes 0.6 s and its tracing, then 0.2 s each: some, not all 40, fit.
    capped, capper, model = _seeded_fit(40, 40, cap=4.0, state_path=state)
    cap = capper.result
    fit = max(7, affordable_epochs(4.0, cap.first_epoch_s, cap.steady_epoch_s, 40))
    assert 7 <= cap.epochs == fit < 40 and f"{fit} fit of 40 planned epochs" in cap.reason
    assert model.optimizer.iterations.numpy() == fit * 2  # it stopped there
    assert not (tmp_path / "cap.json").exists()  # the decision goes with the fit
    planned_so, _, _ = _seeded_fit(fit, fit)
    for a, b in zip(capped, planned_so):
        np.testing.assert_array_equal(a, b)


@pytest.mark.integration  # a real Keras fit: seconds
def test_a_resumed_fit_keeps_the_decision_made_before_it_stopped(tmp_path):
    state = tmp_path / "cap.json"
    state.write_text(json.dumps({"cap_s": 1.5, "probe_s": 0.0, "first_epoch_s": 0.6,
                                 "steady_epoch_s": 0.2, "planned_epochs": 40, "epochs": 4,
                                 "reason": "4 fit of 40 planned epochs"}))
    _, capper, model = _seeded_fit(40, 40, cap=100.0, state_path=str(state))
    assert capper.result.epochs == 4 and model.optimizer.iterations.numpy() == 4 * 2


@pytest.mark.integration  # a real Keras fit: seconds
def test_epochs_that_slow_down_after_the_timing_end_the_decay_sooner(tmp_path, warmed):
    # Timed at 0.2 s an epoch, 7 <= k < 40 fit in 5 s; from the sixth on, 0.5 s each.
    _, capper, model = _seeded_fit(40, 40, cap=5.0, state_path=str(tmp_path / "cap.json"),
                                   slow=_Slowing)
    cap = capper.result
    decided = max(7, affordable_epochs(5.0, cap.first_epoch_s, cap.steady_epoch_s, 40))
    assert 7 <= cap.epochs < decided and "they ran at" in cap.reason
    # What was decided stays on record, and the cut is an interruption: not repeatable.
    assert cap.epochs_decided == decided
    assert capper.interrupted["epoch"] > 3 and capper.interrupted["reason"].startswith(
        f"the host slowed down: the decay was set to end at epoch {cap.epochs} instead of "
        f"{decided}")
    seconds = capper._clock.seconds
    assert len(seconds) == cap.epochs == model.optimizer.iterations.numpy() // 2
    assert sum(seconds) <= 5.0 + 0.6  # at most the epoch that showed the slowdown more


@pytest.mark.integration  # a real Keras fit: seconds
def test_a_fit_that_ends_before_the_timed_epochs_still_records_the_cap(tmp_path):
    _, capper, _ = _seeded_fit(2, 40, cap=100.0, state_path=str(tmp_path / "cap.json"))
    cap = capper.result  # as early stopping would leave it: 2 epochs ran, none decided
    assert (cap.epochs, cap.planned_epochs, cap.first_epoch_s) == (2, 40, None)
    assert cap.epochs_decided is None
    assert cap.reason.startswith("the fit ended after 2 of 40 planned epochs")


def _driven(cap_s: float, seconds, tmp_path) -> FitTimeCap:
    """A FitTimeCap fed epoch times directly, as a fit's clock would give them."""
    rate = WarmupCosine(peak=0.5, warmup_steps=2, total_steps=80, hold_steps=6)
    rate.make_adjustable()
    capper = FitTimeCap(cap_s, 40, 2, rate, 3, str(tmp_path / "cap.json"))
    capper.set_model(types.SimpleNamespace(stop_training=False))
    times = iter(seconds)
    # The clock, without sleeping: each epoch's end records the next of `seconds`.
    capper._clock = types.SimpleNamespace(seconds=[])  # noqa: SLF001
    capper._clock.on_epoch_end = lambda epoch: capper._clock.seconds.append(next(times))
    for epoch in range(len(seconds)):
        capper.on_epoch_end(epoch)
    return capper


def test_the_recheck_allows_the_timed_epochs_own_jitter(tmp_path):
    # Timed 2.0, then 1.0 and 1.3 s: 1.0 decides 9 epochs in 10.5 s. Later epochs at
    # 1.25 s are within 15% of the timed mean (1.15 s): jitter, kept, so the run stays
    # the one `--epochs 9` trains. Over 15% above the fastest (1.0 s) alone, they are not
    # a slowdown.
    capper = _driven(10.5, [2.0, 1.0, 1.3, 1.25, 1.25, 1.25], tmp_path)
    assert capper.result.epochs == 9 and capper.result.timed_mean_s == pytest.approx(1.15)
    assert "they ran at" not in capper.result.reason and capper.interrupted is None
    # At 1.5 s they are a slowdown that would overrun the cap: the decay ends sooner.
    slowed = _driven(10.5, [2.0, 1.0, 1.3, 1.5, 1.5, 1.5], tmp_path)
    assert slowed.result.epochs < 9 and "they ran at" in slowed.result.reason


def test_the_decision_never_falls_below_the_shortest_training_that_holds_the_peak(tmp_path):
    # 1 s of cap after a 2 s first epoch: 1 fits, but `--epochs 1` (or 3) would not hold
    # the peak the timed epochs trained at; 7 is the fewest epochs whose schedule does.
    capper = _driven(1.0, [2.0, 1.0, 1.0], tmp_path)
    assert (capper.result.epochs, capper.result.epochs_decided) == (7, 7)
    assert capper.interrupted is None  # after the decision, nothing cut it short
    assert capper.learning_rate.total_steps == 7 * 2  # the decay ends there


def test_a_slower_host_never_cuts_below_the_least_a_budget_trains(tmp_path):
    # Decided at the floor (7), then epochs three times slower: the cap is overrun already,
    # but a cut below 7 would train a schedule no `--epochs k` run trains.
    capper = _driven(1.0, [2.0, 1.0, 1.0, 3.0, 3.0, 3.0], tmp_path)
    assert capper.result.epochs == 7 and capper.interrupted is None
    # Above the floor, a slowdown cuts no lower than it.
    cut = _driven(9.0, [2.0, 1.0, 1.0, 3.0, 3.0, 3.0], tmp_path)
    assert (cut.result.epochs_decided, cut.result.epochs) == (8, 7)
    assert cut.interrupted["epoch"] == 4  # the first slow epoch made the mean overrun
