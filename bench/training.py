"""Training input efficiency: the Trainer's fit against the same model fed from NumPy.

    bash scripts/bench.sh training                  # a pipeline run, then 3+3 fits; ~5 min
    bash scripts/bench.sh training --output outputs # reuse a finished run's artifacts

Both sides run in this process, interleaved, --repeat times each (medians):
- the Trainer: TFX's Trainer executor (GenericExecutor, our run_fn) on the
  run's examples and transform graph, with the run's steps and settings;
  its own steady-state rate (modules/progress.FitThroughput: training
  examples/s from epoch start to validation, epochs 2..N);
- the baseline: the train split decoded and normalized through the same
  transform graph into NumPy arrays, fed to the same Keras model, batch size,
  optimizer, strategy, epochs and steps through
  `tf.data.Dataset.from_tensor_slices` (in memory, shuffled, complete
  batches), timed by the same callback.
A third figure is the Trainer's input pipeline alone (modules/trainer.make_dataset,
no model): if it is much faster than the model, the input never starves it.
Writes bench/results/training.json.

Goal (issue 8): Trainer >= 0.9x the NumPy baseline.
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time
import types

import numpy as np

from bench.common import machine_info, print_table, read_summary, write_results
from pipeline.config import PipelineConfig

GOAL = 0.9


def artifact_uris(output: str, pipeline_name: str) -> dict:
    """{"examples", "transform_graph"} URIs of the latest run in `output`."""
    from pipeline import summary
    config = PipelineConfig(output=output, pipeline_name=pipeline_name)
    store = summary.open_store(config)
    nodes = summary.latest_run(store, pipeline_name)
    return {"examples": summary.outputs(store, nodes["ImageExampleGen"])["Examples"].uri,
            "transform_graph": summary.outputs(store, nodes["Transform"])["TransformGraph"].uri}


def train_arrays(uris: dict):
    """(images, labels, tft_output): the train split through the transform graph."""
    import tensorflow as tf
    import tensorflow_transform as tft
    from modules.preprocessing import IMAGE_XF, LABEL_XF
    tft_output = tft.TFTransformOutput(uris["transform_graph"])
    files = tf.io.gfile.glob(os.path.join(uris["examples"], "Split-train", "*"))
    layer = tft_output.transform_features_layer()
    spec = tft_output.raw_feature_spec()
    images, labels = [], []
    for batch in tf.data.TFRecordDataset(files, compression_type="GZIP").batch(256):
        xf = layer(tf.io.parse_example(batch, spec))
        images.append(xf[IMAGE_XF].numpy())
        labels.append(xf[LABEL_XF].numpy())
    return np.concatenate(images), np.concatenate(labels), tft_output


def numpy_fit(images, labels, config: PipelineConfig, epochs: int, steps: int) -> dict:
    """The Trainer's model and settings, fed from in-memory arrays; FitThroughput's stats."""
    import tensorflow as tf
    import tf_keras as keras
    from modules.model import MODELS, compile_model
    from modules.progress import FitThroughput, read_fit_stats
    from modules.strategy import select_strategy
    keras.utils.set_random_seed(config.seed)
    plan = select_strategy(config.tpu, config.batch_size,
                           mixed_precision=not config.full_precision)
    dataset = (tf.data.Dataset.from_tensor_slices((images, labels))
               .shuffle(len(images), seed=config.seed).repeat()
               .batch(plan.global_batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
    with plan.strategy.scope():
        model = compile_model(MODELS[config.model](images.shape[1:], int(labels.max()) + 1),
                              config.optimizer, config.learning_rate,
                              config.steps_per_execution)
    with tempfile.TemporaryDirectory() as folder:
        model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0,
                  callbacks=[FitThroughput(os.path.join(folder, "fit_stats.json"),
                                           plan.global_batch, steps)])
        return read_fit_stats(folder)


def trainer_fit(uris: dict, config: PipelineConfig, train_steps: int, eval_steps: int) -> dict:
    """Runs TFX's Trainer executor (our run_fn) on the run's artifacts; FitThroughput's stats."""
    import json
    from google.protobuf import json_format
    from tfx.components.trainer import executor
    from tfx.proto import trainer_pb2
    from tfx.types import standard_artifacts
    from modules.progress import read_fit_stats
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = uris["examples"], '["train", "eval"]'
    graph = standard_artifacts.TransformGraph()
    graph.uri = uris["transform_graph"]
    with tempfile.TemporaryDirectory() as folder:
        model, model_run = standard_artifacts.Model(), standard_artifacts.ModelRun()
        # As TFX lays them out: the Trainer's backup folder then lands in `folder` too.
        model.uri = os.path.join(folder, "Trainer", "model", "1")
        model_run.uri = os.path.join(folder, "Trainer", "model_run", "1")
        executor.GenericExecutor().Do(
            {"examples": [examples], "transform_graph": [graph]},
            {"model": [model], "model_run": [model_run]},
            {"train_args": json_format.MessageToJson(trainer_pb2.TrainArgs(num_steps=train_steps)),
             "eval_args": json_format.MessageToJson(trainer_pb2.EvalArgs(num_steps=eval_steps)),
             "run_fn": "modules.trainer.run_fn",
             "custom_config": json.dumps(config.trainer_config())})
        return read_fit_stats(model_run.uri)


