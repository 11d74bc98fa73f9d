"""The Tuner's `tuner_fn`: a Bayesian search over modules/networks/space.py, trial by trial.

KerasTuner 1.4 builds and type-checks models with Keras 3 (its `Tuner`
refuses a tf_keras model in `_try_build`), so this subclasses `BaseTuner`,
which leaves the trial to us, and uses KerasTuner's oracle for the search
itself: random trials first, then a Gaussian-process Bayesian optimizer.
Trial 0 is the plan's own settings, scored like any other, and the Trainer
keeps them unless a trial is right on significantly more of the same held-out
images (choice.py): each trial keeps its per-image results on the holdout.

Bad trials stop early by the median stopping rule (Golovin et al., "Google
Vizier", KDD 2017): after an epoch, past the first quarter of its epochs, a
trial whose best holdout accuracy so far is below the median of the completed
trials' best at the same epoch stops. The search's time budget stops the
trial then running, and starts no other.
"""
import dataclasses
import math
import time
from typing import Callable, Dict, List, Optional

import keras_tuner as kt
import numpy as np
import tensorflow_transform as tft
import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs
from tfx.components.tuner.component import TunerFnResult

from core.contract import LABELS_FILE, examples_uri_of, read_labels
from modules.networks import user_module
from modules.networks.keras_model import build_model, compile_model
from modules.params import BACKBONE_NAMES, MODULE, TrainerParams
from modules.schedule import phases, training_schedule
from modules.signatures import tft_normalization
from modules.networks import space
from modules.tuning import trial_data
from modules.tuning.choice import choose, describe
from modules.tuning.settings import TuningParams, sample_size
from modules.tuning.significance import rule_line

OBJECTIVE = "val_accuracy"
# Median stopping needs this many completed trials to compare with, and
# judges a trial only from this share of its epochs on, and never before this
# epoch: the first epochs say little. Judged from epoch 2, a flowers search
# stopped 3 of 8 `photo` trials at chance accuracy, one of them close to the
# planned settings, which train to 0.83: the photo model predicts one class
# for its first epochs while batch norm's statistics catch up.
MEDIAN_MIN_TRIALS = 2
MEDIAN_FROM_EPOCH = 2
MEDIAN_FROM_SHARE = 0.25
# Trials that fail in a row before the search gives up on its space (a model
# that does not build fails every trial). KerasTuner's own limit raises out of
# the search and loses the completed trials, so it is off.
MAX_FAILED_IN_A_ROW = 3


class _Stopper(keras.callbacks.Callback):
    """Scores a trial on the holdout after every epoch, image by image, keeping the
    results of its best epoch (the trial's score, and what choice.py compares); stops
    it at the search's deadline (after any batch, once `min_epochs` ran) or by the
    median rule."""

    def __init__(self, deadline: float, others: List[List[float]], holdout,
                 labels: np.ndarray, min_epochs: int = 0, epochs: int = 0):
        super().__init__()
        self.deadline, self.others, self.min_epochs = deadline, others, min_epochs
        self.holdout, self.truth = holdout, np.argmax(labels, axis=-1)
        self.judged_from = median_from(epochs)
        self.curve: List[float] = []
        self.correct: Optional[np.ndarray] = None  # per held-out image, at the best epoch
        self.reason: Optional[str] = None

    def on_train_batch_end(self, batch, logs=None):
        if len(self.curve) >= self.min_epochs and time.monotonic() > self.deadline:
            self.reason = "time budget"
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        # Our own scoring, not Keras's validation: the same accuracy, image by image.
        predicted = self.model.predict(self.holdout, verbose=0)
        correct = np.argmax(predicted, axis=-1) == self.truth
        if not self.curve or correct.mean() > max(self.curve):
            self.correct = correct
        self.curve.append(float(correct.mean()))
        if self.reason is None and _below_median(self.curve, self.others, self.judged_from):
            self.reason = "median rule"
            self.model.stop_training = True


def median_from(epochs: int) -> int:
    """The first epoch (1-based) at which the median rule judges a trial of `epochs`."""
    return max(MEDIAN_FROM_EPOCH, math.ceil(MEDIAN_FROM_SHARE * epochs))


def _below_median(curve: List[float], others: List[List[float]],
                  judged_from: int = MEDIAN_FROM_EPOCH) -> bool:
    """The median stopping rule on best-so-far curves (one value per epoch)."""
    epoch = len(curve) - 1
    peers = [max(c[:epoch + 1]) for c in others if len(c) > epoch]
    if epoch + 1 < judged_from or len(peers) < MEDIAN_MIN_TRIALS:
        return False
    return max(curve) < float(np.median(peers))


