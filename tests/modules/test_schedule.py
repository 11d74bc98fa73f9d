"""Training length and learning rate: epochs of the real split, exact steps, warmup + cosine."""
import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from modules.params import TrainerParams, epochs_for
from pipeline.planning.rules import EXAMPLES_BUDGET, MAX_EPOCHS, MIN_EPOCHS
from modules.schedule import (Phase, WarmupCosine, epoch_plan, learning_rate, phases,
                              training_schedule, validation_epochs)

PARAMS = TrainerParams(
    model="photo", batch_size=64, epochs=None, train_steps=None, eval_steps=None,
    optimizer="adam", learning_rate=2e-3, warmup_epochs=1.0, early_stopping_patience=8,
    label_smoothing=0.1, augment_crop=0, augment_scale=0.25, augment_flip=True,
    augment_color=0.2, cache_bytes=1 << 30, steps_per_execution=1,
    tensorboard_update_freq=100, tpu=None, full_precision=False, seed=0,
        examples_budget=900_000, min_epochs=3, max_epochs=40,
        disk_headroom=2 << 30, workers=1, rendezvous_s=300.0)


@pytest.mark.parametrize("steps, plan", [(400, (10, 40)), (30, (10, 3)), (25, (5, 5)),
                                         (23, (1, 23)), (1, (1, 1))])
def test_epoch_plan_trains_exactly_the_requested_steps(steps, plan):
    assert epoch_plan(steps) == plan


def test_epoch_plan_rejects_zero_steps():
    with pytest.raises(ValueError, match="train_steps"):
        epoch_plan(0)


@pytest.mark.parametrize("examples, epochs", [(800, MAX_EPOCHS), (2_495, MAX_EPOCHS),
                                              (60_000, 15), (300_000, MIN_EPOCHS)])
def test_epochs_follow_the_train_split_size(examples, epochs):
    assert epochs_for(examples, EXAMPLES_BUDGET, MIN_EPOCHS, MAX_EPOCHS) == epochs


def test_schedule_sizes_epochs_on_the_actual_split():
    schedule = training_schedule(PARAMS, train_examples=2_495, eval_examples=624,
                                 global_batch=64)
    assert (schedule.epochs, schedule.steps_per_epoch, schedule.validation_steps) == (
        40, 38, 10)  # 2,495 // 64 complete batches; all 624 eval images, ceil(624 / 64)


def test_exact_steps_and_given_epochs_win():
    steps = dataclasses.replace(PARAMS, train_steps=400, eval_steps=4)
    assert training_schedule(steps, 2_495, 624, 64).total_steps == 400
    assert training_schedule(steps, 2_495, 624, 64).validation_steps == 4
    epochs = dataclasses.replace(PARAMS, epochs=3)
    assert training_schedule(epochs, 2_495, 624, 64).epochs == 3


def test_learning_rate_warms_up_then_decays_to_zero():
    rate = WarmupCosine(peak=1.0, warmup_steps=10, total_steps=110)
    values = np.array([float(rate(step)) for step in range(111)])
    assert values[0] == pytest.approx(0.1) and values[9] == pytest.approx(1.0)
    assert np.all(np.diff(values[:10]) > 0) and np.all(np.diff(values[10:]) <= 1e-7)
    assert values[60] == pytest.approx(0.5, abs=1e-6) and values[110] == pytest.approx(0.0)


def test_a_held_peak_makes_the_steps_before_it_the_same_whatever_the_total():
    planned = WarmupCosine(peak=1.0, warmup_steps=10, total_steps=400, hold_steps=30)
    shorter = WarmupCosine(peak=1.0, warmup_steps=10, total_steps=110, hold_steps=30)
    early = [float(planned(step)) for step in range(31)]
    assert early == [float(shorter(step)) for step in range(31)]
    assert early[10:] == [1.0] * 21  # the peak, held
    assert float(shorter(70)) == pytest.approx(0.5, abs=1e-6)  # halfway from 30 to 110
    assert float(shorter(110)) == pytest.approx(0.0, abs=1e-7)


def test_an_adjustable_schedule_ends_where_it_is_told_without_retracing():
    rate = WarmupCosine(peak=1.0, warmup_steps=10, total_steps=400, hold_steps=30)
    rate.make_adjustable()
    traced = tf.function(rate)
    assert float(traced(tf.constant(215))) == pytest.approx(0.5, abs=1e-6)
    rate.set_total_steps(110)
    assert float(traced(tf.constant(70))) == pytest.approx(0.5, abs=1e-6)
    assert traced.experimental_get_tracing_count() == 1
    assert rate.get_config()["total_steps"] == 110


