"""Scaling: ingestion, Transform and training time and peak memory against dataset size.

    bash scripts/bench.sh pipeline_runs/scaling                    # 1k, 10k, 50k images
    bash scripts/bench.sh pipeline_runs/scaling --sizes 1000 5000  # quicker look

Run time on 2 cores: docs/performance.md (the benchmarks table).

Generates class folders of 64x64 RGB JPEGs (10 classes, reused between
runs from --work) and runs the whole pipeline on each with `imagepipe run`,
training one epoch of the train split (`--epochs 1`), so
that every stage's work grows with the data. Seconds per component come from
summary.json; memory per component from sampling the process tree (the CLI
and any worker processes) while that component's start/done lines bracket it:
`peak` is the highest RSS in that window, `rise` the peak minus the RSS the
component started with (the components share one process, so a peak also
carries what earlier components left on the heap). StatisticsGen and
Transform are also re-run alone on each run's artifacts, in a fresh process
(bench/pipeline_runs/executor_memory), `alone_rise`. Every figure is a ratio
against the smallest dataset of the same run: `time/size` <= 1 is linear
or better; `peak` and `rise` near 1 are flat. Writes
bench/results/scaling.json.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bench.common import (component_peaks_mb, component_rises_mb, imagepipe_command,
                          machine_info, print_table,
                          read_summary, run_sampled, write_results)
from bench.ingestion.ingest_speed import make_dataset

STAGES = ("ImageExampleGen", "Transform", "Trainer")
# Re-run alone in a fresh process (bench/pipeline_runs/executor_memory).
ALONE = ("StatisticsGen", "Transform")


def run_size(images: int, work: str) -> dict:
    """One cold pipeline run on `images` generated JPEGs; seconds and peaks per component."""
    data = make_dataset(os.path.join(work, f"data-{images}"), images)
    output = os.path.join(work, f"out-{images}")
    shutil.rmtree(output, ignore_errors=True)
    run = run_sampled(imagepipe_command(
        "run", "--data", data, "--output", output, "--epochs", 1,
        "--eval-steps", 1, "--accuracy-threshold", 0))  # random pixels: nothing to learn
    summary = read_summary(output)
    alone = {node: _alone(output, node) for node in ALONE}
    shutil.rmtree(output, ignore_errors=True)
    return {"images": images, "epochs": 1, "wall_s": run["wall_s"],
            "seconds": summary["timings_s"], "peak_mb": component_peaks_mb(run),
            "rise_mb": component_rises_mb(run), "alone": alone,
            "training": summary.get("training")}


def _alone(output: str, node: str) -> dict:
    """bench/pipeline_runs/executor_memory on the run's artifacts: the executor's rise alone."""
    command = [sys.executable, "-m", "bench.pipeline_runs.executor_memory", "--output", output,
               "--component", node]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ratio(value, base):
    """value / base; None where the base is too small to divide by (a rise of ~0 MB)."""
    return value / base if value is not None and base and base > 1 else None


def _alone_rise(run: dict, stage: str):
    return run["alone"][stage]["rise_mb"] if stage in run["alone"] else None


def rows_for(runs: list) -> list:
    """Per stage and size: seconds, peak MB, and both as ratios of the smallest size."""
    base = runs[0]
    rows = []
    for stage in STAGES:
        for run in runs:
            size_ratio = run["images"] / base["images"]
            seconds, peak = run["seconds"][stage], run["peak_mb"].get(stage)
            rows.append({"stage": stage, "images": run["images"], "seconds": seconds,
                         "time_ratio": seconds / base["seconds"][stage],
                         "size_ratio": size_ratio,
                         "time/size": seconds / base["seconds"][stage] / size_ratio,
                         "peak_mb": peak, "peak_ratio": peak / base["peak_mb"][stage],
                         "rise_mb": run["rise_mb"][stage],
                         "rise_ratio": _ratio(run["rise_mb"][stage], base["rise_mb"][stage]),
                         "alone_rise_mb": _alone_rise(run, stage),
                         "alone_rise_ratio": _ratio(_alone_rise(run, stage),
                                                    _alone_rise(base, stage))})
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                         "imagepipe-bench-scaling"))
    args = parser.parse_args(argv)
    runs = [run_size(n, args.work) for n in sorted(args.sizes)]
    rows = rows_for(runs)
    print_table(rows, ["stage", "images", "seconds", "time_ratio", "size_ratio", "time/size",
                       "peak_mb", "peak_ratio", "rise_mb", "rise_ratio", "alone_rise_mb"])
    return write_results("scaling", {"machine": machine_info(), "image_side": 64,
                                     "rows": rows, "runs": runs})


if __name__ == "__main__":
    main()
