"""A photo folder in a gs:// bucket against the same photos on local disk: plan and ingest.

    bash scripts/bench.sh ingestion/bucket --data ~/datasets/flowers_photos               # ~15 min
    bash scripts/bench.sh ingestion/bucket --data ~/datasets/flowers_photos --limit 20    # ~3 min
    bash scripts/bench.sh ingestion/bucket --data ~/datasets/flowers_photos --gcs-output  # 3rd row

Needs root: the bucket is fake-gcs-server in a private network namespace
(scripts/with_gcs.sh), seeded with hard links to (or copies of) the photos.
For each side, `imagepipe plan --data D` and `imagepipe ingest --data D
--output OUT` run one after the other in a fresh process each; OUT is a
local temp folder on both sides, so only reading differs (`--gcs-output`
adds a row that also writes to the bucket). Local and bucket runs alternate,
--repeat times; the table shows medians and the ratios bucket/local.

Timing and memory are taken inside the namespace, by the same wrapper on
both sides: wall time of the command alone (the namespace and server start,
~0.2 s plus seeding, are outside it, and shown as `setup_s`), and the peak
RSS of the command's process tree (imagepipe plus its encoder processes),
sampled every 0.1 s. The server keeps objects in memory (-backend memory);
its peak RSS, with the TLS proxy's, is reported apart (`server_mb`), as it
is not imagepipe's. Writes bench/results/bucket.json. Goal: bucket at most
2x local time, with flat memory (docs/performance.md, "Data in a bucket").
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench.common import imagepipe_command, machine_info, print_table, write_results
from settings.config import REPO_ROOT

ROOT = str(REPO_ROOT)
BUCKET, PREFIX = "imagepipe-test", "flowers"
GOAL_TIME_RATIO, GOAL_MEMORY_RATIO = 2.0, 1.25  # 1.25: the suite's "flat memory" allowance
# Processes of scripts/with_gcs.sh's server side, found by their command line.
SERVER_MARKERS = ("fake-gcs-server", "gcs_proxy.py")


def server_rss() -> int:
    """RSS in bytes of the fake GCS server and its proxy; 0 outside scripts/with_gcs.sh.

    Inside, the PID namespace shows only its own processes; outside, other
    runs' servers may be up, and are none of ours.
    """
    import psutil
    if not os.environ.get("WITH_GCS_STATE"):
        return 0
    total = 0
    for process in psutil.process_iter(["cmdline", "memory_info"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if any(marker in cmdline for marker in SERVER_MARKERS) and process.info["memory_info"]:
            total += process.info["memory_info"].rss
    return total


def _sample_server(done: threading.Event, samples: list) -> None:
    """Appends server_rss() to `samples` every 0.2 s until `done` is set."""
    while not done.is_set():
        samples.append(server_rss())
        done.wait(0.2)


def measure_commands(commands: list) -> None:
    """Runs each command in turn; prints `RESULT [{wall_s, peak_mb, ...}]`.

    Called in a fresh process, inside the namespace for the bucket side, so
    both sides are timed by the same code and the namespace's start is not.
    """
    from bench.common import run_sampled
    results = []
    for command in commands:
        done, server_peak = threading.Event(), []
        sampler = threading.Thread(target=_sample_server, args=(done, server_peak), daemon=True)
        sampler.start()
        run = run_sampled(command)
        done.set()
        sampler.join()
        results.append({"wall_s": run["wall_s"],
                        "peak_mb": max((rss for _, rss in run["samples"]), default=0) / 1e6,
                        "server_mb": max(server_peak, default=0) / 1e6,
                        "tail": [line for _, line in run["lines"][-3:]]})
    print("RESULT", json.dumps(results), flush=True)


def _run_measured(commands: list, prefix: list) -> tuple:
    """measure_commands(commands) in a fresh process behind `prefix`; (results, total s)."""
    code = f"from bench.ingestion.bucket import measure_commands; measure_commands({commands!r})"
    start = time.perf_counter()
    proc = subprocess.run([*prefix, sys.executable, "-W", "ignore", "-c", code], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    total = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{' '.join(prefix) or 'local'} run failed (exit {proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):]), total


def _link_or_copy(source: str, target: str) -> None:
    """A hard link where the file system allows one (no bytes copied), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def mirror_photos(data: str, target: str, limit=None) -> int:
    """`data`'s tree at `target` as hard links; the first `limit` files per class folder.

    Files beside the class folders (README.md, splits.csv) come too, so both
    sides list the same tree. Returns the number of files in class folders.
    """
    photos = 0
    for entry in sorted(os.scandir(data), key=lambda e: e.name):
        if entry.is_file():
            os.makedirs(target, exist_ok=True)
            _link_or_copy(entry.path, os.path.join(target, entry.name))
        elif entry.is_dir():
            names = sorted(os.listdir(entry.path))[:limit]
            os.makedirs(os.path.join(target, entry.name), exist_ok=True)
            for name in names:
                _link_or_copy(os.path.join(entry.path, name),
                              os.path.join(target, entry.name, name))
            photos += len(names)
    return photos


def _commands(data: str, output: str) -> list:
    return [imagepipe_command("plan", "--data", data),
            imagepipe_command("ingest", "--data", data, "--output", output)]


