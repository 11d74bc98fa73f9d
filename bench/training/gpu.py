"""GPU training throughput: mixed precision (mixed_float16) against float32, same model.

    bash scripts/bench.sh training/gpu              # skips cleanly when no GPU is visible
    bash scripts/bench.sh training/gpu --steps 300  # longer timing window

On each visible GPU configuration, builds the Trainer's model through the
same strategy selection (modules/distribution.select_strategy: MirroredStrategy
over several GPUs), feeds it random in-memory 64x64 RGB images, and times
steady-state training examples/s with modules/epoch_progress.FitThroughput, once
under float32 (the baseline) and once under mixed_float16. With no GPU it
prints why and writes {"skipped": ...} to bench/results/gpu.json, exit 0.
"""
import argparse
import os
import tempfile

import numpy as np

from bench.common import machine_info, print_table, write_results


def throughput(policy: str, model_name: str, batch: int, steps: int, epochs: int = 3) -> dict:
    """Steady-state examples/s of `model_name` under `policy` on the visible GPUs."""
    import tensorflow as tf
    import tf_keras as keras
    from modules.network_registry import builder
    from modules.networks.keras_model import compile_model
    from modules.epoch_progress import FitThroughput, read_fit_stats
    from modules.distribution import select_strategy
    plan = select_strategy(None, batch, mixed_precision=policy != "float32")
    images = np.random.default_rng(0).random((plan.global_batch * 8, 64, 64, 3), np.float32)
    labels = np.arange(len(images)) % 10
    dataset = (tf.data.Dataset.from_tensor_slices((images, np.eye(10)[labels])).repeat()
               .batch(plan.global_batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(plan.policy)
    try:
        with plan.strategy.scope():
            model = compile_model(builder(model_name)((64, 64, 3), 10), "adam", 1e-3, 1)
    finally:
        keras.mixed_precision.set_global_policy(previous)
    with tempfile.TemporaryDirectory() as folder:
        model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0,
                  callbacks=[FitThroughput(os.path.join(folder, "fit_stats.json"),
                                           plan.global_batch, steps)])
        stats = read_fit_stats(folder)
    return {"policy": plan.policy, "strategy": type(plan.strategy).__name__,
            "replicas": plan.replicas, "global_batch": plan.global_batch,
            "examples_per_s": stats["examples_per_s"]}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet", choices=("cnn", "resnet"))
    parser.add_argument("--batch-size", type=int, default=256, help="per replica")
    parser.add_argument("--steps", type=int, default=100, help="per timed epoch")
    args = parser.parse_args(argv)
    import tensorflow as tf
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        reason = "no GPU visible to TensorFlow on this machine"
        print(f"gpu: skipped: {reason}")
        return write_results("gpu", {"machine": machine_info(), "skipped": reason})
    rows = [throughput(policy, args.model, args.batch_size, args.steps)
            for policy in ("float32", "mixed_float16")]
    for row in rows:
        row["ratio"] = row["examples_per_s"] / rows[0]["examples_per_s"]
    print_table(rows, ["policy", "strategy", "replicas", "global_batch", "examples_per_s",
                       "ratio"])
    return write_results("gpu", {"machine": machine_info(), "model": args.model,
                                 "gpus": [g.name for g in gpus], "rows": rows})


if __name__ == "__main__":
    main()
