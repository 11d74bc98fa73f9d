"""Training input efficiency: the Trainer's fit against the same model fed from NumPy.

    bash scripts/bench.sh training                  # runs the pipeline once, ~2 min
    bash scripts/bench.sh training --output outputs # reuse a finished run's artifacts

The Trainer records its own steady-state rate (modules/progress.FitThroughput:
training examples per second, from epoch start to validation, epochs 2..N)
in summary.json. The baseline, in this process: the train split decoded and
normalized through the same transform graph into NumPy arrays, fed to the
same Keras model, batch size, optimizer, strategy, epochs and steps through
`tf.data.Dataset.from_tensor_slices` (in memory, shuffled, complete batches),
timed by the same callback. A third figure is the Trainer's input pipeline
alone (modules/trainer.make_dataset, no model): if it is much faster than the
model, the input never starves the model. Writes bench/results/training.json.

Goal (issue 8): Trainer >= 0.9x the NumPy baseline.
"""
import argparse
import os
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


def input_only(uris: dict, tft_output, config: PipelineConfig, batches: int = 60) -> float:
    """Examples/s of the Trainer's own input pipeline with nothing consuming it."""
    from tfx.components.util import tfxio_utils
    from tfx.types import standard_artifacts
    from modules.augment import Augmentation
    from modules.trainer import make_dataset
    examples = standard_artifacts.Examples()
    examples.uri, examples.split_names = uris["examples"], '["train", "eval"]'
    accessor = types.SimpleNamespace(tf_dataset_factory=tfxio_utils
                                     .get_tf_dataset_factory_from_artifact([examples], []))
    dataset = make_dataset([os.path.join(uris["examples"], "Split-train", "*")], accessor,
                           tft_output, config.batch_size, True, config.seed,
                           Augmentation(config.augment_crop, config.augment_flip,
                                        config.augment_color))
    iterator = iter(dataset)
    for _ in range(5):  # warm-up: tracing, first reads
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
    args = parser.parse_args(argv)
    config = PipelineConfig()
    output = args.output
    if output is None:
        from bench.e2e import one_run
        output = tempfile.mkdtemp(prefix="imagepipe-bench-training-")
        one_run(config.data, output, args.run_args.split())
    trainer = read_summary(output)["training"]
    uris = artifact_uris(output, config.pipeline_name)
    images, labels, tft_output = train_arrays(uris)
    epochs = len(trainer["epoch_seconds"])
    steps = trainer["examples_per_epoch"] // config.batch_size
    baseline = numpy_fit(images, labels, config, epochs, steps)
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
        "rows": rows, "goal": {"value": ratio, "goal": f">= {GOAL}", "met": ratio >= GOAL},
        "trainer": trainer, "numpy": baseline})


if __name__ == "__main__":
    main()
