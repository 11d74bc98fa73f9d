"""The Trainer's Keras callbacks: progress, throughput, early stopping, backups, TensorBoard."""
import hashlib
import json
import os
import time

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


# After the first epoch's backup, the next comes once this long has passed: a
# checkpoint write every epoch is a large share of a short epoch on a small set,
# and a preemption then loses at most this much training beyond the epoch under way.
BACKUP_EVERY_S = 30.0


class SparseBackup(keras.callbacks.BackupAndRestore):
    """BackupAndRestore that backs up after the first epoch and then once `every_s`
    seconds have passed since the last backup, instead of after every epoch."""

    def __init__(self, backup_dir: str, every_s: float = BACKUP_EVERY_S):
        super().__init__(backup_dir)
        self._every_s, self._last = every_s, None

    def on_epoch_end(self, epoch, logs=None):
        now = time.monotonic()
        if self._last is None or now - self._last >= self._every_s:
            self._last = now
            super().on_epoch_end(epoch, logs)


def backup_callback(path: str, dist) -> keras.callbacks.BackupAndRestore:
    """A SparseBackup on one worker; every epoch's backup on several, where each
    worker's clock would decide alone and their backups must agree."""
    if dist.workers == 1 and not dist.coordinated:
        return SparseBackup(path)
    return keras.callbacks.BackupAndRestore(path)


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
    return callbacks + [backup_callback(backup, dist),
                        keras.callbacks.TensorBoard(
                            run_dir, update_freq=tensorboard_freq(params, dist))]


def tensorboard_freq(params: TrainerParams, dist):
    """Every N steps; per epoch under parameter servers, where Keras refuses batch hooks."""
    if dist.coordinated:
        return "epoch"
    return params.tensorboard_update_freq
