"""One Trainer process against two local workers, synchronous and with a parameter server.

    bash scripts/bench.sh training/workers  # bundled digits, ~5 min
    bash scripts/bench.sh training/workers --data ~/datasets/flowers_photos --epochs 2

Runs `imagepipe run --workers 1`, `--workers 2` (MultiWorkerMirroredStrategy)
and `--workers 2 --ps 1` (ParameterServerStrategy) on the same data and
settings (fixed epochs, no early stopping), in turn, --repeat times, and
reads each run's summary.json: steady examples/s in fit, milliseconds per
step, and the model's weights. With one replica's batch B per worker, a
synchronous step of two workers processes 2B examples and all-reduces every
gradient once; on one machine the two workers also share its cores, so the
difference between a 2-worker step and a 1-worker step of B is an upper
bound on what the all-reduce costs. Under parameter servers a step is one
worker's batch B, and each step sends its gradients to the server and
reads the weights back. Writes bench/results/workers-<data folder>.json, and
prints the bytes each step exchanges (4 bytes a weight) against the step
time: the figures for when several machines pay off (docs/performance.md,
"Several workers").
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from bench.common import imagepipe_command, machine_info, print_table, read_summary, write_results
from settings.config import DEFAULT_DATA  # the bundled digits

SETUPS = ((1, 0), (2, 0), (2, 1))  # (workers, parameter servers)


def _run(data: str, workers: int, ps: int, epochs: int) -> dict:
    """One `imagepipe run`; its summary's training figures."""
    with tempfile.TemporaryDirectory(prefix="imagepipe-bench-workers-") as out:
        command = imagepipe_command("run", "--data", data, "--output", out,
                                    "--workers", str(workers), "--ps", str(ps),
                                    "--epochs", str(epochs), "--early-stopping-patience", "0",
                                    "--accuracy-threshold", "0", "--quantize", "none")
        subprocess.run(command, check=True, capture_output=True, text=True)
        summary = read_summary(out)
    training, plan = summary["training"], summary["plan"]
    steps = training["examples_per_epoch"] / (plan["values"]["batch_size"]
                                              * training["replicas"])
    steady = training["phases"][0]["epoch_seconds"][1:] or training["phases"][0]["epoch_seconds"]
    return {"setup": _name(workers, ps), "examples_per_s": training["examples_per_s"],
            "step_ms": 1000 * statistics.median(steady) / steps,
            "weights": plan["memory"]["params"], "accuracy": summary["eval"]["accuracy"],
            "trainer_s": summary["timings_s"]["Trainer"]}


def _name(workers: int, ps: int) -> str:
    return f"{workers} worker(s)" + (f", {ps} ps" if ps else "")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    runs = [_run(args.data, workers, ps, args.epochs)
            for _ in range(args.repeat) for workers, ps in SETUPS]
    rows = []
    for workers, ps in SETUPS:
        mine = [r for r in runs if r["setup"] == _name(workers, ps)]
        rows.append({key: statistics.median(r[key] for r in mine)
                     for key in ("examples_per_s", "step_ms", "trainer_s", "accuracy")}
                    | {"setup": _name(workers, ps), "weights": mine[0]["weights"]})
    one, two, ps = rows
    exchanged_bytes = 4 * (one["weights"] or 0)
    extra = {"ratio_examples_per_s": two["examples_per_s"] / one["examples_per_s"],
             "ratio_examples_per_s_ps": ps["examples_per_s"] / one["examples_per_s"],
             "allreduce_mb_per_step": exchanged_bytes / 1e6,
             "step_ms_added_by_the_second_worker": two["step_ms"] - one["step_ms"],
             "step_ms_added_by_the_parameter_server": ps["step_ms"] - one["step_ms"]}
    print_table(rows, ["setup", "examples_per_s", "step_ms", "trainer_s", "accuracy"])
    print(" ".join(f"{k} {v:.3f}" for k, v in extra.items()))
    name = "mnist_1k" if args.data == DEFAULT_DATA else os.path.basename(
        os.path.normpath(args.data))
    write_results(f"workers-{name}", {"machine": machine_info(), "data": args.data,
                                      "epochs": args.epochs, "rows": rows, "runs": runs,
                                      **extra})


if __name__ == "__main__":
    main()
