"""The Trainer's `run_fn`: train on transformed images under the right strategy, export.

Transform is applied on the fly (Transform runs with materialize=False): the
Trainer reads the raw examples and maps them through the transform graph, the
same graph every serving signature embeds. Decoded float images are never
written to disk, which would cost 4 bytes per pixel-channel.
"""
import dataclasses
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from typing import Callable, Optional, Tuple

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras
from absl import logging
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py
from tfx_bsl.public import tfxio

from components.contract import (EVAL, IMAGE_XF, LABEL_XF, LABELS_FILE, TRAIN,
                                 decode_cache_folder, examples_uri_of, read_labels, split_of,
                                 split_size)
from components.storage import files
from modules import autograph_rules
from modules.augment import Augmentation, augment_batches
from modules.data.decode_cache import CACHE_DIR, plan_caches, remove_caches, shuffle_buffer
from modules import user_module
from modules.data import class_weights
from modules.model import build_model, compile_model, float32_copy
from modules.cluster import parameter_servers
from modules.continuous import warm_start
from modules.cluster.parameter_servers import per_worker
from modules.cluster.tf_config import has_parameter_servers, read_cluster, serves
from modules.params import BACKBONE_NAMES, MODULE, TrainerParams
from modules.epoch_progress import FIT_STATS_FILE, EpochLines, FitThroughput, add_fit_stats
from modules.schedule import Phase, Schedule, phases, training_schedule
from modules.signatures import export, tft_normalization
from modules.distribution import select_strategy
from modules.tuning.space import apply as apply_tuned, architecture, weights_key

autograph_rules.install()


# Destroying the training iterator when fit returns sometimes stalled for
# many seconds: py-spy --native showed the main thread in
# RootDataset::Iterator::~Iterator waiting on a tf.data pool thread
# (UnboundedThreadPool::LogicalThreadWrapper). The root iterator starts its
# autotuning model thread only with autotuning on, and with it off the
# stalls stopped at an unchanged rate (docs/performance.md). Which thread it
# was is inferred, not seen. Fixed parallelism instead: one map call per
# usable core, two batches prefetched.
_PARALLEL = max(1, len(os.sched_getaffinity(0)))
_OPTIONS = tf.data.Options()
_OPTIONS.autotune.enabled = False


def make_dataset(file_pattern, data_accessor, tft_output: tft.TFTransformOutput,
                 global_batch: int, shuffle: bool, seed: int, num_classes: int,
                 augmentation: Augmentation = Augmentation(), examples: int = 0,
                 cache: Optional[str] = None, augment: Optional[Callable] = None,
                 shuffle_seed=None) -> tf.data.Dataset:
    """(image, one-hot label) batches: raw examples mapped through the transform graph.

    Batches are complete (drop_final_batch) and their shapes static, as TPUs
    need; augmentation, if any, applies to these (training) batches only.
    `cache` ('' for memory, or a file path; see decode_cache.plan_caches) keeps
    the decoded, transformed examples after the first pass, so later epochs
    neither decode nor resize, reshuffled every epoch; None streams. `augment`,
    a module file's own, replaces `augmentation` on training batches;
    `shuffle_seed` (parameter_servers.runtime_seed) replaces `seed` in shuffles.
    """
    shuffle_seed = seed if shuffle_seed is None else shuffle_seed
    image_shape = list(tft_output.transformed_feature_spec()[IMAGE_XF].shape)
    cached = cache is not None and examples > 0
    raw = data_accessor.tf_dataset_factory(
        file_pattern,
        tfxio.TensorFlowDatasetOptions(batch_size=global_batch, shuffle=shuffle and not cached,
                                       shuffle_seed=shuffle_seed, drop_final_batch=not cached,
                                       num_epochs=1 if cached else None),
        tft_output.raw_metadata.schema)
    transform = tft_output.transform_features_layer()

    def to_pair(features):
        xf = transform(features)
        return xf[IMAGE_XF], xf[LABEL_XF]

    pairs = raw.map(to_pair, num_parallel_calls=_PARALLEL)
    if cached:
        pairs = pairs.unbatch().cache(cache)
        if shuffle:
            pairs = pairs.shuffle(shuffle_buffer(examples, image_shape, cache), seed=shuffle_seed,
                                  reshuffle_each_iteration=True)
        pairs = pairs.repeat().batch(global_batch, drop_remainder=True)
    shape = [global_batch, *image_shape]

    def finish(images, labels):
        images = tf.ensure_shape(images, shape)
        labels = tf.one_hot(tf.ensure_shape(labels, shape[:1]), num_classes)
        if augment is not None:
            return tf.ensure_shape(augment(images), shape), labels
        return images, labels

    batches = pairs.map(finish, num_parallel_calls=_PARALLEL)
    if augment is None:
        batches = augment_batches(batches, augmentation, seed, _PARALLEL)
    return batches.prefetch(2).with_options(_OPTIONS)


