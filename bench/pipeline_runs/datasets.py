"""Default runs on real data: accuracy, cold wall time and peak memory against their GOALS.

    bash scripts/bench.sh pipeline_runs/datasets --only mnist_1k camera
    bash scripts/bench.sh pipeline_runs/datasets --only flowers --flowers ~/datasets/flowers_photos
    bash scripts/bench.sh pipeline_runs/datasets --only fashion --fashion ~/datasets/fashion_mnist

Run time on 2 cores: docs/performance.md (the benchmarks table).

Each dataset gets --repeat cold `imagepipe run`s with default flags (the training
plan chooses everything), in a fresh process and a fresh output folder, as a
user would type it; peak RSS is sampled over the whole process tree. `camera`
is generated here: JPEG photos of mixed sizes up to 4000x3000 in two classes
(warm and cool colours), removed afterwards. Results merge by dataset into
bench/results/datasets.json, so datasets can be measured in separate calls.
"""
import argparse
import json
import os
import shutil
import tempfile

import numpy as np

from bench.common import (RESULTS_DIR, component_peaks_mb, imagepipe_command, machine_info,
                          print_table, read_summary, run_sampled, write_results)
from settings.config import DEFAULT_DATA

# name: (accuracy at least, cold wall seconds at most, peak RSS MB at most); None: no goal.
GOALS = {"fashion": (0.93, 10 * 60, 4000), "flowers": (0.85, 10 * 60, 4000),
         "mnist_1k": (0.95, 60, None), "camera": (None, None, 4000)}
# Camera-like sizes (width, height): 12 MP both ways, HD, VGA, thumbnails.
CAMERA_SIZES = ((4000, 3000), (3000, 4000), (1920, 1080), (640, 480), (320, 240), (96, 96))


def make_camera_photos(root: str, count: int = 96) -> str:
    """`count` JPEGs cycling through CAMERA_SIZES; class `warm` is reddish, `cool` bluish."""
    from PIL import Image
    rng = np.random.default_rng(0)
    for i in range(count):
        name = ("warm", "cool")[i % 2]
        os.makedirs(os.path.join(root, name), exist_ok=True)
        coarse = rng.integers(0, 200, (6, 8, 3)).astype(np.int16)
        coarse[..., 0 if name == "warm" else 2] += 55
        width, height = CAMERA_SIZES[(i // 2) % len(CAMERA_SIZES)]
        image = Image.fromarray(coarse.astype(np.uint8)).resize((width, height), Image.BILINEAR)
        image.save(os.path.join(root, name, f"{i:04d}.jpg"), quality=85)
    return root


def run_dataset(name: str, data: str, keep: str = None) -> dict:
    """One cold default run on `data`; what it chose, scored and cost.

    The run's output is deleted, or kept in `keep`/<name> (for bench/training/trainer_input
    --output).
    """
    output = os.path.join(keep, name) if keep else tempfile.mkdtemp(
        prefix=f"imagepipe-bench-{name}-")
    shutil.rmtree(output, ignore_errors=True)
    try:
        run = run_sampled(imagepipe_command("run", "--data", data, "--output", output))
        summary = read_summary(output)
    finally:
        if not keep:
            shutil.rmtree(output, ignore_errors=True)
    evaluation, training = summary["eval"], summary.get("training") or {}
    row = {"dataset": name, "data": os.path.abspath(data),
           "accuracy": evaluation["accuracy"], "blessed": evaluation["blessed"],
           "wall_s": round(run["wall_s"], 1),
           "peak_rss_mb": round(max(rss for _, rss in run["samples"]) / 1e6, 1),
           "component_peak_mb": component_peaks_mb(run), "timings_s": summary["timings_s"],
           "plan": summary["plan"]["values"],
           "output": [line for _, line in run["lines"]],
           "epochs_run": training.get("epochs_run"), "epochs_planned": training.get(
               "epochs_planned"), "examples_per_s": training.get("examples_per_s")}
    return row


def repeated(name: str, data: str, keep, repeat: int) -> dict:
    """`repeat` cold runs: the first's details, every run's figures, and the goals judged
    on the worst of them."""
    runs = [run_dataset(name, data, keep) for _ in range(repeat)]
    row = dict(runs[0])
    row["repeats"] = [{k: r[k] for k in ("accuracy", "wall_s", "peak_rss_mb", "epochs_run")}
                      for r in runs]
    worst = {"accuracy": min(r["accuracy"] for r in runs),
             "wall_s": max(r["wall_s"] for r in runs),
             "peak_rss_mb": max(r["peak_rss_mb"] for r in runs)}
    row.update(worst)
    accuracy_goal, wall_goal, rss_goal = GOALS[name]
    row["goals"] = {
        "accuracy": _goal(worst["accuracy"], accuracy_goal, higher=True),
        "wall_s": _goal(worst["wall_s"], wall_goal, higher=False),
        "peak_rss_mb": _goal(worst["peak_rss_mb"], rss_goal, higher=False)}
    return row


def _goal(value, bound, higher: bool):
    if bound is None:
        return None
    return {"value": value, "goal": f"{'>=' if higher else '<='} {bound}",
            "met": value >= bound if higher else value <= bound}


def _previous() -> dict:
    path = os.path.join(RESULTS_DIR, "datasets.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {row["dataset"]: row for row in json.load(f).get("rows", [])}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(GOALS), default=sorted(GOALS))
    parser.add_argument("--fashion", help="Fashion-MNIST IDX folder")
    parser.add_argument("--flowers", help="flowers_photos folder tree")
    parser.add_argument("--camera-count", type=int, default=96, help="generated photos")
    parser.add_argument("--keep", help="keep each run's output in KEEP/<dataset>")
    parser.add_argument("--repeat", type=int, default=1,
                        help="cold runs per dataset; goals are judged on the worst")
    args = parser.parse_args(argv)
    rows = _previous()
    for name in args.only:
        work = None
        if name == "camera":
            work = tempfile.mkdtemp(prefix="imagepipe-bench-camera-")
            data = make_camera_photos(work, args.camera_count)
        else:
            data = {"mnist_1k": DEFAULT_DATA, "fashion": args.fashion,
                    "flowers": args.flowers}[name]
        if not data:
            parser.error(f"--{name} DIR is needed to measure {name}")
        try:
            rows[name] = repeated(name, data, args.keep, args.repeat)
        finally:
            if work:
                shutil.rmtree(work, ignore_errors=True)
        print_table(rows[name]["repeats"], ["accuracy", "wall_s", "peak_rss_mb", "epochs_run"])
        for goal, value in rows[name]["goals"].items():
            if value:
                print(f"goal {name} {goal}: {value['value']} ({value['goal']}): "
                      f"{'met' if value['met'] else 'MISSED'}")
    return write_results("datasets", {"machine": machine_info(), "rows": list(rows.values())})


if __name__ == "__main__":
    main()
