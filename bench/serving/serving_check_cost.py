"""What the serving check adds to a push: the Pusher's work with it, and as it was without it.

    bash scripts/bench.sh serving/serving_check_cost                   # trains first if needed
    bash scripts/bench.sh serving/serving_check_cost --output outputs  # an existing run's artifacts

On one run's Trainer model and examples, alternately (`--repeat` times each):
- baseline: the push before the check existed: publish the SavedModel, write
  the serving configs, convert and gate TFLite, publish it;
- check: components/image_pusher/push.push, which adds the warmup file and
  the serving check's process (started first, overlapping the conversion).
Prints the median seconds of each, the ratio, the added seconds, and the
check's own figures (load, replay, REST p50/p99). Writes
bench/results/serving_check.json.
"""
import argparse
import glob
import dataclasses
import os
import shutil
import statistics
import tempfile
import time

from bench.common import machine_info, print_table, write_results
from bench.serving.model_formats import _ensure_run

GOAL_ADDED_S = 3.0  # goal: the check adds at most 3 s to a default run


def artifacts(output: str) -> tuple:
    """(the latest Trainer model's SavedModel, the latest examples) of a run."""
    models = glob.glob(os.path.join(output, "tfx", "Trainer", "model", "*", "Format-Serving"))
    examples = glob.glob(os.path.join(output, "tfx", "ImageExampleGen", "examples", "*"))
    if not models or not examples:
        raise SystemExit(f"bench: no Trainer model or examples under {output}/tfx")
    return max(models, key=os.path.getmtime), max(examples, key=os.path.getmtime)


def baseline(model: str, examples: str, root: str, tflite: dict) -> None:
    from components.image_pusher.serving_config import write_serving_configs
    from components.image_pusher.tflite_push import push_tflite
    from components.image_pusher.versions import next_version, publish
    base = os.path.join(root, "serving", "m")
    version = next_version(base)
    publish(model, base, version, source_uri=model)
    write_serving_configs(os.path.dirname(base))
    push_tflite(model, examples, tflite["tflite_dir"], version, tflite["quantize"],
                tflite["parity_tolerance"])


def with_check(model: str, examples: str, root: str, tflite: dict) -> dict:
    from components.image_pusher.push import push
    from settings.config import PipelineConfig
    settings = PipelineConfig.from_values().push_settings()
    settings = dataclasses.replace(settings, **(tflite or {"tflite_dir": None}))
    outcome = push(model, model, os.path.join(root, "serving", "m"), examples, settings)
    assert outcome.pushed, outcome.serving_check
    return outcome.serving_check


def measure(model: str, examples: str, repeat: int) -> dict:
    times = {"baseline": [], "check": []}
    checks = []
    for _ in range(repeat):
        for name in ("baseline", "check"):
            root = tempfile.mkdtemp(prefix="imagepipe-bench-check-")
            tflite = {"tflite_dir": os.path.join(root, "tflite", "m"), "quantize": "int8",
                      "parity_tolerance": 0.01}
            try:
                start = time.perf_counter()
                if name == "baseline":
                    baseline(model, examples, root, tflite)
                else:
                    checks.append(with_check(model, examples, root, tflite))
                times[name].append(time.perf_counter() - start)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {"seconds": times, "median_s": medians,
            "added_s": medians["check"] - medians["baseline"],
            "ratio": medians["check"] / medians["baseline"], "checks": checks}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(tempfile.gettempdir(),
                                                         "imagepipe-bench-serving"),
                        help="a run's output folder (runs the default pipeline there if empty)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    _ensure_run(args.output)
    model, examples = artifacts(args.output)
    import tensorflow as tf  # noqa: F401  (the parent's import is not part of either path)
    result = measure(model, examples, args.repeat)
    last = result["checks"][-1]
    print_table([{"push": "baseline (no check)", "median_s": result["median_s"]["baseline"],
                  "ratio": 1.0},
                 {"push": "with serving check", "median_s": result["median_s"]["check"],
                  "ratio": result["ratio"]}], ["push", "median_s", "ratio"])
    print(f"added {result['added_s']:.2f} s (goal <= {GOAL_ADDED_S} s); check: load "
          f"{last['load_s']} s, replay {last['replay_s']} s of {last['warmup_records']} "
          f"records, REST p50 {last['p50_ms']} ms p99 {last['p99_ms']} ms")
    return write_results("serving_check", {
        "machine": machine_info(), "model": model, "examples": examples, **result,
        "goal": {"added_s_max": GOAL_ADDED_S, "met": result["added_s"] <= GOAL_ADDED_S}})


if __name__ == "__main__":
    main()
