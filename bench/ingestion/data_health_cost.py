"""What the data-health checks cost ingestion: `imagepipe ingest` with and without them.

    .venv/bin/python -m bench.ingestion.data_health_cost --data ~/datasets/flowers_photos
    .venv/bin/python -m bench.ingestion.data_health_cost --data DIR --repeat 5

Each run is `run_ingest` (the same code as `imagepipe ingest`) in a fresh
process, timed after imports; "off" sets components.image_example_gen.data_health.hashing.ENABLED
to False, which skips hashing in the encoding workers and the report's
data_health section. Runs alternate on/off, --repeat times each (3 by
default), so drift on a shared machine hits both alike. Prints per-run
seconds, CPU seconds (this process and its encoding workers) and the ratios
of the medians and of the fastest runs; writes bench/results/data_health.json.

"work_s" is the wall time less Beam's state-sampler joins: at the end of
each bundle, DirectRunner waits for its sampler thread to wake, which sleeps
up to 200 ms once a bundle has run about a second. How long it waits
depends on where in that sleep the bundle ends, not on the work (stack
samples showed the on/off difference in wall time mostly there), so
the goal is judged on work_s and CPU.
Run time on 2 cores, flowers (3,119 photos): about a minute for 5 pairs
(docs/data_health.md).
"""
import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time

from bench.common import machine_info, print_table, run_result_in_process, write_results


def _cpu_seconds() -> float:
    """User + system time of this process and its finished children (the encoders)."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _time_sampler_joins() -> list:
    """Patches Beam's StateSampler.stop to add each call's seconds to the list returned."""
    from apache_beam.runners.worker import statesampler
    waits, stop = [], statesampler.StateSampler.stop

    def timed_stop(self):
        start = time.perf_counter()
        stop(self)
        waits.append(time.perf_counter() - start)
    statesampler.StateSampler.stop = timed_stop
    return waits


def run_variant(enabled: bool, data: str, out: str) -> dict:
    """One ingestion in this process, checks on or off; seconds exclude imports.

    CPU seconds as well as wall: on a shared machine they vary far less.
    """
    from components.image_example_gen.data_health import hashing
    from settings.config import PipelineConfig
    from pipeline.local.ingest_command import run_ingest
    hashing.ENABLED = enabled
    waits = _time_sampler_joins()
    start, cpu = time.perf_counter(), _cpu_seconds()
    report = run_ingest(PipelineConfig.from_values(data=data, output=out))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "work_s": seconds - sum(waits), "cpu_s": _cpu_seconds() - cpu,
            "images": sum(report["splits"].values()), "health": "data_health" in report}


def _measure(enabled: bool, data: str, out: str) -> dict:
    code = ("import json; from bench.ingestion.data_health_cost import run_variant; "
            f"print('RESULT', json.dumps(run_variant({enabled!r}, {data!r}, {out!r})))")
    return run_result_in_process(code, f"ingest (checks {enabled})")


def main(argv=None) -> dict:
    """Alternating runs; prints the table and the ratio, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="an image folder (read only)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each variant")
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="imagepipe-bench-health-")
    runs = {True: [], False: []}  # on first in the table
    try:
        for _ in range(args.repeat):
            for enabled in (False, True):
                out = os.path.join(workdir, "out")
                shutil.rmtree(out, ignore_errors=True)
                runs[enabled].append(_measure(enabled, args.data, out))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows = [{"checks": "on" if enabled else "off", "images": results[0]["images"],
             "median_s": statistics.median(r["seconds"] for r in results),
             "min_s": min(r["seconds"] for r in results),
             "work_median_s": statistics.median(r["work_s"] for r in results),
             "cpu_median_s": statistics.median(r["cpu_s"] for r in results),
             "runs_s": [round(r["seconds"], 2) for r in results]}
            for enabled, results in runs.items()]
    # The fastest runs are the least disturbed by other work on a shared machine.
    ratios = {name: rows[0][key] / rows[1][key] for name, key in (
        ("wall", "median_s"), ("fastest", "min_s"), ("work", "work_median_s"),
        ("cpu", "cpu_median_s"))}
    print_table(rows, ["checks", "images", "median_s", "min_s", "work_median_s",
                       "cpu_median_s", "runs_s"])
    print("ratio on/off (medians unless named): " + ", ".join(
        f"{name} {value:.3f} ({(value - 1) * 100:+.1f}%)" for name, value in ratios.items()))
    return write_results("data_health", {
        "machine": machine_info(), "data": args.data, "repeat": args.repeat, "rows": rows,
        "ratio": ratios["wall"], "ratio_fastest": ratios["fastest"], "ratio_work": ratios["work"],
        "ratio_cpu": ratios["cpu"]})


if __name__ == "__main__":
    main()
