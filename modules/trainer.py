"""The Trainer's `run_fn`: train on transformed images under the right strategy, export.

The pieces, one job each, are in modules/training/: the datasets, the
callbacks, the model and its phases, the warm-start decision, the time budget,
whether a training repeats, and a cluster's other workers.
"""
import dataclasses
import os
import shutil
import time

import tensorflow_transform as tft
import tf_keras as keras
from absl import logging
from tfx.components.trainer.fn_args_utils import FnArgs  # not tfx.v1: see pipeline/dag.py

from core.contract import (EVAL, LABELS_FILE, TRAIN, decode_cache_folder,
                           examples_uri_of, read_labels)
from modules import autograph_rules
from modules.networks import user_module
from modules.cluster import parameter_servers
from modules.cluster.tf_config import has_parameter_servers, read_cluster, serves
from modules.training import warm_start
from modules.training.decode_cache import CACHE_DIR, remove_caches
from modules.distribution import select_strategy
from modules.epoch_progress import add_fit_stats
from modules.networks.keras_model import float32_copy
from modules.params import BACKBONE_NAMES, TrainerParams
from modules.schedule import phases, training_schedule
from modules.signatures import export
from modules.training.input_pipeline import image_shape, training_datasets
from modules.training.model_setup import (build_compiled, class_weights_for, fit_phases,
                                          new_model, user_module_of)
from modules.training.repeat import first_interruption, repeat_record
from modules.training.budget import cap_epochs, fit_cap as budget_callback
from modules.training.starting_point import warm_start_decision, warm_start_record
from modules.training.other_workers import scratch_folder, wait_for
from modules.networks.space import apply as apply_tuned, weights_key

autograph_rules.install()


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
    scratch = scratch_folder(fn_args, params)
    try:
        _train(fn_args, params, dist, os.path.join(scratch, "run"),
               os.path.join(scratch, "model"), run_started)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    wait_for(os.path.join(fn_args.serving_model_dir, "saved_model.pb"), params.rendezvous_s)


def _train(fn_args: FnArgs, params: TrainerParams, dist, run_dir: str, model_dir: str,
           run_started: float) -> None:
    """Trains, then exports to `model_dir` and writes the fit stats into `run_dir`."""
    tft_output = tft.TFTransformOutput(fn_args.transform_output)
    labels = read_labels(os.path.join(examples_uri_of(fn_args.train_files[0]), LABELS_FILE))
    module = user_module_of(params)
    augment = user_module.augment_fn(module, params) if module else None
    with remove_caches(_cache_folder(fn_args, params)) as cache_dir:
        datasets = lambda: training_datasets(fn_args, params, tft_output, dist,  # noqa: E731
                                             len(labels), cache_dir, augment)
        train, evaluation, sizes = datasets()
        schedule = training_schedule(params, sizes[TRAIN], sizes[EVAL], dist.global_batch)
        description = warm_start.describe(
            params.model, params.module_sha256, image_shape(tft_output), labels,
            weights_key(params))
        if params.tuned_values and dist.is_chief:
            _print_tuned(params.tuned_values)
        planned = schedule.epochs
        decision, schedule = warm_start_decision(fn_args, params, description, schedule)
        build = lambda s: build_compiled(params, dist, tft_output, len(labels),  # noqa: E731
                                         phases(params, s)[0], module)
        time_cap, schedule, train, evaluation = cap_epochs(params, dist, schedule, build,
                                                            train, evaluation, datasets)
        first_phase = phases(params, schedule)[0]
        model = build_compiled(params, dist, tft_output, len(labels), first_phase, module)
        fit_cap = budget_callback(params, dist, schedule, first_phase, fn_args)
        warm = warm_start_record(model, decision, schedule.epochs, planned)
        weights = class_weights_for(fn_args, params, labels, dist)
        started = time.perf_counter()
        epochs_run, stopped = fit_phases(model, fn_args, params, dist, schedule, train,
                                         evaluation, run_dir, weights,
                                         extra_callbacks=[fit_cap] if fit_cap else [])
        ended = time.perf_counter()
        time_cap = dataclasses.asdict(fit_cap.result) if fit_cap and fit_cap.result else time_cap
        stopped = first_interruption(stopped, fit_cap.interrupted if fit_cap else None)
    add_fit_stats(run_dir, setup_s=started - run_started, fit_call_s=ended - started,
                  epochs_run=epochs_run,
                  **_fit_record(params, dist, schedule, warm, weights, time_cap, stopped))
    started = time.perf_counter()
    # Before export, which adds Transform's layer (not a Keras one) to the model.
    warm_start.save(model, description, model_dir)
    export(float32_copy(model, lambda: new_model(params, tft_output, len(labels), module)),
           tft_output, labels, model_dir, params.test_flip)
    if params.model in BACKBONE_NAMES:
        from modules.networks.backbones import save_backbone_weights
        save_backbone_weights(model, run_dir)
    add_fit_stats(run_dir, export_s=time.perf_counter() - started)


def _cache_folder(fn_args: FnArgs, params: TrainerParams) -> str:
    """The decode cache's folder: one per execution and process, since concurrent runs on
    a cluster may share the root, and a killed run's folder is found by its dead process."""
    trainer_root = os.path.dirname(os.path.dirname(fn_args.model_run_dir))
    cache_root = params.cache_root or os.path.join(trainer_root, CACHE_DIR)
    return decode_cache_folder(cache_root, os.path.basename(fn_args.model_run_dir), os.getpid())


def _print_tuned(values: dict) -> None:
    print("          tuned: " + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                                          for k, v in sorted(values.items())), flush=True)


def _fit_record(params: TrainerParams, dist, schedule, warm: dict, weights, time_cap,
                interrupted) -> dict:
    """fit_stats' record of the training besides its times (summary.json's `training`),
    with whether and how it repeats (modules/training/repeat.py)."""
    decided = time_cap["epochs_decided"] if time_cap else schedule.epochs
    return dict(epochs_planned=schedule.epochs, strategy=dist.name, workers=dist.workers,
                replicas=dist.replicas, parameter_servers=dist.parameter_servers,
                warm_start=warm, hyperparameters=params.tuned_values or None,
                class_weights=None if weights is None else [round(weights[i], 4)
                                                            for i in sorted(weights)],
                time_cap=time_cap,
                **repeat_record(params, decided, interrupted, started_from_state=bool(
                    warm["from"] or params.hyperparameters is not None)))