def _sides(local_data: str, seed: str, workdir: str, gcs_output: bool) -> dict:
    """{side: (commands, prefix)}: what each side runs, and behind what."""
    remote = f"gs://{BUCKET}/{PREFIX}"
    with_gcs = ["bash", os.path.join(ROOT, "scripts", "with_gcs.sh"), "--seed", seed, "--"]
    sides = {"local": (_commands(local_data, os.path.join(workdir, "out-local")), []),
             "bucket": (_commands(remote, os.path.join(workdir, "out-bucket")), with_gcs)}
    if gcs_output:
        sides["bucket, gs:// output"] = (
            _commands(remote, f"gs://{BUCKET}/out")[1:], with_gcs)  # the plan is the same
    return sides


def _warm_up() -> None:
    """Imports what both sides import, once, unmeasured: else the first run alone pays
    for reading TensorFlow's and Beam's libraries from disk (measured: 10.5 s against
    3.7 s for the same plan, with --limit 20)."""
    imports = "import tensorflow, apache_beam, google.cloud.storage, pipeline.local.ingest_command"
    subprocess.run([sys.executable, "-W", "ignore", "-c", imports], cwd=ROOT, check=True,
                   capture_output=True)


def _measure_all(sides: dict, workdir: str, repeat: int) -> dict:
    """Every side `repeat` times, alternating; {side: [[plan result, ingest result], ...]}."""
    _warm_up()
    runs = {side: [] for side in sides}
    for round_ in range(repeat):
        for side, (commands, prefix) in sides.items():
            for name in ("out-local", "out-bucket"):
                shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
            results, total = _run_measured(commands, prefix)
            for result in results:
                result["setup_s"] = total - sum(r["wall_s"] for r in results)
            runs[side].append(results)
            print(f"round {round_ + 1}/{repeat} {side}: "
                  + ", ".join(f"{r['wall_s']:.1f} s, {r['peak_mb']:.0f} MB" for r in results),
                  flush=True)
    return runs


def summarize(runs: dict) -> list:
    """Rows of medians per (side, command), with ratios against the local side."""
    rows = []
    for side, results in runs.items():
        steps = ["plan", "ingest"] if len(results[0]) == 2 else ["ingest"]
        for i, step in enumerate(steps):
            taken = [r[i] for r in results]
            rows.append({"side": side, "step": step,
                         "seconds": statistics.median(r["wall_s"] for r in taken),
                         "seconds_all": sorted(round(r["wall_s"], 2) for r in taken),
                         "peak_mb": statistics.median(r["peak_mb"] for r in taken),
                         "server_mb": max(r["server_mb"] for r in taken),
                         "setup_s": statistics.median(r["setup_s"] for r in taken)})
    local = {r["step"]: r for r in rows if r["side"] == "local"}
    for row in rows:
        row["time_ratio"] = row["seconds"] / local[row["step"]]["seconds"]
        row["memory_ratio"] = row["peak_mb"] / local[row["step"]]["peak_mb"]
    return rows


def goals(rows: list) -> list:
    """The 2x time and flat memory goals, checked on ingest from the bucket."""
    ingest = next(r for r in rows if r["side"] == "bucket" and r["step"] == "ingest")
    return [{"goal": "ingest bucket/local time", "limit": GOAL_TIME_RATIO,
             "value": ingest["time_ratio"], "met": ingest["time_ratio"] <= GOAL_TIME_RATIO},
            {"goal": "ingest bucket/local peak RSS", "limit": GOAL_MEMORY_RATIO,
             "value": ingest["memory_ratio"],
             "met": ingest["memory_ratio"] <= GOAL_MEMORY_RATIO}]


def code_state() -> dict:
    """The commit and a hash of uncommitted changes: others may edit the tree between runs."""
    import hashlib
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True).stdout  # noqa
    return {"commit": git("rev-parse", "HEAD").decode().strip(),
            "diff_sha1": hashlib.sha1(git("diff", "HEAD")).hexdigest()}


def main(argv=None) -> dict:
    """Seeds the bucket, runs both sides, prints the table, writes the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True,
                        help="a class-per-folder photo tree, e.g. ~/datasets/flowers_photos")
    parser.add_argument("--limit", type=int, default=None,
                        help="the first N photos per class only (a quick run)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side (median)")
    parser.add_argument("--quick", action="store_true", help="--limit 5 --repeat 1")
    parser.add_argument("--gcs-output", action="store_true",
                        help="a third row: ingest from the bucket to the bucket")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench bucket: needs root, for scripts/with_gcs.sh's network namespace; "
              "run it as root", file=sys.stderr)
        sys.exit(2)
    if not os.path.isdir(args.data):
        parser.error(f"--data {args.data}: no such folder")
    limit, repeat = (5, 1) if args.quick else (args.limit, args.repeat)
    code = code_state()
    workdir = tempfile.mkdtemp(prefix="imagepipe-bench-bucket-")
    try:
        # Local side: the folder itself; with --limit, the same subset as the bucket's.
        seed_tree = os.path.join(workdir, "seed", BUCKET, PREFIX)
        photos = mirror_photos(args.data, seed_tree, limit)
        local_data = seed_tree if limit else os.path.abspath(args.data)
        runs = _measure_all(_sides(local_data, os.path.join(workdir, "seed"), workdir,
                                   args.gcs_output), workdir, repeat)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows = summarize(runs)
    print_table(rows, ["side", "step", "seconds", "time_ratio", "peak_mb", "memory_ratio",
                       "server_mb", "setup_s"])
    checked = goals(rows)
    print_table(checked, ["goal", "limit", "value", "met"])
    return write_results("bucket", {
        "machine": machine_info(), "code": code, "data": os.path.abspath(args.data),
        "photos": photos,
        "limit": limit, "repeat": repeat, "rows": rows, "goals": checked,
        "runs": runs})


if __name__ == "__main__":
    main()