def input_only(uris: dict, tft_output, config: PipelineConfig, batches: int = 60) -> float:
    """Examples/s of the Trainer's own input pipeline with nothing consuming it."""
    from tfx.components.util import tfxio_utils
    from tfx.types import standard_artifacts
    from modules.augment import Augmentation
    from modules.trainer import make_dataset, split_size
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = uris["examples"], '["train", "eval"]'
    accessor = types.SimpleNamespace(tf_dataset_factory=tfxio_utils
                                     .get_tf_dataset_factory_from_artifact([examples], []))
    pattern = os.path.join(uris["examples"], "Split-train", "*")
    dataset = make_dataset([pattern], accessor, tft_output, config.batch_size, True,
                           config.seed, Augmentation(config.augment_crop, config.augment_flip,
                                                     config.augment_color),
                           split_size(pattern))
    iterator = iter(dataset)
    for _ in range(20):  # warm-up: tracing, first reads (and filling a cache)
        next(iterator)
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches * config.batch_size / (time.perf_counter() - start)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", help="a finished `imagepipe run` output to reuse; "
                        "default: run the pipeline on the bundled data into a temp folder")
    parser.add_argument("--run-args", default="", help="extra `imagepipe run` flags")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, interleaved")
    args = parser.parse_args(argv)
    config = PipelineConfig()
    if args.output is not None:
        return measure(args, config, args.output)
    from bench.e2e import one_run
    output = tempfile.mkdtemp(prefix="imagepipe-bench-training-")
    try:
        one_run(config.data, output, args.run_args.split())
        return measure(args, config, output)
    finally:
        shutil.rmtree(output, ignore_errors=True)


def measure(args, config, output: str) -> dict:
    """Interleaved Trainer and NumPy fits on the train split of a finished run."""
    recorded = read_summary(output)["training"]
    epochs = len(recorded["epoch_seconds"])
    steps = recorded["examples_per_epoch"] // config.batch_size
    uris = artifact_uris(output, config.pipeline_name)
    images, labels, tft_output = train_arrays(uris)
    trainers, baselines = [], []
    for _ in range(args.repeat):
        trainers.append(trainer_fit(uris, config, epochs * steps, config.eval_steps))
        baselines.append(numpy_fit(images, labels, config, epochs, steps))
    rate = lambda runs: statistics.median(r["examples_per_s"] for r in runs)  # noqa: E731
    first = lambda runs: statistics.median(r["first_epoch_s"] for r in runs)  # noqa: E731
    trainer = {"examples_per_s": rate(trainers), "first_epoch_s": first(trainers)}
    baseline = {"examples_per_s": rate(baselines), "first_epoch_s": first(baselines)}
    feed = input_only(uris, tft_output, config)
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
    print_table(rows, ["feed", "examples_per_s", "ratio", "first_epoch_s"])
    ratio = rows[1]["ratio"]
    print(f"goal trainer/numpy: {ratio:.3f} (goal >= {GOAL}): {'met' if ratio >= GOAL else 'MISSED'}")
    return write_results("training", {
        "machine": machine_info(), "batch_size": config.batch_size, "model": config.model,
        "epochs": epochs, "steps_per_epoch": steps, "train_examples": len(images),
        "repeat": args.repeat, "rows": rows,
        "goal": {"value": ratio, "goal": f">= {GOAL}", "met": ratio >= GOAL},
        "trainer_runs": trainers, "numpy_runs": baselines, "pipeline_run": recorded})


if __name__ == "__main__":
    main()
