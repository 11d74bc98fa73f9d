"""Training input efficiency: the Trainer's fit against the same model fed from NumPy.

    bash scripts/bench.sh training/trainer_input                   # a pipeline run, then 3+3 fits
    bash scripts/bench.sh training/trainer_input --output outputs  # a finished run's artifacts
    bash scripts/bench.sh training/trainer_input --data ~/datasets/flowers_photos --repeat 1

Run time on 2 cores: docs/performance.md (the benchmarks table).

Both sides run in this process, interleaved, --repeat times each (medians):
- the Trainer: TFX's Trainer executor (GenericExecutor, our run_fn) on the
  run's examples and transform graph, with the run's planned settings
  (summary.json `plan`) for as many epochs as the run trained, without
  early stopping;
  its own steady-state rate (modules/epoch_progress.FitThroughput: training
  examples/s from epoch start to validation, epochs 2..N);
- the baseline: the train split decoded and normalized through the same
  transform graph into NumPy arrays, fed to the same Keras model, batch size,
  optimizer, strategy, epochs and steps (no augmentation) through
  `tf.data.Dataset.from_tensor_slices` (in memory, shuffled, complete
  batches), timed by the same callback.
A third figure is the Trainer's input pipeline alone
(modules/training/input_pipeline.make_dataset, no model): if it is much faster than the
model, the input never starves it.
Writes bench/results/training.json.

Goal: Trainer >= 0.9x the NumPy baseline, on mnist_1k and flowers.
"""
import argparse
import contextlib
import dataclasses
import os
import shutil
import statistics
import tempfile
import time
import types

import numpy as np

from bench.common import machine_info, print_table, read_summary, write_results
from settings.config import PipelineConfig

GOAL = 0.9


def artifact_uris(output: str, pipeline_name: str) -> dict:
    """{"examples", "transform_graph"} URIs of the latest run in `output`."""
    from report import metadata
    config = PipelineConfig.from_values(output=output, pipeline_name=pipeline_name)
    store = metadata.open_store(config)
    nodes = metadata.latest_run(store, pipeline_name)
    return {"examples": metadata.outputs(store, nodes["ImageExampleGen"])["Examples"].uri,
            "transform_graph": metadata.outputs(store, nodes["Transform"])["TransformGraph"].uri}


def train_arrays(uris: dict):
    """(images, labels, tft_output): the train split through the transform graph."""
    import tensorflow as tf
    import tensorflow_transform as tft
    from core.contract import IMAGE_XF, LABEL_XF, TRAIN, split_dir
    from core.storage import files
    tft_output = tft.TFTransformOutput(uris["transform_graph"])
    folder = split_dir(uris["examples"], TRAIN)
    records = [os.path.join(folder, name) for name in files.list_dir(folder)[1]]
    layer = tft_output.transform_features_layer()
    spec = tft_output.raw_feature_spec()
    images, labels = [], []
    for batch in tf.data.TFRecordDataset(records, compression_type="GZIP").batch(256):
        xf = layer(tf.io.parse_example(batch, spec))
        images.append(xf[IMAGE_XF].numpy())
        labels.append(xf[LABEL_XF].numpy())
    return np.concatenate(images), np.concatenate(labels), tft_output


def run_params(summary: dict):
    """The Trainer's params of a finished run, fixed to the epochs it trained, no early stop."""
    from settings.config import PLANNED
    from pipeline.planning.data_facts import DataFacts
    from pipeline.planning.plan import make_plan
    values = summary["plan"]["values"]
    config = PipelineConfig.from_values(**{name: values[name] for name in PLANNED})
    plan = make_plan(config, DataFacts(**summary["plan"]["data"]), values["hardware"],
                     values["cache_bytes"] * 8)
    return dataclasses.replace(plan.trainer_params(), epochs=len(
        summary["training"]["epoch_seconds"]), early_stopping_patience=0,
        cache_bytes=values["cache_bytes"])


