"""Continuous training: each new span warm-started from the last blessed model, against scratch.

    bash scripts/bench.sh training/warm_start_chain    # bundled digits, ~3 min
    bash scripts/bench.sh training/warm_start_chain --data ~/datasets/fashion_mnist  # ~25 min

Cuts an IDX dataset (train and t10k files) into --spans spans, each an .npz
of a contiguous share of the train and test images, and runs:
- the continuous chain: one output, the spans arriving one at a time, each
  run on the newest span alone (`--train-spans 1`), warm start on;
- from scratch: for spans 2.., a fresh output holding that span alone.
Both see the same data and are evaluated on the same eval split (the newest
span's test share). Writes bench/results/continuous-<data folder>.json with
each run's wall time (the Trainer's and the whole run's) and accuracy, and
the ratio warm / scratch per span.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

from bench.common import imagepipe_command, machine_info, print_table, read_summary, write_results
from components.image_example_gen.readers.arrays import list_idx, read_chunk
from settings.config import REPO_ROOT

DEFAULT_DATA = str(REPO_ROOT / "data" / "mnist_1k" / "idx")


def _arrays(data: str) -> dict:
    """{split: (images, labels)} of an IDX folder, via imagepipe's own reader."""
    listing = list_idx(data)
    found = {}
    for chunk in listing.files:
        images, labels, _ = read_chunk(chunk, data)
        found.setdefault(chunk.split, []).append((images, labels))
    return {split: (np.concatenate([i for i, _ in parts]), np.concatenate([l for _, l in parts]))
            for split, parts in found.items()}


def write_spans(data: str, count: int, folder: str) -> str:
    """span-1 .. span-<count>, each an .npz of its share of both splits; returns the pattern."""
    arrays = _arrays(data)
    (train_x, train_y), (test_x, test_y) = arrays["train"], arrays["eval"]
    for k in range(count):
        share = lambda a: np.array_split(a, count)[k]  # noqa: E731
        os.makedirs(os.path.join(folder, f"span-{k + 1}"))
        np.savez(os.path.join(folder, f"span-{k + 1}", "data.npz"),
                 x_train=share(train_x), y_train=share(train_y),
                 x_test=share(test_x), y_test=share(test_y))
    return os.path.join(folder, "span-{SPAN}")


def _run(pattern: str, output: str, *flags) -> dict:
    command = imagepipe_command("run", "--data", pattern, "--output", output,
                                "--train-spans", "1", "--quantize", "none", *flags)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    summary = read_summary(output)
    warm = summary.get("warm_start") or {}
    return {"span": summary["spans"]["evaluated"], "wall_s": round(wall, 1),
            "trainer_s": summary["timings_s"]["Trainer"],
            "accuracy": summary["eval"]["accuracy"], "warm_from": warm.get("from"),
            "epochs": (summary["training"] or {}).get("epochs_run")}


def _chain(folder: str, spans: str, count: int) -> list:
    """The continuous chain: one output, span k appearing before run k."""
    visible, runs = os.path.join(folder, "visible"), []
    os.makedirs(visible)
    for k in range(1, count + 1):
        os.rename(os.path.join(spans, f"span-{k}"), os.path.join(visible, f"span-{k}"))
        runs.append({"mode": "warm", **_run(os.path.join(visible, "span-{SPAN}"),
                                            os.path.join(folder, "chain"))})
    return runs


def _scratch(folder: str, count: int) -> list:
    runs = []
    for k in range(2, count + 1):
        alone = os.path.join(folder, f"alone-{k}")
        os.makedirs(alone)
        shutil.copytree(os.path.join(folder, "visible", f"span-{k}"),
                        os.path.join(alone, "span-1"))
        run = _run(os.path.join(alone, "span-{SPAN}"), os.path.join(folder, f"scratch-{k}"),
                   "--warm-start", "off")
        runs.append({"mode": "scratch", **run, "span": k})
    return runs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="an IDX folder")
    parser.add_argument("--spans", type=int, default=3)
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="imagepipe-bench-continuous-")
    try:
        spans = os.path.join(folder, "spans")
        write_spans(args.data, args.spans, spans)
        runs = _chain(folder, spans, args.spans) + _scratch(folder, args.spans)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratios = []
    for k in range(2, args.spans + 1):
        warm = next(r for r in runs if r["mode"] == "warm" and r["span"] == k)
        cold = next(r for r in runs if r["mode"] == "scratch" and r["span"] == k)
        ratios.append({"span": k, "trainer_ratio": warm["trainer_s"] / cold["trainer_s"],
                       "wall_ratio": warm["wall_s"] / cold["wall_s"],
                       "accuracy_change": warm["accuracy"] - cold["accuracy"]})
    print_table(runs, ["mode", "span", "wall_s", "trainer_s", "epochs", "accuracy"])
    print_table(ratios, ["span", "trainer_ratio", "wall_ratio", "accuracy_change"])
    name = "mnist_1k" if args.data == DEFAULT_DATA else os.path.basename(
        os.path.normpath(args.data))
    write_results(f"continuous-{name}", {"machine": machine_info(), "data": args.data,
                                         "spans": args.spans, "runs": runs, "ratios": ratios})


if __name__ == "__main__":
    main()