def test_the_peak_is_held_through_the_timed_epochs_with_a_budget_or_without():
    held = dataclasses.replace(PARAMS, hold_epochs=3)
    capped = dataclasses.replace(held, train_cap_s=100.0)
    schedule = training_schedule(PARAMS, 2_495, 624, 64)
    assert phases(capped, schedule)[0].learning_rate.hold_steps == 3 * 38
    assert phases(held, schedule)[0].learning_rate.hold_steps == 3 * 38
    # A short training (a warm start's eighth) trains whole: nothing held, nothing capped.
    short = dataclasses.replace(schedule, epochs=6)
    assert phases(held, short)[0].learning_rate.hold_steps == 0
    assert phases(held, dataclasses.replace(schedule, epochs=7))[0].learning_rate.hold_steps


def _rates(rate: WarmupCosine, steps: int):
    traced = tf.function(rate)
    return [float(traced(tf.constant(step))) for step in range(steps + 1)]


@pytest.mark.parametrize("decided", [7, 9, 13, 39, 40])
def test_a_budget_that_decides_n_epochs_trains_the_schedule_of_n_epochs_without_one(decided):
    # The budgeted run plans 40 epochs, decides after the held ones and ends the decay at
    # `decided`; `--epochs decided --time-budget none` plans that from the start. Every
    # step's rate must agree to the bit, the warmup's included (at most a tenth of 7
    # epochs would be shorter than the budgeted run's).
    held = dataclasses.replace(PARAMS, hold_epochs=3, early_stopping_patience=0)
    planned = training_schedule(held, 2_495, 624, 64)
    budgeted = phases(dataclasses.replace(held, train_cap_s=100.0), planned)[0].learning_rate
    budgeted.make_adjustable()
    before = _rates(budgeted, 3 * 38)  # the held epochs, timed before the decision
    budgeted.set_total_steps(decided * 38)
    unbudgeted = phases(held, dataclasses.replace(planned, epochs=decided))[0].learning_rate
    unbudgeted.make_adjustable()
    assert before == _rates(unbudgeted, 3 * 38)
    assert _rates(budgeted, decided * 38) == _rates(unbudgeted, decided * 38)
    assert budgeted.get_config() == unbudgeted.get_config()


def test_warmup_is_one_epoch_but_at_most_a_tenth_of_training():
    long = training_schedule(PARAMS, 2_495, 624, 64)
    assert learning_rate(PARAMS, long).warmup_steps == 38
    short = training_schedule(dataclasses.replace(PARAMS, epochs=3), 2_495, 624, 64)
    assert learning_rate(PARAMS, short).warmup_steps == 11
    # A held schedule warms up within its hold, whatever follows: 7 epochs as 40 do.
    seven = training_schedule(dataclasses.replace(PARAMS, epochs=7), 2_495, 624, 64)
    assert learning_rate(PARAMS, seven).warmup_steps == 26
    assert learning_rate(PARAMS, seven, hold_epochs=3).warmup_steps == 38


def test_params_round_trip_through_custom_config_and_refuse_unknown_keys():
    config = PARAMS.to_custom_config()
    assert TrainerParams.from_custom_config(config) == PARAMS
    with pytest.raises(KeyError, match="unknown settings \\['typo'\\]"):
        TrainerParams.from_custom_config(
            {"trainer_params": {**config["trainer_params"], "typo": 1}})
    with pytest.raises(ValueError, match="model must be one of"):
        dataclasses.replace(PARAMS, model="vgg")


def test_without_early_stopping_a_phase_validates_the_timed_epochs_every_kth_and_the_last():
    plain = dataclasses.replace(PARAMS, early_stopping_patience=0, hold_epochs=3)
    train = Phase("train", 0, 40, None)
    assert validation_epochs(plain, train) == [1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40]
    fine_tune = Phase("fine-tune", 10, 25, None)  # Keras counts epochs across phases
    assert validation_epochs(plain, fine_tune) == [11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                                                   21, 22, 23, 24, 25]
    untimed = dataclasses.replace(plain, hold_epochs=0)
    assert validation_epochs(untimed, Phase("train", 0, 23, None)) == [
        2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 23]
    # Early stopping reads val_loss every epoch.
    assert validation_epochs(PARAMS, train) == list(range(1, 41))