def split_examples(file_pattern: str) -> int:
    """The split's size from the ingest report, else counted (another ExampleGen's output)."""
    known = split_size(examples_uri_of(file_pattern), split_of(file_pattern))
    if known:
        return known
    paths = files.glob(file_pattern)
    return int(tf.data.TFRecordDataset(paths, compression_type="GZIP").reduce(
        np.int64(0), lambda count, _: count + 1))


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


def _callbacks(fn_args: FnArgs, params: TrainerParams, schedule: Schedule,
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
                            run_dir, update_freq=_tensorboard_freq(params, dist))]


def _tensorboard_freq(params: TrainerParams, dist):
    """Every N steps; per epoch under parameter servers, where Keras refuses batch hooks."""
    if dist.coordinated:
        return "epoch"
    return params.tensorboard_update_freq


def _build(params: TrainerParams, plan, tft_output, classes: int, phase: Phase, module):
    """The compiled model, built under the strategy and precision policy of `plan`."""
    previous_policy = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(plan.policy)
    try:
        with plan.strategy.scope():
            return _compile(_new_model(params, tft_output, classes, module), params, phase)
    finally:
        keras.mixed_precision.set_global_policy(previous_policy)


def _new_model(params: TrainerParams, tft_output, classes: int, module) -> keras.Model:
    """The uncompiled model for Transform's image shape, under the current policy."""
    image_shape = tft_output.transformed_feature_spec()[IMAGE_XF].shape
    normalization = tft_normalization(tft_output) if params.model in BACKBONE_NAMES else None
    return build_model(params, image_shape, classes, normalization, module)


def _compile(model: keras.Model, params: TrainerParams, phase: Phase) -> keras.Model:
    return compile_model(model, params.optimizer, phase.learning_rate,
                         params.steps_per_execution, params.label_smoothing)


def _datasets(fn_args: FnArgs, params: TrainerParams, tft_output, dist, classes: int,
              cache_dir: str, augment: Optional[Callable]):
    """(train, eval) datasets, their sizes, and where each split's decoded images are kept.

    Under parameter servers each worker builds its own from a function; a
    cache file would be written by every worker at the same path, so only
    memory caches stay. Validation there samples the eval split (each
    worker in its own order) to drive early stopping; the Evaluator still
    scores every example.
    """
    sizes = {TRAIN: split_examples(fn_args.train_files[0]),
             EVAL: split_examples(fn_args.eval_files[0])}
    caches = plan_caches(sizes, image_shape(tft_output), params.cache_bytes, cache_dir,
                         params.disk_headroom)
    coordinated = dist.coordinated
    if coordinated:
        caches = {split: cache if cache == "" else None for split, cache in caches.items()}
    augmentation = Augmentation(params.augment_crop, params.augment_flip,
                                params.augment_color, params.augment_scale)

    train_files, train_by_file = _worker_files(fn_args.train_files, dist)
    eval_files, eval_by_file = _worker_files(fn_args.eval_files, dist)

    def train(shuffle_seed=None):
        return make_dataset(train_files, fn_args.data_accessor, tft_output,
                            dist.global_batch, True, params.seed, classes, augmentation,
                            sizes[TRAIN], caches[TRAIN], augment, shuffle_seed)

    def evaluation(shuffle_seed=None):
        return make_dataset(eval_files, fn_args.data_accessor, tft_output,
                            dist.global_batch, coordinated, params.seed, classes,
                            examples=sizes[EVAL], cache=caches[EVAL], shuffle_seed=shuffle_seed)

    logging.info("decoded images kept: train %r, eval %r", caches[TRAIN], caches[EVAL])
    if coordinated:
        return per_worker(train), per_worker(evaluation), sizes
    return (_sharded(train(), dist, train_by_file),
            _sharded(evaluation(), dist, eval_by_file), sizes)


def _fit_phases(model, fn_args, params, strategy_plan, schedule, train, evaluation,
                run_dir, class_weight=None) -> int:
    """Runs every phase of `schedule`; returns the epochs actually run."""
    from modules.backbones import unfreeze_top
    epochs_run = 0
    for phase in phases(params, schedule):
        if phase.name == "fine-tune":
            with strategy_plan.strategy.scope():
                opened = unfreeze_top(model, params.model, architecture(params).unfreeze)
                _compile(model, params, phase)
            print(f"          fine-tune: {opened} layers of {params.model}'s top blocks "
                  f"open, learning rate {phase.learning_rate.peak:g}", flush=True)
        model.fit(train, initial_epoch=phase.first_epoch, epochs=phase.end_epoch,
                  steps_per_epoch=schedule.steps_per_epoch, validation_data=evaluation,
                  validation_steps=schedule.validation_steps, verbose=0,
                  class_weight=class_weight,
                  callbacks=_callbacks(fn_args, params, schedule, strategy_plan, phase,
                                       run_dir))
        epochs_run += len(model.history.epoch)
    return epochs_run


