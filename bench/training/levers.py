"""CPU training levers: bfloat16, XLA and oneDNN's bf16 math against float32, same model.

    bash scripts/bench.sh training/levers  # photo at 128 px, cnn at 28 px
    bash scripts/bench.sh training/levers --models photo:160 --seconds 5

Each lever trains one of the Trainer's built-in models (modules/network_registry.py)
on random in-memory images, in a fresh process: a warm-up (which takes any
compilation) sizes an epoch to about --seconds, and the median of 3 such
epochs gives the examples/s:
  float32          the baseline: what the plan runs on a CPU today;
  mixed_bfloat16   Keras's mixed precision with bfloat16 compute;
  xla              jit_compile=True in compile();
  onednn_bf16      float32 Keras, with ONEDNN_DEFAULT_FPMATH_MODE=BF16, which
                   lets oneDNN compute float32 convolutions and matmuls in bf16.
Prints each lever's ratio to float32 for the same model and writes
bench/results/levers.json. Throughput only: a lever slower per example cannot
win accuracy at a fixed time budget, the same steps being fewer.
"""
import argparse

from bench.common import machine_info, print_table, run_result_in_process, write_results

LEVERS = ("float32", "mixed_bfloat16", "xla", "onednn_bf16")
MODELS = ("photo:128", "cnn:28")
BATCH = 64


def throughput(lever: str, model: str, size: int, seconds: float) -> dict:
    """examples/s of `model` at `size` px under `lever`, in this process."""
    import statistics
    import time

    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    from modules.network_registry import builder
    keras.mixed_precision.set_global_policy(
        "mixed_bfloat16" if lever == "mixed_bfloat16" else "float32")
    rng = np.random.default_rng(0)
    images = rng.random((BATCH * 8, size, size, 3), np.float32)
    labels = rng.integers(0, 5, len(images))
    data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(BATCH).cache().repeat()
    net = builder(model)((size, size, 3), 5)
    net.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=lever == "xla",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=False))
    net.fit(data, steps_per_epoch=2, epochs=1, verbose=0)  # compilation, if any
    start = time.perf_counter()
    net.fit(data, steps_per_epoch=3, epochs=1, verbose=0)
    steps = max(3, min(500, round(seconds * 3 / (time.perf_counter() - start))))
    ends = []
    timer = keras.callbacks.LambdaCallback(on_epoch_end=lambda *_: ends.append(time.perf_counter()))
    ends.append(time.perf_counter())
    net.fit(data, steps_per_epoch=steps, epochs=3, verbose=0, callbacks=[timer])
    epoch = statistics.median(b - a for a, b in zip(ends, ends[1:]))
    return {"examples_per_s": BATCH * steps / epoch, "steps": steps}


def _measure(lever: str, model: str, size: int, seconds: float) -> dict:
    env = "import os; os.environ['ONEDNN_DEFAULT_FPMATH_MODE'] = 'BF16'; " \
        if lever == "onednn_bf16" else ""
    code = (f"{env}import json; from bench.training.levers import throughput; "
            f"print('RESULT', json.dumps(throughput({lever!r}, {model!r}, {size}, {seconds})))")
    return run_result_in_process(code, f"{lever} on {model} at {size} px")


def main(argv=None) -> dict:
    """Every lever on every model; prints the table of ratios, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="NAME:SIZE each")
    parser.add_argument("--levers", nargs="+", default=list(LEVERS), choices=LEVERS)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of a timed epoch")
    args = parser.parse_args(argv)
    levers = ["float32", *(lever for lever in args.levers if lever != "float32")]
    rows = []
    for spec in args.models:
        model, size = spec.split(":")
        baseline = None
        for lever in levers:
            speed = _measure(lever, model, int(size), args.seconds)["examples_per_s"]
            baseline = baseline or speed
            rows.append({"model": model, "size": int(size), "lever": lever,
                         "examples_per_s": speed, "ratio": speed / baseline})
    print_table(rows, ["model", "size", "lever", "examples_per_s", "ratio"])
    return write_results("levers", {"machine": machine_info(), "seconds": args.seconds,
                                    "batch": BATCH, "rows": rows})


if __name__ == "__main__":
    main()
