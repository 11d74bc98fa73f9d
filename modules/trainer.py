"""The Trainer's `run_fn`: train on transformed images under the right strategy, export.

Transform is applied on the fly (Transform runs with materialize=False): the
Trainer reads the raw examples and maps them through the transform graph, the
same graph every serving signature embeds. Decoded float images are never
written to disk, which would cost 4 bytes per pixel-channel.
"""
import hashlib
import json
import os
import time
from typing import List

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras
from absl import logging
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline.py
from tfx_bsl.public import tfxio

from components.image_example_gen.ingest import read_report
from components.image_example_gen.labels import LABELS_FILE, read_labels as read_label_file
from modules import autograph_rules
from modules.augment import Augmentation, augment_batch
from modules.model import MODELS, compile_model
from modules.preprocessing import IMAGE_XF, LABEL_XF
from modules.progress import FIT_STATS_FILE, EpochLines, FitThroughput, add_fit_stats
from modules.signatures import export
from modules.strategy import select_strategy

autograph_rules.install()


def read_labels(file_pattern: str) -> List[str]:
    """Class names in label-id order, from labels.txt beside the example splits.

    `file_pattern` is one of FnArgs.train_files: `<examples uri>/Split-train/*`.
    """
    examples_uri = os.path.dirname(os.path.dirname(file_pattern))
    return read_label_file(os.path.join(examples_uri, LABELS_FILE))


def epoch_plan(train_steps: int, max_epochs: int = 10):
    """(epochs, steps_per_epoch) whose product is exactly `train_steps`.

    Keras reports and validates once per epoch; the most epochs that divide
    the steps evenly (up to `max_epochs`) gives progress without ever training
    fewer steps than asked.
    """
    if train_steps < 1:
        raise ValueError(f"train_steps must be >= 1, got {train_steps}")
    epochs = max(d for d in range(1, max_epochs + 1) if train_steps % d == 0)
    return epochs, train_steps // epochs


# A split whose decoded, normalized images fit in this many bytes is decoded
# once and cached in memory: later epochs skip decoding and the transform
# graph (about 5% of a CPU training step on 2 cores for mnist_1k). Larger
# splits stream from disk every epoch, with bounded memory.
CACHE_BUDGET_BYTES = 256 * 2**20


# Destroying the training iterator when fit returns sometimes took 15-17 s
# (1 Trainer run in 3): py-spy --native showed the main thread in
# RootDataset::Iterator::~Iterator waiting on a tf.data pool thread
# (UnboundedThreadPool::LogicalThreadWrapper). The root iterator starts its
# autotuning model thread only with autotuning on; with it off, 0 stalls in
# 5 runs (1 in 5 before) at an unchanged rate. Which thread it was is
# inferred, not seen. Fixed parallelism instead: one map call per usable
# core, two batches prefetched.
_PARALLEL = max(1, len(os.sched_getaffinity(0)))
_OPTIONS = tf.data.Options()
_OPTIONS.autotune.enabled = False


def split_size(file_pattern: str) -> int:
    """Examples in the split `<examples uri>/Split-<name>/*`, from the ingest report.

    0 (unknown: stream, do not cache) for examples another ExampleGen wrote.
    """
    split_dir = os.path.dirname(file_pattern)
    try:
        report = read_report(os.path.dirname(split_dir))
    except tf.errors.NotFoundError:
        return 0
    return int(report["splits"].get(os.path.basename(split_dir)[len("Split-"):], 0))


def make_dataset(file_pattern, data_accessor, tft_output: tft.TFTransformOutput,
                 global_batch: int, shuffle: bool, seed: int,
                 augmentation: Augmentation = Augmentation(),
                 examples: int = 0) -> tf.data.Dataset:
    """(image, label) batches: raw examples mapped through the transform graph.

    Batches are complete (drop_final_batch) and their shapes static, as TPUs
    need; augmentation, if any, applies to these (training) batches only.
    With `examples` known and small enough (CACHE_BUDGET_BYTES), the
    transformed examples are cached after the first pass and reshuffled
    every epoch.
    """
    image_shape = list(tft_output.transformed_feature_spec()[IMAGE_XF].shape)
    cached = 0 < examples * int(np.prod(image_shape)) * 4 <= CACHE_BUDGET_BYTES
    raw = data_accessor.tf_dataset_factory(
        file_pattern,
        tfxio.TensorFlowDatasetOptions(batch_size=global_batch, shuffle=shuffle and not cached,
                                       shuffle_seed=seed, drop_final_batch=not cached,
                                       num_epochs=1 if cached else None),
        tft_output.raw_metadata.schema)
    transform = tft_output.transform_features_layer()

    def to_pair(features):
        xf = transform(features)
        return xf[IMAGE_XF], xf[LABEL_XF]

    pairs = raw.map(to_pair, num_parallel_calls=_PARALLEL)
    if cached:
        pairs = pairs.unbatch().cache()
        if shuffle:
            pairs = pairs.shuffle(examples, seed=seed, reshuffle_each_iteration=True)
        pairs = pairs.repeat().batch(global_batch, drop_remainder=True)
    shape = [global_batch, *image_shape]

    def finish(images, labels):
        images = tf.ensure_shape(images, shape)
        return augment_batch(images, augmentation), tf.ensure_shape(labels, shape[:1])

    batches = pairs.map(finish, num_parallel_calls=_PARALLEL).prefetch(2)
    return batches.with_options(_OPTIONS)


