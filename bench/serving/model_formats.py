"""SavedModel against each TFLite quantization: size, latency, throughput, eval accuracy.

    bash scripts/bench.sh serving/model_formats                   # trains first if needed
    bash scripts/bench.sh serving/model_formats --output outputs  # use an existing run's model

Run time on 2 cores: docs/performance.md (the benchmarks table).

Uses the latest pushed SavedModel of `--output` (running `imagepipe run` there
first if there is none) and its eval split, decoded and resized as Transform
does. Every model gets the same float pixels through its `serving_tensor`
signature. Latency is the median of 300 single-image calls after 30 warm-up
calls; throughput is images per second in batches of 64 over the eval split.
Ratios are against the SavedModel, measured in the same process. Writes
bench/results/serving.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from bench.common import machine_info, print_table, write_results

WARMUP, CALLS, BATCH = 30, 300, 64


def _dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)


def _timed(predict, pixels: np.ndarray, labels: np.ndarray) -> dict:
    """Latency (ms, median), throughput (images/s) and accuracy of `predict(batch)`."""
    for i in range(WARMUP):
        predict(pixels[i % len(pixels)][None])
    times = []
    for i in range(CALLS):
        start = time.perf_counter()
        predict(pixels[i % len(pixels)][None])
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    probabilities = np.concatenate([predict(pixels[i:i + BATCH])
                                    for i in range(0, len(pixels), BATCH)])
    seconds = time.perf_counter() - start
    return {"latency_ms": statistics.median(times) * 1e3,
            "throughput_per_s": len(pixels) / seconds,
            "accuracy": float(np.mean(probabilities.argmax(-1) == labels))}


def _ensure_run(output: str) -> dict:
    summary = os.path.join(output, "summary.json")
    if not os.path.exists(summary):
        script = os.path.join(os.path.dirname(sys.executable), "imagepipe")
        subprocess.run([script, "run", "--output", output], check=True)
    with open(summary) as f:
        return json.load(f)


def main(argv=None) -> dict:
    """Measures the SavedModel and every quantization; prints the table, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="/tmp/imagepipe-bench-serving")
    args = parser.parse_args(argv)
    summary = _ensure_run(args.output)
    import tensorflow as tf

    from core.contract import EVAL, TRAIN, split_dir
    from components.image_pusher import tflite
    from components.image_pusher.settings import QUANTIZATIONS
    saved_model = summary["pushed"]["serving"]
    serve = tf.saved_model.load(saved_model).signatures[tflite.SIGNATURE]
    size, _, channels = tflite.input_shape(saved_model)
    examples = summary["data"]["examples_uri"]
    pixels, labels = tflite.split_pixels(split_dir(examples, EVAL), size, channels)
    representative, _ = tflite.split_pixels(split_dir(examples, TRAIN), size,
                                            channels, limit=200)
    rows = [{"model": "SavedModel", "bytes": _dir_bytes(saved_model),
             **_timed(lambda x: serve(pixels=tf.constant(x))["probabilities"].numpy(),
                      pixels, labels)}]
    for quantize in QUANTIZATIONS:
        model = tflite.convert(saved_model, quantize, representative)
        runner = tflite.Runner(model)
        rows.append({"model": f"tflite-{quantize}", "bytes": len(model),
                     **_timed(lambda x: runner(x)["probabilities"], pixels, labels)})
    base = rows[0]
    for row in rows:
        row["size_ratio"] = row["bytes"] / base["bytes"]
        row["latency_ratio"] = row["latency_ms"] / base["latency_ms"]
        row["throughput_ratio"] = row["throughput_per_s"] / base["throughput_per_s"]
        row["accuracy_change"] = row["accuracy"] - base["accuracy"]
    print_table(rows, ["model", "bytes", "size_ratio", "latency_ms", "latency_ratio",
                       "throughput_per_s", "throughput_ratio", "accuracy", "accuracy_change"])
    return write_results("serving", {"machine": machine_info(), "saved_model": saved_model,
                                     "eval_images": len(labels), "rows": rows})


if __name__ == "__main__":
    main()