def numpy_fit(images, labels, params, epochs: int, steps: int, augment: bool = False) -> dict:
    """The Trainer's model and settings, fed from in-memory arrays; FitThroughput's stats.

    `augment`: the Trainer's augmentation (modules/augment) on each batch too.
    """
    import tensorflow as tf
    import tf_keras as keras
    from modules.network_registry import builder
    from modules.networks.keras_model import compile_model
    from modules.epoch_progress import FitThroughput, read_fit_stats
    from modules.distribution import select_strategy
    keras.utils.set_random_seed(params.seed)
    plan = select_strategy(params.tpu, params.batch_size,
                           mixed_precision=not params.full_precision)
    classes = int(labels.max()) + 1
    from modules.augment import Augmentation, augment_batches
    dataset = (tf.data.Dataset.from_tensor_slices((images, np.eye(classes)[labels]))
               .shuffle(len(images), seed=params.seed).repeat()
               .batch(plan.global_batch, drop_remainder=True))
    if augment:
        dataset = augment_batches(dataset, Augmentation.of(params), params.seed)
    dataset = dataset.prefetch(tf.data.AUTOTUNE)
    with plan.strategy.scope():
        model = compile_model(builder(params.model)(images.shape[1:], classes),
                              params.optimizer, params.learning_rate,
                              params.steps_per_execution, params.label_smoothing)
    with tempfile.TemporaryDirectory() as folder:
        model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0,
                  callbacks=[FitThroughput(os.path.join(folder, "fit_stats.json"),
                                           plan.global_batch, steps)])
        return read_fit_stats(folder)


def trainer_fit(uris: dict, params, stream: bool = False) -> dict:
    """Runs TFX's Trainer executor (our run_fn) on the run's artifacts; FitThroughput's stats.

    `stream`: without the decode cache, every epoch decodes and transforms
    again (as every split over 256 MB did before the plan's decode-cache budget).
    """
    import json
    from unittest import mock
    from modules.training import decode_cache
    from google.protobuf import json_format
    from tfx.components.trainer import executor
    from tfx.proto import trainer_pb2
    from tfx.types import standard_artifacts
    from modules.epoch_progress import read_fit_stats
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = uris["examples"], '["train", "eval"]'
    graph = standard_artifacts.TransformGraph()
    graph.uri = uris["transform_graph"]
    with tempfile.TemporaryDirectory() as folder:
        model, model_run = standard_artifacts.Model(), standard_artifacts.ModelRun()
        # As TFX lays them out: the Trainer's backup folder then lands in `folder` too.
        model.uri = os.path.join(folder, "Trainer", "model", "1")
        model_run.uri = os.path.join(folder, "Trainer", "model_run", "1")
        # Patched at its source, which modules/training/input_pipeline.py reads through
        # the module at call time.
        streamed = mock.patch.object(decode_cache, "plan_caches",
                                     lambda sizes, *a: {split: None for split in sizes})
        with streamed if stream else contextlib.nullcontext():
            executor.GenericExecutor().Do(
                {"examples": [examples], "transform_graph": [graph]},
                {"model": [model], "model_run": [model_run]},
                {"train_args": json_format.MessageToJson(trainer_pb2.TrainArgs(
                    splits=["train"])),
                 "eval_args": json_format.MessageToJson(trainer_pb2.EvalArgs(splits=["eval"])),
                 "run_fn": "modules.trainer.run_fn",
                 "custom_config": json.dumps(params.to_custom_config())})
        return read_fit_stats(model_run.uri)


def input_only(uris: dict, tft_output, params, classes: int, cached: bool,
               batches: int = 60) -> float:
    """Examples/s of the Trainer's own input pipeline with nothing consuming it.

    `cached`: after a whole first pass, from the decode cache in memory;
    otherwise decoding and transforming every batch.
    """
    from tfx.components.util import tfxio_utils
    from tfx.types import standard_artifacts
    from modules.augment import Augmentation
    from modules.training.decode_cache import MEMORY
    from core.contract import TRAIN, split_dir, split_size
    from modules.training.input_pipeline import make_dataset
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = uris["examples"], '["train", "eval"]'
    accessor = types.SimpleNamespace(tf_dataset_factory=tfxio_utils
                                     .get_tf_dataset_factory_from_artifact([examples], []))
    pattern = os.path.join(split_dir(uris["examples"], TRAIN), "*")
    examples = split_size(uris["examples"], TRAIN)
    dataset = make_dataset([pattern], accessor, tft_output, params.batch_size, True,
                           params.seed, classes,
                           Augmentation.of(params),
                           examples, MEMORY if cached else None)
    iterator = iter(dataset)
    # Warm-up: tracing and first reads, and with the cache its whole first pass.
    for _ in range(examples // params.batch_size + 2 if cached else 20):
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * params.batch_size / (time.perf_counter() - start)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", help="a finished `imagepipe run` output to reuse; "
                        "default: run the pipeline on the bundled data into a temp folder")
    parser.add_argument("--data", default=PipelineConfig.from_values().ingest.data,
                        help="dataset of the pipeline run (default: the bundled digits)")
    parser.add_argument("--run-args", default="", help="extra `imagepipe run` flags")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, interleaved")
    parser.add_argument("--augmented-baseline", action="store_true", help="also time the "
                        "NumPy fit with the Trainer's augmentation on its batches")
    parser.add_argument("--stream", action="store_true", help="also time the Trainer "
                        "without its decode cache (decoding every epoch)")
    parser.add_argument("--epochs", type=int, help="epochs of each fit (default: as many "
                        "as the run trained; a few suffice for the steady-state rate)")
    args = parser.parse_args(argv)
    config = PipelineConfig.from_values()
    if args.output is not None:
        return measure(args, config, args.output)
    from bench.pipeline_runs.e2e import one_run
    output = tempfile.mkdtemp(prefix="imagepipe-bench-training-")
    try:
        one_run(args.data, output, args.run_args.split())
        return measure(args, config, output)
    finally:
        shutil.rmtree(output, ignore_errors=True)