def _user_module(params: TrainerParams):
    """The loaded module file, or None."""
    if params.model != MODULE:
        return None
    return user_module.load(params.module_source, params.module_file)


def run_fn(fn_args: FnArgs) -> None:
    """TFX Trainer entry point; its settings arrive as TrainerParams in `custom_config`.

    On a cluster (a TF_CONFIG naming several workers) every worker runs this;
    only the chief writes the model, the stats and the summaries. The others
    write theirs to temporary folders, since saving runs collective ops that
    every worker must join, then wait for the chief's model: TFX's executor
    checks on every worker that the model exists.
    """
    run_started = time.perf_counter()
    params = TrainerParams.from_custom_config(fn_args.custom_config)
    if fn_args.hyperparameters:  # the Tuner's best trial (modules/tuning/)
        params = apply_tuned(params, fn_args.hyperparameters["values"])
    cluster = read_cluster()
    if cluster is not None and has_parameter_servers(cluster):
        parameter_servers.prepare()
        if serves(cluster):  # a worker or parameter server: the chief drives it
            parameter_servers.serve(cluster)
    # The strategy first: MultiWorkerMirroredStrategy must configure collective
    # ops before anything initializes TensorFlow's runtime, seeding included.
    dist = select_strategy(params.tpu, params.batch_size,
                           mixed_precision=not params.full_precision,
                           cluster=cluster, rendezvous_s=params.rendezvous_s)
    keras.utils.set_random_seed(params.seed)
    logging.info("training on %s: %s, %d worker(s), %d replica(s), %d parameter server(s), "
                 "global batch %d, %s", dist.kind, dist.name, dist.workers, dist.replicas,
                 dist.parameter_servers, dist.global_batch, dist.policy)
    if dist.is_chief:
        _train(fn_args, params, dist, fn_args.model_run_dir, fn_args.serving_model_dir,
               run_started)
        return
    scratch = _scratch_folder(fn_args, params)
    try:
        _train(fn_args, params, dist, os.path.join(scratch, "run"),
               os.path.join(scratch, "model"), run_started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _wait_for(os.path.join(fn_args.serving_model_dir, "saved_model.pb"), params.rendezvous_s)


def _scratch_folder(fn_args: FnArgs, params: TrainerParams) -> str:
    """Where a worker other than the chief writes what the chief keeps.

    On a local run, beside the decode caches and named like them with this
    process, so that a worker killed outright leaves nothing the next run
    does not remove (pipeline/local/state.py); on a cluster, the pod's temp.
    """
    if not params.cache_root:
        return tempfile.mkdtemp(prefix="imagepipe-worker-")
    execution = os.path.basename(fn_args.model_run_dir) + "-worker"
    folder = decode_cache_folder(params.cache_root, execution, os.getpid())
    os.makedirs(folder, exist_ok=True)  # os: the state folder is never a bucket
    return folder


def _train(fn_args: FnArgs, params: TrainerParams, dist, run_dir: str, model_dir: str,
           run_started: float) -> None:
    """Trains, then exports to `model_dir` and writes the fit stats into `run_dir`."""
    tft_output = tft.TFTransformOutput(fn_args.transform_output)
    labels = read_labels(os.path.join(examples_uri_of(fn_args.train_files[0]), LABELS_FILE))
    module = _user_module(params)
    augment = user_module.augment_fn(module, params) if module else None
    trainer_root = os.path.dirname(os.path.dirname(fn_args.model_run_dir))
    # One folder per execution and process: concurrent runs on a cluster may share
    # the root, and a killed run's folder is found by its dead process.
    cache_root = params.cache_root or os.path.join(trainer_root, CACHE_DIR)
    with remove_caches(decode_cache_folder(cache_root, os.path.basename(fn_args.model_run_dir),
                                           os.getpid())) as cache_dir:
        train, evaluation, sizes = _datasets(fn_args, params, tft_output, dist, len(labels),
                                             cache_dir, augment)
        schedule = training_schedule(params, sizes[TRAIN], sizes[EVAL], dist.global_batch)
        description = warm_start.describe(
            params.model, params.module_sha256, image_shape(tft_output), labels,
            weights_key(params))
        if params.tuned_values and dist.is_chief:
            print("          tuned: " + ", ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                for k, v in sorted(params.tuned_values.items())), flush=True)
        planned = schedule.epochs
        decision, schedule = _warm_start_decision(fn_args, params, description, schedule)
        model = _build(params, dist, tft_output, len(labels), phases(params, schedule)[0],
                       module)
        warm = _warm_start_record(model, decision, schedule.epochs, planned)
        weights = _class_weights(fn_args, params, labels, dist)
        started = time.perf_counter()
        epochs_run = _fit_phases(model, fn_args, params, dist, schedule, train, evaluation,
                                 run_dir, weights)
        ended = time.perf_counter()
    add_fit_stats(run_dir, setup_s=started - run_started, fit_call_s=ended - started,
                  epochs_run=epochs_run, epochs_planned=schedule.epochs, strategy=dist.name,
                  workers=dist.workers, replicas=dist.replicas,
                  parameter_servers=dist.parameter_servers, warm_start=warm,
                  hyperparameters=params.tuned_values or None,
                  class_weights=None if weights is None else [round(weights[i], 4)
                                                              for i in sorted(weights)])
    started = time.perf_counter()
    # Before export, which adds Transform's layer (not a Keras one) to the model.
    warm_start.save(model, description, model_dir)
    export(float32_copy(model, lambda: _new_model(params, tft_output, len(labels), module)),
           tft_output, labels, model_dir)
    if params.model in BACKBONE_NAMES:
        from modules.backbones import save_backbone_weights
        save_backbone_weights(model, run_dir)
    add_fit_stats(run_dir, export_s=time.perf_counter() - started)


def _class_weights(fn_args: FnArgs, params: TrainerParams, labels, dist):
    """Keras' class_weight for an imbalanced train split (modules/data/class_weights.py), or None.

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


def image_shape(tft_output) -> list:
    return list(tft_output.transformed_feature_spec()[IMAGE_XF].shape)


def _warm_start_decision(fn_args: FnArgs, params: TrainerParams, description: dict,
                         schedule: Schedule):
    """Whether to start from the base model (the last blessed one), and the schedule:
    `warm_start_share` of its epochs when warm, unless --train-steps asked for an exact
    step count."""
    if not params.warm_start:
        return warm_start.Decision(None, False, "--warm-start off"), schedule
    decision = warm_start.decide(fn_args.base_model, description)
    if decision.warm and not params.train_steps:
        epochs = max(1, math.ceil(schedule.epochs * params.warm_start_share))
        schedule = dataclasses.replace(schedule, epochs=epochs)
    return decision, schedule


def _warm_start_record(model, decision, epochs: int, planned: int) -> dict:
    """Loads the base model's weights if warm; fit_stats' `warm_start` entry either way."""
    if not decision.warm:
        print(f"          warm start: no, {decision.reason}; training from scratch",
              flush=True)
        return {"from": None, "reason": decision.reason}
    loaded = warm_start.load(model, decision)
    print(f"          warm start: from {os.path.dirname(decision.source)} ({decision.reason}),"
          f" {loaded} layers loaded, {epochs} epochs instead of {planned}", flush=True)
    return {"from": os.path.dirname(decision.source), "reason": decision.reason,
            "new_head": decision.new_head, "layers_loaded": loaded, "epochs": epochs,
            "planned_epochs": planned}


def _worker_files(patterns, dist) -> Tuple[list, bool]:
    """This worker's files and True when every worker can have whole files; else all, False.

    Sharding by file is done here, not by tf.data's FILE policy: that
    rewrite fails on tfxio's datasets ("Found an unshardable source dataset:
    RangeDataset"), and TensorFlow's AUTO then gives up too.
    """
    if dist.workers <= 1 or dist.coordinated:
        return patterns, False
    paths = sorted(f for pattern in patterns for f in files.glob(pattern))
    if len(paths) < dist.workers:
        return patterns, False
    return paths[dist.task_index::dist.workers], True


def _sharded(dataset: tf.data.Dataset, dist, by_file: bool) -> tf.data.Dataset:
    """Each worker of a cluster reads its share: its own files, or its share of the batches.

    With whole files per worker (_worker_files) nothing is left to shard
    (OFF); otherwise DATA: every worker reads every example and keeps its
    share of the batches.
    """
    if dist.workers <= 1:
        return dataset
    policy = tf.data.experimental.AutoShardPolicy
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = policy.OFF if by_file else policy.DATA
    logging.info("input across %d workers: %s", dist.workers,
                 "each its own files" if by_file else "sharded by DATA")
    return dataset.with_options(options)


def _wait_for(path: str, seconds: float) -> None:
    """Waits until the chief's model is there; RuntimeError after `seconds`."""
    deadline = time.monotonic() + seconds
    while not files.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the chief wrote no model ({path}) within {seconds:.0f} s")
        time.sleep(1.0)