def backup_dir(fn_args: FnArgs) -> str:
    """Where BackupAndRestore keeps its state: the same for a re-run of the same training.

    TFX gives every execution a new model_run_dir, so a backup there would
    never be found again. This folder sits beside them, keyed by the inputs
    and hyperparameters, so a killed training re-run on the same examples
    and settings resumes; Keras deletes it when training completes.
    """
    key = json.dumps([fn_args.train_files, fn_args.eval_files, fn_args.transform_output,
                      fn_args.train_steps, fn_args.custom_config], sort_keys=True)
    trainer_root = os.path.dirname(os.path.dirname(fn_args.model_run_dir))
    return os.path.join(trainer_root, ".backup", hashlib.sha256(key.encode()).hexdigest()[:16])


def _callbacks(fn_args: FnArgs, epochs: int, global_batch: int,
               steps_per_epoch: int):
    """Progress lines, throughput stats, resumable backups and TensorBoard logs."""
    run_dir = fn_args.model_run_dir
    return [EpochLines(epochs),
            FitThroughput(os.path.join(run_dir, FIT_STATS_FILE), global_batch,
                          steps_per_epoch),
            keras.callbacks.BackupAndRestore(backup_dir(fn_args)),
            keras.callbacks.TensorBoard(run_dir, update_freq=int(
                fn_args.custom_config["tensorboard_update_freq"]))]


def run_fn(fn_args: FnArgs) -> None:
    """TFX Trainer entry point; hyperparameters arrive in `custom_config`.

    See pipeline/config.py (`trainer_config`) for what each one means.
    """
    run_started = time.perf_counter()
    config = fn_args.custom_config
    keras.utils.set_random_seed(int(config["seed"]))
    plan = select_strategy(config["tpu"], int(config["batch_size"]),
                           mixed_precision=not config["full_precision"])
    logging.info("training on %s: %d replica(s), global batch %d, %s", plan.kind,
                 plan.replicas, plan.global_batch, plan.policy)
    tft_output = tft.TFTransformOutput(fn_args.transform_output)
    labels = read_labels(fn_args.train_files[0])
    augmentation = Augmentation(int(config["augment_crop"]), bool(config["augment_flip"]),
                                float(config["augment_color"]))
    train = make_dataset(fn_args.train_files, fn_args.data_accessor, tft_output,
                         plan.global_batch, True, int(config["seed"]), augmentation,
                         split_size(fn_args.train_files[0]))
    evaluation = make_dataset(fn_args.eval_files, fn_args.data_accessor, tft_output,
                              plan.global_batch, False, int(config["seed"]),
                              examples=split_size(fn_args.eval_files[0]))
    image_shape = tft_output.transformed_feature_spec()[IMAGE_XF].shape
    previous_policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(plan.policy)
    try:
        with plan.strategy.scope():
            model = compile_model(MODELS[config["model"]](image_shape, len(labels)),
                                  config["optimizer"], float(config["learning_rate"]),
                                  int(config["steps_per_execution"]))
    finally:
        keras.mixed_precision.set_global_policy(previous_policy)
    epochs, steps_per_epoch = epoch_plan(fn_args.train_steps)
    callbacks = _callbacks(fn_args, epochs, plan.global_batch, steps_per_epoch)
    started = time.perf_counter()
    model.fit(train, epochs=epochs, steps_per_epoch=steps_per_epoch,
              validation_data=evaluation, validation_steps=fn_args.eval_steps,
              callbacks=callbacks, verbose=0)
    ended = time.perf_counter()
    throughput = next(c for c in callbacks if isinstance(c, FitThroughput))
    # Time fit spends outside on_train_begin..on_train_end, before and after.
    add_fit_stats(fn_args.model_run_dir, setup_s=started - run_started,
                  fit_call_s=ended - started,
                  before_train_s=throughput.train_begin_at - started,
                  after_train_s=ended - throughput.train_end_at)
    started = time.perf_counter()
    export(model, tft_output, labels, fn_args.serving_model_dir)
    add_fit_stats(fn_args.model_run_dir, export_s=time.perf_counter() - started)
