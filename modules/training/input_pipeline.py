"""The Trainer's datasets: raw examples mapped through the transform graph, per worker.

Transform is applied on the fly (Transform runs with materialize=False): the
Trainer reads the raw examples and maps them through the transform graph, the
same graph every serving signature embeds. Decoded float images are never
written to disk, which would cost 4 bytes per pixel-channel.
"""
import os
from typing import Callable, Optional, Tuple

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
from absl import logging
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py
from tfx_bsl.public import tfxio

from core.contract import (EVAL, IMAGE_XF, LABEL_XF, TRAIN, examples_uri_of,
                           split_of, split_size)
from core.storage import files
from modules.augment import Augmentation, augment_batches
from modules.cluster.parameter_servers import per_worker
from modules.training import decode_cache
from modules.params import TrainerParams

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
            buffer = decode_cache.shuffle_buffer(examples, image_shape, cache)
            pairs = pairs.shuffle(buffer, seed=shuffle_seed, reshuffle_each_iteration=True)
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


def image_shape(tft_output) -> list:
    return list(tft_output.transformed_feature_spec()[IMAGE_XF].shape)


def training_datasets(fn_args: FnArgs, params: TrainerParams, tft_output, dist, classes: int,
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
    # Through the module: bench/training/trainer_input.py patches it there.
    caches = decode_cache.plan_caches(sizes, image_shape(tft_output), params.cache_bytes,
                                      cache_dir, params.disk_headroom)
    coordinated = dist.coordinated
    if coordinated:
        caches = {split: cache if cache == "" else None for split, cache in caches.items()}
    augmentation = Augmentation.of(params)

    train_files, train_by_file = worker_files(fn_args.train_files, dist)
    eval_files, eval_by_file = worker_files(fn_args.eval_files, dist)

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
    return (sharded(train(), dist, train_by_file),
            sharded(evaluation(), dist, eval_by_file), sizes)


def worker_files(patterns, dist) -> Tuple[list, bool]:
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


def sharded(dataset: tf.data.Dataset, dist, by_file: bool) -> tf.data.Dataset:
    """Each worker of a cluster reads its share: its own files, or its share of the batches.

    With whole files per worker (worker_files) nothing is left to shard
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
