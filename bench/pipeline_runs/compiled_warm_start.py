"""A compiled pipeline's second week: warm-started from the served version, against from scratch.

    bash scripts/bench.sh pipeline_runs/compiled_warm_start            # 500 digits a span
    bash scripts/bench.sh pipeline_runs/compiled_warm_start --per-class 20

Run time on 2 cores: about 8 minutes at the default size (docs/continuous.md).

One `imagepipe compile --target kubeflow` package on `{SPAN}` data, run through
kubeflow/run_local.py as the open-source backend would, on two local pipeline
roots: `warm` gets span 1 (trained from scratch, pushed), then span 2, whose
Trainer starts from the served version; `scratch` gets spans 1 and 2 at once,
the same window trained from scratch (the baseline). Both use the training
plan's epochs (no --train-steps). Prints each run's Trainer seconds, epochs and
accuracy, and the warm week's ratio to the baseline; writes
bench/results/compiled_warm_start.json.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from bench.common import imagepipe_command, machine_info, print_table, write_results
from settings.config import DEFAULT_DATA

MNIST_PNG = os.path.join(DEFAULT_DATA, "png") if os.path.isdir(
    os.path.join(DEFAULT_DATA, "png")) else DEFAULT_DATA
RUN_LOCAL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "kubeflow", "run_local.py")
STEP = re.compile(r"^done\s+(\S+)\s+([\d.]+) s")


def _span(root: str, number: int, per_class: int) -> None:
    """Span `number`: the next `per_class` digits of each class, marked complete."""
    target = os.path.join(root, f"span-{number}")
    for label in sorted(os.listdir(MNIST_PNG)):
        names = sorted(os.listdir(os.path.join(MNIST_PNG, label)))
        os.makedirs(os.path.join(target, label))
        for name in names[(number - 1) * per_class:number * per_class]:
            shutil.copy(os.path.join(MNIST_PNG, label, name), os.path.join(target, label))
    open(os.path.join(target, "_SUCCESS"), "w").close()


def _week(package: str, root: str) -> dict:
    """One run of the package; the Trainer's seconds and the newest pushed version's record."""
    from components.image_pusher.provenance import fit_stats_path
    from components.image_pusher.versions import provenance, versions
    out = subprocess.run([sys.executable, RUN_LOCAL, package], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stdout[-3000:] + out.stderr[-3000:])
    steps = {m.group(1): float(m.group(2)) for m in map(STEP.match, out.stdout.splitlines())
             if m}
    serving = os.path.join(root, "serving", "imagepipe")
    newest = versions(serving)[-1]
    record = provenance(os.path.join(serving, str(newest)))
    with open(fit_stats_path(record["source_uri"])) as f:
        stats = json.load(f)
    return {"trainer_s": steps["Trainer"], "steps_s": round(sum(steps.values()), 1),
            "accuracy": round(record["accuracy"], 4), "spans": record["spans"],
            "warm_from": (record.get("warm_started_from") or {}).get("version"),
            "epochs": (stats.get("warm_start") or {}).get("epochs") or stats.get("epochs_run")}


def _package(work: str, name: str, per_class: int, numbers) -> tuple:
    """The package of one root, compiled once its first spans are there (compiling reads
    the image shape from local data)."""
    root, spans = os.path.join(work, name, "root"), os.path.join(work, name, "spans")
    for number in numbers:
        _span(spans, number, per_class)
    package = os.path.join(work, name, "package.yaml")
    subprocess.run(imagepipe_command(
        "compile", "--target", "kubeflow", "--image", "example.com/ip:1",
        "--data", os.path.join(spans, "span-{SPAN}"), "--pipeline-root", root,
        "--image-size", 28, "--channels", 1, "--accuracy-threshold", 0,
        "--baseline-tolerance", 1, "--quantize", "none", "--output-file", package), check=True,
        capture_output=True)
    return package, root, spans


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=50, help="digits per class and span")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="compiled_warm_")
    try:
        warm_package, warm_root, warm_spans = _package(work, "warm", args.per_class, [1])
        first = _week(warm_package, warm_root)
        _span(warm_spans, 2, args.per_class)
        warm = _week(warm_package, warm_root)
        scratch_package, scratch_root, _ = _package(work, "scratch", args.per_class, [1, 2])
        scratch = _week(scratch_package, scratch_root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [{"run": "span 1, from scratch", **first}, {"run": "spans 1-2, warm", **warm},
            {"run": "spans 1-2, from scratch (baseline)", **scratch}]
    print_table(rows, ["run", "trainer_s", "steps_s", "epochs", "accuracy", "warm_from"])
    ratio = warm["trainer_s"] / scratch["trainer_s"]
    print(f"warm-started Trainer / from scratch on the same window: {ratio:.2f}")
    return write_results("compiled_warm_start", {
        "machine": machine_info(), "per_class": args.per_class, "runs": rows,
        "trainer_ratio_warm_to_scratch": round(ratio, 3)})


if __name__ == "__main__":
    main()