class ImageTuner(kt.engine.base_tuner.BaseTuner):
    """Runs each trial as the Trainer would train, on the sampled images; keeps a record
    of every trial (its epochs, seconds and why it stopped) for the summary, and its
    per-image results on the holdout for the choice."""

    def __init__(self, oracle, params: TrainerParams, settings: TuningParams, module=None,
                 **kwargs):
        super().__init__(oracle, **kwargs)
        self.params, self.settings, self.module = params, settings, module
        self.deadline = float("inf")  # set when the search starts
        self.records: Dict[str, dict] = {}
        # Each trial's per-image results on the holdout (True: right), at its best epoch.
        self.holdout_results: Dict[str, np.ndarray] = {}
        self.choice: Optional[dict] = None  # set when the search ends (choice.py)
        self._curves: List[List[float]] = []

    def on_search_begin(self):
        super().on_search_begin()
        # The budget covers the trials, not decoding the sample before them.
        self.deadline = time.monotonic() + self.settings.minutes * 60

    def pre_create_trial(self):
        if time.monotonic() > self.deadline or self._failed_in_a_row() >= MAX_FAILED_IN_A_ROW:
            # The oracle then reports the search done (at least one trial runs).
            self.oracle.max_trials = max(1, len(self.oracle.trials))

    def _failed_in_a_row(self) -> int:
        count = 0
        for trial_id in reversed(self.oracle.end_order):
            if self.oracle.trials[trial_id].status != kt.engine.trial.TrialStatus.FAILED:
                break
            count += 1
        return count

    def on_search_end(self):
        super().on_search_end()
        results = {key: self.holdout_results[key]
                   for key, trial in sorted(self.oracle.trials.items())
                   if trial.status == kt.engine.trial.TrialStatus.COMPLETED
                   and key in self.holdout_results}  # a failed trial has no results
        if results:
            self.choice = choose(results, _plan_trial(self.oracle))
            print(f"          {describe(self.choice)}; {len(self.oracle.trials)} trials",
                  flush=True)

    def get_best_hyperparameters(self, num_trials=1):
        """The chosen trial's values first (TFX's executor hands the first to the
        Trainer); the plan's trial has none, so the Trainer trains as without --tune."""
        ranked = [trial.hyperparameters for trial in self.oracle.get_best_trials(num_trials)]
        if self.choice is None:
            return ranked
        chosen = self.oracle.trials[self.choice["trained"]].hyperparameters
        return ([chosen] + [hp for hp in ranked if hp is not chosen])[:num_trials]

    def _schedule(self, params: TrainerParams, data: trial_data.TrialData, is_plan: bool):
        """The Trainer's schedule for the sample, at the search's share of its epochs.

        The plan's trial trains the Trainer's own length: that is what the Trainer gives
        it when it wins. At the others' share a model planned for its full schedule (the
        half-width cnn on the digits: docs/tuning.md) trails trials that learn faster and
        finish worse. So choice.py compares each rival, at its share, with the plan's
        full-length results on the same images: the bias is the safe one.
        """
        schedule = training_schedule(params, len(data.fit_images), len(data.holdout_images),
                                     params.batch_size)
        share = 1.0 if is_plan else self.settings.epoch_share
        return dataclasses.replace(schedule, epochs=max(1, round(schedule.epochs * share)))

    def run_trial(self, trial, data: trial_data.TrialData, normalization=None, verbose=0):
        started = time.monotonic()
        # The plan's trial has no values: it builds and trains as the untuned Trainer.
        params = space.apply(self.params, trial.hyperparameters.values)
        keras.backend.clear_session()
        keras.utils.set_random_seed(params.seed)
        is_plan = trial.trial_id == _plan_trial(self.oracle)
        schedule = self._schedule(params, data, is_plan)
        epochs = schedule.epochs
        model = build_model(params, data.shape, data.classes, normalization, self.module)
        augment = user_module.augment_fn(self.module, params) if self.module else None
        train = trial_data.fit_batches(data, params, params.batch_size, augment)
        # The first trial runs an epoch whatever the budget: the Trainer needs a best.
        stopper = _Stopper(self.deadline, self._curves,
                           trial_data.holdout_batches(data, params.batch_size),
                           data.holdout_labels, min_epochs=0 if self.records else 1,
                           epochs=epochs)
        _fit(model, params, schedule, train, stopper)
        if stopper.reason is None:  # the median rule compares with completed trials
            self._curves.append(stopper.curve)
        if stopper.correct is not None:
            self.holdout_results[trial.trial_id] = stopper.correct
        score = max(stopper.curve) if stopper.curve else 0.0
        self.records[trial.trial_id] = {
            "epochs_run": len(stopper.curve), "epochs_planned": epochs,
            "seconds": round(time.monotonic() - started, 1), "stopped": stopper.reason,
            "plan": is_plan}
        print(f"          trial {trial.trial_id}: holdout accuracy {score:.4f} after "
              f"{len(stopper.curve)}/{epochs} epochs" +
              (f", stopped ({stopper.reason})" if stopper.reason else ""), flush=True)
        return {OBJECTIVE: score}


