"""The Trainer's Keras callbacks: progress, throughput, early stopping, backups, TensorBoard."""
import hashlib
import json
import os

import tf_keras as keras
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py

from modules.epoch_progress import FIT_STATS_FILE, EpochLines, FitThroughput
from modules.params import TrainerParams
from modules.schedule import Phase, Schedule


def backup_dir(fn_args: FnArgs) -> str:
    """Where BackupAndRestore keeps its state: the same for a re-run of the same training.

    TFX gives every execution a new model_run_dir, so a backup there would
    never be found again. This folder sits beside them, keyed by the inputs
    and hyperparameters, so a killed training re-run on the same examples
    and settings resumes; Keras deletes it when training completes.
    """
    key = json.dumps([fn_args.train_files, fn_args.eval_files, fn_args.transform_output,
                      fn_args.train_steps, fn_args.custom_config,
                      getattr(fn_args, "hyperparameters", None)], sort_keys=True)
    trainer_root = os.path.dirname(os.path.dirname(fn_args.model_run_dir))
    return os.path.join(trainer_root, ".backup", hashlib.sha256(key.encode()).hexdigest()[:16])


def fit_callbacks(fn_args: FnArgs, params: TrainerParams, schedule: Schedule,
               dist, phase: Phase, run_dir: str):
    """Progress lines, throughput stats, early stopping, resumable backups, TensorBoard.

    `run_dir` is the ModelRun folder on the chief, a temporary one on other
    workers; only the chief prints the epoch lines.
    """
    label = "" if phase.name == "train" else phase.name
    callbacks = [EpochLines(schedule.epochs, label=label)] if dist.is_chief else []
    callbacks.append(FitThroughput(os.path.join(run_dir, FIT_STATS_FILE), dist.global_batch,
                                   schedule.steps_per_epoch, phase=phase.name))
    if params.early_stopping_patience:
        # tf_keras restores the best epoch's weights in on_train_end whether or
        # not it stopped early (callbacks.py, EarlyStopping.on_train_end).
        callbacks.append(keras.callbacks.EarlyStopping(
            monitor="val_loss", patience=params.early_stopping_patience,
            restore_best_weights=True))
    # One backup per phase: phase 2 must not resume from phase 1's optimizer.
    backup = backup_dir(fn_args) + ("" if phase.first_epoch == 0 else f"-{phase.name}")
    return callbacks + [keras.callbacks.BackupAndRestore(backup),
                        keras.callbacks.TensorBoard(
                            run_dir, update_freq=tensorboard_freq(params, dist))]


def tensorboard_freq(params: TrainerParams, dist):
    """Every N steps; per epoch under parameter servers, where Keras refuses batch hooks."""
    if dist.coordinated:
        return "epoch"
    return params.tensorboard_update_freq
