"""End to end: `imagepipe run` on the bundled data, cold (empty output) then warm (cached).

    bash scripts/bench.sh pipeline_runs/e2e             # data/mnist_1k, 1 cold + 1 warm run
    bash scripts/bench.sh pipeline_runs/e2e --repeat 3  # medians of 3 each

Run time on 2 cores: docs/performance.md (the benchmarks table).

Each run is the real CLI in a fresh process, as a user types it, so the wall
time includes Python start-up, imports and the HTML report. The cold run is
the baseline: the warm run (same output, every component a
cache hit) is shown as a ratio of it, and so is each component. Per-component
seconds come from summary.json (ML Metadata's execution times); peak memory
from sampling the process tree. Writes bench/results/e2e.json.

Goals: warm <= 10% of cold; cold under 60 s on 2 cores with the
planned accuracy bar (`--accuracy-threshold`; 0.9 for the digits) met. Each is checked on
the command's wall time and on the pipeline's own time (summary.json's
total: the components, without Python start-up, imports and the report).
"""
import argparse
import os
import shutil
import statistics
import tempfile

from bench.common import (component_peaks_mb, imagepipe_command, machine_info, print_table,
                          read_summary, run_sampled, write_results)
from settings.config import DEFAULT_DATA

COLD_GOAL_S, WARM_GOAL_RATIO = 60.0, 0.10


def one_run(data: str, output: str, extra=()) -> dict:
    """One `imagepipe run`; its wall time, summary and per-component peaks."""
    run = run_sampled(imagepipe_command("run", "--data", data, "--output", output, *extra))
    summary = read_summary(output)
    return {"wall_s": run["wall_s"], "summary": summary,
            "peak_rss_mb": round(max(rss for _, rss in run["samples"]) / 1e6, 1),
            "component_peak_mb": component_peaks_mb(run)}


def _median(runs, get):
    return statistics.median(get(r) for r in runs)


def measure(data: str, repeat: int, extra=(), keep: str = None) -> dict:
    """`repeat` cold runs, each followed by a warm one; the last one's output left in `keep`.

    (Artifacts record absolute paths, so a kept run must happen where it stays.)
    """
    cold, warm = [], []
    for i in range(repeat):
        last_kept = keep and i == repeat - 1
        if last_kept:
            shutil.rmtree(keep, ignore_errors=True)
        output = keep if last_kept else tempfile.mkdtemp(prefix="imagepipe-bench-e2e-")
        try:
            cold.append(one_run(data, output, extra))
            warm.append(one_run(data, output, extra))
        finally:
            if not last_kept:
                shutil.rmtree(output, ignore_errors=True)
    return {"cold": cold, "warm": warm}


def table(result: dict) -> list:
    """One row per component and two totals: cold and warm seconds, warm/cold."""
    cold, warm = result["cold"], result["warm"]
    nodes = list(cold[0]["summary"]["timings_s"])
    rows = []
    for node in nodes:
        c = _median(cold, lambda r: r["summary"]["timings_s"][node])
        w = _median(warm, lambda r: r["summary"]["timings_s"][node])
        rows.append({"step": "pipeline total" if node == "total" else node,
                     "cold_s": c, "warm_s": w, "warm/cold": w / c if c else 0.0,
                     "cold_peak_mb": cold[0]["component_peak_mb"].get(node, "")})
    c, w = _median(cold, lambda r: r["wall_s"]), _median(warm, lambda r: r["wall_s"])
    rows.append({"step": "wall (command)", "cold_s": c, "warm_s": w, "warm/cold": w / c,
                 "cold_peak_mb": max(r["peak_rss_mb"] for r in cold)})
    return rows


def goals(result: dict, threshold: float) -> dict:
    """The module docstring's goals, each with the measured value and whether it is met."""
    cold = _median(result["cold"], lambda r: r["wall_s"])
    pipeline = _median(result["cold"], lambda r: r["summary"]["timings_s"]["total"])
    warm = _median(result["warm"], lambda r: r["wall_s"])
    warm_pipeline = _median(result["warm"], lambda r: r["summary"]["timings_s"]["total"])
    evaluations = [r["summary"]["eval"] for r in result["cold"]]
    accuracy = min(e["accuracy"] for e in evaluations)

    def goal(value, text, met):
        return {"value": value, "goal": text, "met": bool(met)}
    return {
        "cold_wall_s": goal(cold, f"< {COLD_GOAL_S:.0f}", cold < COLD_GOAL_S),
        "cold_pipeline_s": goal(pipeline, f"< {COLD_GOAL_S:.0f}", pipeline < COLD_GOAL_S),
        "warm_over_cold": goal(warm / cold, f"<= {WARM_GOAL_RATIO}",
                               warm / cold <= WARM_GOAL_RATIO),
        "warm_over_cold_pipeline": goal(warm_pipeline / pipeline, f"<= {WARM_GOAL_RATIO}",
                                        warm_pipeline / pipeline <= WARM_GOAL_RATIO),
        "accuracy": goal(accuracy, f">= {threshold}, blessed",
                         accuracy >= threshold and all(e["blessed"] for e in evaluations)),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--run-args", default="", help="extra `imagepipe run` flags, "
                        "e.g. --run-args='--train-steps 30' (tests use it)")
    parser.add_argument("--keep", help="run the last repetition in this folder and keep it")
    args = parser.parse_args(argv)
    result = measure(args.data, args.repeat, args.run_args.split(), args.keep)
    rows = table(result)
    print_table(rows, ["step", "cold_s", "warm_s", "warm/cold", "cold_peak_mb"])
    # The threshold the plan chose for this data (pipeline/planning/plan.py).
    met = goals(result, result["cold"][0]["summary"]["plan"]["values"]["accuracy_threshold"])
    for name, goal in met.items():
        print(f"goal {name}: {goal['value']:.3f} (goal {goal['goal']}): "
              f"{'met' if goal['met'] else 'MISSED'}")
    training = result["cold"][0]["summary"].get("training") or {}
    return write_results("e2e", {
        "machine": machine_info(), "data": os.path.abspath(args.data), "repeat": args.repeat,
        "run_args": args.run_args, "rows": rows, "goals": met, "training": training,
        "runs": {kind: [{k: v for k, v in r.items() if k != "summary"}
                        | {"timings_s": r["summary"]["timings_s"],
                           "accuracy": r["summary"]["eval"]["accuracy"]}
                        for r in result[kind]] for kind in ("cold", "warm")}})


if __name__ == "__main__":
    main()