def _fit(model, params: TrainerParams, schedule, train, stopper: _Stopper) -> None:
    """Trains `model` phase by phase (a backbone's head, then fine-tuning) until the
    schedule ends or `stopper` stops it."""
    for phase in phases(params, schedule):
        if phase.name == "fine-tune":
            from modules.networks.backbones import unfreeze_top
            unfreeze_top(model, params.model, space.architecture(params).unfreeze)
        compile_model(model, params.optimizer, phase.learning_rate, 1, params.label_smoothing)
        # No validation_data: the stopper scores the holdout itself, image by image.
        model.fit(train, initial_epoch=phase.first_epoch, epochs=phase.end_epoch,
                  steps_per_epoch=schedule.steps_per_epoch, verbose=0, callbacks=[stopper])
        if stopper.reason:
            break


class _PlanFirstOracle(kt.oracles.BayesianOptimizationOracle):
    """KerasTuner's Bayesian oracle whose first trial is the plan's own settings.

    That trial has no values at all, so it trains exactly as the Trainer does
    without --tune (a module file's build_model sees empty `tuned_values`).
    The Gaussian process places it at the space's defaults, which
    space.declare sets to the plan's values.
    """

    def populate_space(self, trial_id):
        if not self.trials:
            return {"status": kt.engine.trial.TrialStatus.RUNNING, "values": {}}
        return super().populate_space(trial_id)

    def _record_values(self, trial):
        # KerasTuner 1.4.8 fills a trial's missing values at random here, before it
        # remembers them so as not to propose them again; the plan's trial has none.
        if trial.hyperparameters.values:
            super()._record_values(trial)


def _plan_trial(oracle) -> Optional[str]:
    """The id of the trial run with the plan's settings: _PlanFirstOracle's first."""
    return oracle.start_order[0] if oracle.start_order else None


def _oracle(params: TrainerParams, settings: TuningParams, side: int,
            declare: Optional[Callable] = None):
    hp = kt.HyperParameters()
    if declare is None:
        space.declare(hp, params, side)
    else:
        declare(hp)
    return _PlanFirstOracle(
        objective=kt.Objective(OBJECTIVE, "max"), max_trials=settings.trials,
        # The plan's trial is one of --tune-trials, but not one of the random ones.
        num_initial_points=settings.initial_points + 1, hyperparameters=hp,
        # KerasTuner reads seed 0 as "none" (`seed or random.randint(...)`, oracle.py)
        seed=params.seed + 1,
        allow_new_entries=False, tune_new_entries=False, max_consecutive_failed_trials=None)


def _module(params: TrainerParams):
    if params.model != MODULE:
        return None
    return user_module.load(params.module_source, params.module_file)


def tuner_fn(fn_args: FnArgs) -> TunerFnResult:
    """TFX Tuner entry point: a module file's own `tuner_fn` if it has one, else ours."""
    params = TrainerParams.from_custom_config(fn_args.custom_config)
    module = _module(params)
    if module is not None and callable(getattr(module, "tuner_fn", None)):
        return module.tuner_fn(fn_args)
    return tuner_for(fn_args)


def tuner_for(fn_args: FnArgs, declare: Optional[Callable] = None) -> TunerFnResult:
    """imagepipe's search over space.py, or over a module file's own space: `declare(hp)`
    declares it on a keras_tuner HyperParameters, and the module's build_model reads the
    trial's values in `params.tuned_values`. A module file's tuner_fn may return this."""
    params = TrainerParams.from_custom_config(fn_args.custom_config)
    settings = TuningParams.from_custom_config(fn_args.custom_config)
    tft_output = tft.TFTransformOutput(fn_args.transform_graph_path)
    from modules.training.input_pipeline import image_shape  # TF's datasets: late
    shape = image_shape(tft_output)
    tuner = ImageTuner(_oracle(params, settings, shape[0], declare), params, settings,
                       _module(params), directory=fn_args.working_dir,
                       project_name="imagepipe", overwrite=True)
    data = _sample(fn_args, params, settings, tft_output, shape)
    normalization = tft_normalization(tft_output) if params.model in BACKBONE_NAMES else None
    print(f"          tuning on {len(data.fit_images)} train images, scored on "
          f"{len(data.holdout_images)} held out of train; at most {settings.trials} trials "
          f"in {settings.minutes:g} min", flush=True)
    rule = rule_line(len(data.holdout_images), settings.trials - 1)
    if rule:
        print(f"          {rule}", flush=True)
    # verbose 0: the oracle's own tables; each trial prints one line instead.
    return TunerFnResult(tuner=tuner, fit_kwargs={"data": data, "normalization": normalization,
                                                  "verbose": 0})


def _sample(fn_args: FnArgs, params: TrainerParams, settings: TuningParams, tft_output,
            shape) -> trial_data.TrialData:
    from modules.training.input_pipeline import make_dataset, split_examples  # TF: late
    labels = read_labels(f"{examples_uri_of(fn_args.train_files[0])}/{LABELS_FILE}")
    count = sample_size(split_examples(fn_args.train_files[0]), shape, settings)
    dataset = make_dataset(fn_args.train_files, fn_args.data_accessor, tft_output,
                           params.batch_size, True, params.seed, len(labels))
    return trial_data.load(dataset, count, params.batch_size, settings.holdout_share)
