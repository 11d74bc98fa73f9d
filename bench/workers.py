"""One Trainer process against two local workers: examples per second and the all-reduce cost.

    bash scripts/bench.sh workers                                   # bundled digits, ~4 min
    bash scripts/bench.sh workers --data ~/datasets/flowers_photos --epochs 2

Runs `imagepipe run --workers 1` and `--workers 2` on the same data and
settings (fixed epochs, no early stopping), alternating, --repeat times, and
reads each run's summary.json: steady examples/s in fit, seconds per step,
and the model's weights. With one replica's batch B per worker, a step of two
workers processes 2B examples and all-reduces every gradient once; on one
machine the two workers also share its cores, so the difference between a
2-worker step and a 1-worker step of B is an upper bound on what the
all-reduce costs. Writes bench/results/workers.json, and prints the bytes
each step all-reduces (4 bytes a weight) against the step time, the figures
for when several machines pay off (docs/performance.md, "Several workers").
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from bench.common import imagepipe_command, machine_info, print_table, read_summary, write_results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(data: str, workers: int, epochs: int) -> dict:
    """One `imagepipe run`; its summary's training figures."""
    with tempfile.TemporaryDirectory(prefix="imagepipe-bench-workers-") as out:
        command = imagepipe_command("run", "--data", data, "--output", out,
                                    "--workers", str(workers), "--epochs", str(epochs),
                                    "--early-stopping-patience", "0",
                                    "--accuracy-threshold", "0", "--quantize", "none")
        subprocess.run(command, check=True, capture_output=True, text=True)
        summary = read_summary(out)
    training, plan = summary["training"], summary["plan"]
    steps = training["examples_per_epoch"] / (plan["values"]["batch_size"] * workers)
    steady = training["phases"][0]["epoch_seconds"][1:] or training["phases"][0]["epoch_seconds"]
    return {"workers": workers, "examples_per_s": training["examples_per_s"],
            "step_ms": 1000 * statistics.median(steady) / steps,
            "weights": plan["memory"]["params"], "accuracy": summary["eval"]["accuracy"],
            "trainer_s": summary["timings_s"]["Trainer"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.path.join(ROOT, "data", "mnist_1k", "png"))
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    runs = [_run(args.data, workers, args.epochs)
            for _ in range(args.repeat) for workers in (1, 2)]
    rows = []
    for workers in (1, 2):
        mine = [r for r in runs if r["workers"] == workers]
        rows.append({key: statistics.median(r[key] for r in mine)
                     for key in ("examples_per_s", "step_ms", "trainer_s", "accuracy")}
                    | {"workers": workers, "weights": mine[0]["weights"]})
    one, two = rows
    allreduce_bytes = 4 * (one["weights"] or 0)
    extra = {"ratio_examples_per_s": two["examples_per_s"] / one["examples_per_s"],
             "allreduce_mb_per_step": allreduce_bytes / 1e6,
             "step_ms_added_by_the_second_worker": two["step_ms"] - one["step_ms"]}
    print_table(rows, ["workers", "examples_per_s", "step_ms", "trainer_s", "accuracy"])
    print(" ".join(f"{k} {v:.3f}" for k, v in extra.items()))
    write_results("workers", {"machine": machine_info(), "data": args.data,
                              "epochs": args.epochs, "rows": rows, "runs": runs, **extra})


if __name__ == "__main__":
    main()
