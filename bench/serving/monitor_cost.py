"""What `imagepipe monitor` costs against `imagepipe predict` on the same images.

    bash scripts/bench.sh serving/monitor_cost --idx ~/mnist_idx        # 10,000 images
    bash scripts/bench.sh serving/monitor_cost --images ~/photos --count 2000

Run time on 2 cores: docs/performance.md (the benchmarks table).

The baseline, run in the same invocation, is batch prediction over the images
(`imagepipe predict --data FOLDER --output preds.jsonl`). Then the same images
are logged as a served model logs them: `imagepipe predict --log requests.tfrecord
IMAGE...` writes one TF Serving PredictionLog per request, image and answer. The
variants, each a fresh process timed from start to exit (imports and model load
included), are:
- `monitor (logged requests)`: `imagepipe monitor --data requests.tfrecord`; the
  answers are in the log, so it reads the images only for their statistics;
- `monitor (images)`: `imagepipe monitor --data FOLDER`, which must score every image.
`ratio` is seconds over the baseline's. A monitor run that alerts exits 3, which is
a result here, not a failure. Model: the model `imagepipe run` pushes to --output
(trained once there on the bundled digits), as bench/serving/batch_predict.py does.
Writes bench/results/monitor_cost.json.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

from bench.common import imagepipe_command, machine_info, print_table, write_results
from bench.serving.batch_predict import DEFAULT_OUTPUT, link_images, write_idx_pngs

MONITOR_RESULT_CODES = (0, 3)  # healthy, alerting


def _timed(command, allowed=(0,)) -> float:
    """Wall seconds of `command`; raises with its output's tail on another exit code."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in allowed:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}:\n"
                           f"{(done.stdout + done.stderr)[-3000:]}")
    return seconds


def _images(args, folder: str) -> list:
    from prediction.batch_io import iter_image_paths
    os.makedirs(folder)
    if args.images:
        link_images(args.images, args.count, folder)
    else:
        write_idx_pngs(args.idx, args.count, folder)
    return sorted(iter_image_paths(folder))


def _variants(output: str, model: str, folder: str, paths: list, workdir: str) -> list:
    log = os.path.join(workdir, "requests.tfrecord")
    predict = _timed(imagepipe_command("predict", "--model", model, "--data", folder,
                                       "--output", os.path.join(workdir, "preds.jsonl")))
    logged = _timed(imagepipe_command("predict", "--model", model, "--top-k", "1",
                                      "--log", log, *paths))
    rows = [("predict --data (baseline)", predict),
            ("predict --log, one image a call", logged)]
    for name, data in (("monitor (logged requests)", log), ("monitor (images)", folder)):
        result = os.path.join(workdir, "monitor.json")
        seconds = _timed(imagepipe_command("monitor", "--output", output, "--data", data,
                                           "--json", result), MONITOR_RESULT_CODES)
        with open(result) as f:
            alerts = len(json.load(f)["alerts"])
        rows.append((f"{name}, {alerts} alerts", seconds))
    return [{"variant": name, "images": len(paths), "seconds": seconds,
             "ratio": seconds / predict} for name, seconds in rows]


def main(argv=None) -> dict:
    """Runs the baseline and each variant once; prints the table, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--images", help="a folder of image files; the first --count are used")
    source.add_argument("--idx", help="an MNIST-style IDX folder (train-images-idx3-ubyte)")
    parser.add_argument("--count", type=int, default=10000, help="images (logged requests)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="where a default run goes")
    args = parser.parse_args(argv)
    from bench.serving.model_formats import _ensure_run  # trains on the bundled digits if needed
    model = _ensure_run(args.output)["pushed"]["serving"]
    workdir = tempfile.mkdtemp(prefix="imagepipe-bench-monitor-")
    try:
        paths = _images(args, os.path.join(workdir, "images"))
        rows = _variants(args.output, model, os.path.join(workdir, "images"), paths, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_table(rows, ["variant", "images", "seconds", "ratio"])
    return write_results("monitor_cost", {"machine": machine_info(), "model": model,
                                          "source": args.images or args.idx, "rows": rows})


if __name__ == "__main__":
    main()