def measure(args, config, output: str) -> dict:
    """Interleaved Trainer and NumPy fits on the train split of a finished run."""
    summary = read_summary(output)
    recorded, params = summary["training"], run_params(summary)
    if args.epochs:
        params = dataclasses.replace(params, epochs=args.epochs)
    epochs = params.epochs
    steps = recorded["examples_per_epoch"] // params.batch_size
    uris = artifact_uris(output, config.run.pipeline_name)
    images, labels, tft_output = train_arrays(uris)
    trainers, baselines = [], []
    for _ in range(args.repeat):
        trainers.append(trainer_fit(uris, params))
        baselines.append(numpy_fit(images, labels, params, epochs, steps))
    trainer, baseline = _medians(trainers), _medians(baselines)
    classes = int(labels.max()) + 1
    feed = input_only(uris, tft_output, params, classes, cached=True)
    rows = [
        {"feed": "NumPy arrays (baseline)", "examples_per_s": baseline["examples_per_s"],
         "ratio": 1.0, "first_epoch_s": baseline["first_epoch_s"]},
        {"feed": "Trainer (TFRecords + transform graph)",
         "examples_per_s": trainer["examples_per_s"],
         "ratio": trainer["examples_per_s"] / baseline["examples_per_s"],
         "first_epoch_s": trainer["first_epoch_s"]},
        {"feed": "Trainer input pipeline alone (no model)", "examples_per_s": feed,
         "ratio": feed / baseline["examples_per_s"], "first_epoch_s": ""},
    ]
    _add_optional_rows(rows, args, uris, tft_output, params, (images, labels), steps)
    print_table(rows, ["feed", "examples_per_s", "ratio", "first_epoch_s"])
    ratio = next(r["ratio"] for r in rows if r["feed"].startswith("Trainer (TFRecords"))
    verdict = "met" if ratio >= GOAL else "MISSED"
    print(f"goal trainer/numpy: {ratio:.3f} (goal >= {GOAL}): {verdict}")
    return write_results("training", {
        "machine": machine_info(), "batch_size": params.batch_size, "model": params.model,
        "data": summary["data"]["path"],
        "epochs": epochs, "steps_per_epoch": steps, "train_examples": len(images),
        "repeat": args.repeat, "rows": rows,
        "goal": {"value": ratio, "goal": f">= {GOAL}", "met": ratio >= GOAL},
        "trainer_runs": trainers, "numpy_runs": baselines, "pipeline_run": recorded})


def _medians(runs: list) -> dict:
    """The median examples/s and first-epoch seconds of a side's runs."""
    return {"examples_per_s": statistics.median(r["examples_per_s"] for r in runs),
            "first_epoch_s": statistics.median(r["first_epoch_s"] for r in runs)}


def _add_optional_rows(rows: list, args, uris: dict, tft_output, params, arrays: tuple,
                       steps: int) -> None:
    """Adds the rows of --augmented-baseline and --stream to `rows` (baseline first)."""
    images, labels = arrays
    baseline_rate = rows[0]["examples_per_s"]
    if args.augmented_baseline:
        augmented = numpy_fit(images, labels, params, params.epochs, steps, augment=True)
        rows.insert(1, {"feed": "NumPy arrays + the Trainer's augmentation",
                        "examples_per_s": augmented["examples_per_s"],
                        "ratio": augmented["examples_per_s"] / baseline_rate,
                        "first_epoch_s": augmented["first_epoch_s"]})
    if args.stream:
        classes = int(labels.max()) + 1
        streamed = trainer_fit(uris, params, stream=True)
        decode = input_only(uris, tft_output, params, classes, cached=False)
        rows += [{"feed": "Trainer without decode cache", "first_epoch_s":
                  streamed["first_epoch_s"], "examples_per_s": streamed["examples_per_s"],
                  "ratio": streamed["examples_per_s"] / baseline_rate},
                 {"feed": "its input pipeline alone (no model)", "examples_per_s": decode,
                  "ratio": decode / baseline_rate, "first_epoch_s": ""}]

if __name__ == "__main__":
    main()
