"""The Trainer's model: built and compiled under the strategy, fitted phase by phase."""

import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py

from core.contract import IMAGE_XF, examples_uri_of
from modules.networks import user_module
from modules.training import class_weights
from modules.networks.keras_model import build_model, compile_model
from modules.params import BACKBONE_NAMES, MODULE, TrainerParams
from modules.schedule import Phase, phases, validation_epochs
from modules.signatures import tft_normalization
from modules.training.callbacks import fit_callbacks
from modules.training.repeat import fit_interruption
from modules.networks.space import architecture


def build_compiled(params: TrainerParams, plan, tft_output, classes: int, phase: Phase,
                   module):
    """The compiled model, built under the strategy and precision policy of `plan`."""
    previous_policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(plan.policy)
    try:
        with plan.strategy.scope():
            return compile_for(new_model(params, tft_output, classes, module), params, phase)
    finally:
        keras.mixed_precision.set_global_policy(previous_policy)


def new_model(params: TrainerParams, tft_output, classes: int, module) -> keras.Model:
    """The uncompiled model for Transform's image shape, under the current policy."""
    image_shape = tft_output.transformed_feature_spec()[IMAGE_XF].shape
    normalization = tft_normalization(tft_output) if params.model in BACKBONE_NAMES else None
    return build_model(params, image_shape, classes, normalization, module)


def compile_for(model: keras.Model, params: TrainerParams, phase: Phase) -> keras.Model:
    return compile_model(model, params.optimizer, phase.learning_rate,
                         params.steps_per_execution, params.label_smoothing)


def fit_phases(model, fn_args, params, strategy_plan, schedule, train, evaluation,
               run_dir, class_weight=None, extra_callbacks=()):
    """Runs every phase of `schedule`; returns (the epochs actually run, the first
    repeat.fit_interruption record of a phase cut short, or None). `extra_callbacks`
    join the first phase's fit."""
    from modules.networks.backbones import unfreeze_top
    epochs_run, interrupted = 0, None
    for phase in phases(params, schedule):
        if phase.name == "fine-tune":
            with strategy_plan.strategy.scope():
                opened = unfreeze_top(model, params.model, architecture(params).unfreeze)
                compile_for(model, params, phase)
            print(f"          fine-tune: {opened} layers of {params.model}'s top blocks "
                  f"open, learning rate {phase.learning_rate.peak:g}", flush=True)
        callbacks = fit_callbacks(fn_args, params, schedule, strategy_plan, phase, run_dir)
        model.fit(train, initial_epoch=phase.first_epoch, epochs=phase.end_epoch,
                  steps_per_epoch=schedule.steps_per_epoch, validation_data=evaluation,
                  validation_steps=schedule.validation_steps, verbose=0,
                  validation_freq=validation_epochs(params, phase),
                  class_weight=class_weight,
                  callbacks=[*callbacks,
                             *(extra_callbacks if phase.first_epoch == 0 else ())])
        epochs_run += len(model.history.epoch)
        interrupted = interrupted or fit_interruption(model, phase.first_epoch, callbacks)
    return epochs_run, interrupted


def user_module_of(params: TrainerParams):
    """The loaded module file, or None."""
    if params.model != MODULE:
        return None
    return user_module.load(params.module_source, params.module_file)


def class_weights_for(fn_args: FnArgs, params: TrainerParams, labels, dist):
    """Keras' class_weight for an imbalanced train split, or None
    (modules/training/class_weights.py).

    Not under parameter servers: Keras maps class weights over a dataset it is
    given, and there each worker builds its own from a function.
    """
    counts = class_weights.train_counts(examples_uri_of(fn_args.train_files[0]), labels)
    weights = class_weights.class_weights(counts, params.imbalance_ratio)
    if weights is not None and dist.coordinated:
        print("          class weights: not applied under parameter servers", flush=True)
        return None
    if counts and dist.is_chief:
        print("          " + class_weights.describe(counts, weights, params.imbalance_ratio),
              flush=True)
    return weights
