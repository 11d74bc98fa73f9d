"""Shared benchmark plumbing: machine info, a plain-text table, the JSON result file."""
import json
import os
import platform
import time

# Tests point this elsewhere, so a quick run never overwrites the recorded results.
RESULTS_DIR = os.environ.get("IMAGEPIPE_BENCH_RESULTS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "results")


def machine_info() -> dict:
    """What the numbers were measured on."""
    import psutil
    import tensorflow as tf
    return {"cpus": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "gpus": [g.name for g in tf.config.list_physical_devices("GPU")],
            "platform": platform.platform(), "python": platform.python_version(),
            "tensorflow": tf.__version__, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def print_table(rows, columns) -> None:
    """Rows of dicts as aligned columns; floats with 2 decimals."""
    cells = [[f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c]) for c in columns]
             for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def write_results(name: str, payload: dict) -> dict:
    """Writes bench/results/<name>.json and returns the payload."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    with open(os.path.join(RESULTS_DIR, f"{name}.json"), "w") as f:
        json.dump(payload, f, indent=2)
    print(f"wrote {os.path.join(RESULTS_DIR, name + '.json')}")
    return payload


def imagepipe_command(*args) -> list:
    """The `imagepipe` console script of this environment, with `args`."""
    import sys
    return [os.path.join(os.path.dirname(sys.executable), "imagepipe"), *map(str, args)]


def rss_tree(process=None) -> int:
    """RSS in bytes of `process` (default: this one) plus all its descendants."""
    import psutil
    process = process or psutil.Process()
    tree = [process, *process.children(recursive=True)]
    return sum(p.memory_info().rss for p in tree if p.is_running())


def run_sampled(command, interval: float = 0.1, env=None, cwd=None) -> dict:
    """Runs `command` (in `cwd`, with `env`: default this process's), sampling the RSS of
    its process tree; stdout lines are timestamped.

    Returns {"wall_s", "lines": [(seconds, line)], "samples": [(seconds, rss_bytes)]};
    raises RuntimeError with the output's tail if the command fails. Worker
    processes (Beam's, the encoding pool) count: their RSS is summed with the
    parent's at each sample.
    """
    import subprocess
    import threading

    import psutil
    start = time.perf_counter()
    process = psutil.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, bufsize=1, env=env, cwd=cwd)
    lines, samples = [], []

    def read():
        for line in process.stdout:
            lines.append((time.perf_counter() - start, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while process.poll() is None:
        try:
            samples.append((time.perf_counter() - start, rss_tree(process)))
        except psutil.Error:
            pass
        time.sleep(interval)
    wall = time.perf_counter() - start
    reader.join()
    if process.returncode != 0:
        tail = "\n".join(line for _, line in lines[-40:])
        raise RuntimeError(f"{' '.join(map(str, command))} exited {process.returncode}:\n{tail}")
    return {"wall_s": wall, "lines": lines, "samples": samples}


def component_peaks_mb(run: dict) -> dict:
    """{component id: peak RSS in MB while it ran}, from the `start`/`done` progress lines."""
    return {node: round(max(inside) / 1e6, 1) if inside else None
            for node, _, inside in _component_windows(run)}


def component_rises_mb(run: dict) -> dict:
    """{component id: its peak RSS minus the RSS it started with, in MB}.

    Why besides the peak: the components share one process, and the heap a
    component grew is not handed back when it ends, so a component's peak also
    carries what earlier ones left (StatisticsGen's growth showed up as
    Transform's). The rise is what the component itself added.
    """
    return {node: round((max(inside) - before) / 1e6, 1) if inside and before else None
            for node, before, inside in _component_windows(run)}


def _component_windows(run: dict):
    """(id, RSS at its start, [RSS samples while it ran]) per component, in run order."""
    opened = {}
    for at, line in run["lines"]:
        words = line.split()
        if len(words) >= 2 and words[0] == "start":
            opened[words[1]] = at
        elif len(words) >= 2 and words[0] == "done" and words[1] in opened:
            begin = opened.pop(words[1])
            before = [rss for t, rss in run["samples"] if t <= begin]
            yield (words[1], before[-1] if before else None,
                   [rss for t, rss in run["samples"] if begin <= t <= at])


def read_summary(output: str) -> dict:
    with open(os.path.join(output, "summary.json")) as f:
        return json.load(f)


def run_result_in_process(code: str, what: str) -> dict:
    """Runs Python `code` in a fresh interpreter (TF quiet, Keras 2, from the repo root);
    returns the JSON it printed after 'RESULT ', or raises naming `what`."""
    import subprocess
    import sys
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                          text=True, env=env, cwd=os.path.dirname(os.path.dirname(__file__)))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])
