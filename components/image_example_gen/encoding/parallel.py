"""Encode image files on every local core: a pool of encode_worker processes.

Why worker processes: decoding a small image is mostly Python (PIL parses JPEG
markers in Python), so threads serialize on the GIL: more threads were no
faster than one. Beam's own multi-processing DirectRunner starts workers that
import Beam and TensorFlow, which takes each longer than encoding many
thousands of small images. Our workers import only PIL and protobuf and start
almost at once (measured: docs/performance.md). They are plain subprocesses,
not multiprocessing: spawn re-runs the caller's main script in every child (a
pipeline script without a `__main__` guard would run again), and fork is
unsafe once TensorFlow has started threads. On distributed runners, which run
one SDK process per core already, there is no pool (see `local_processes`).
"""
import json
import os
import queue
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Dict, List, Sequence, Tuple

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from components.image_example_gen.encoding import encode_worker
from components.image_example_gen.encoding.encode import Fact

MAX_PROCESSES = 8
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def local_processes(beam_pipeline_args: Sequence[str]) -> int:
    """How many encoding processes ingestion should start: 1 means none.

    Only DirectRunner's in_memory mode runs every bundle in this one process;
    there the pool gives one encoder per core (up to MAX_PROCESSES). Any other
    runner or mode already spreads bundles over processes.
    """
    options = PipelineOptions(list(beam_pipeline_args))
    runner = options.view_as(StandardOptions).runner
    mode = options.view_as(DirectOptions).direct_running_mode
    if runner not in (None, "DirectRunner", "direct") or mode != "in_memory":
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_PROCESSES))


class _Worker:
    """One encode_worker subprocess; `call` sends a request line and waits for the reply."""

    def __init__(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", encode_worker.__name__], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env, text=True, encoding="utf-8")

    def call(self, request: str) -> dict:
        try:
            self._proc.stdin.write(request)
            self._proc.stdin.flush()
            reply = self._proc.stdout.readline()
        except OSError:
            reply = ""
        if not reply:
            raise RuntimeError(f"an image-encoding worker died (exit code {self._proc.poll()})")
        return json.loads(reply)

    def close(self) -> None:
        self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


class EncoderPool:
    """`processes` encode_worker subprocesses, each driven by one thread of this process."""

    def __init__(self, processes: int):
        self._workers = [_Worker() for _ in range(processes)]
        self._idle = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)
        self._threads = ThreadPoolExecutor(processes, thread_name_prefix="encode")

    def submit(self, context: dict, name: str,
               files: List[list]) -> "Future[Tuple[Dict[Fact, int], List[dict], list]]":
        """Encodes and writes one shard of local files on the next idle worker.

        See encode_worker.shard_request for the arguments. The future's
        result is write_shard's (facts, skipped) and the shard's health rows;
        it raises if the worker died or could not write, naming the shard.
        """
        request = encode_worker.shard_request(context, name, files)
        return self._threads.submit(self._run, request, files[0][0])

    def submit_units(self, context: dict, name: str,
                     units: List[list]) -> "Future[Tuple[Dict[Fact, int], List[dict], list]]":
        """As `submit`, for one shard of row units (encode_worker's "units" request)."""
        request = json.dumps({**context, "name": name, "units": units}) + "\n"
        return self._threads.submit(self._run, request, units[0][1])

    def submit_hashes(self, context: dict, files: List[list]) -> "Future[Tuple[list, list]]":
        """Only hashes local files (`imagepipe inspect`): (rows, skipped) of
        encode.hash_files; nothing is written."""
        request = encode_worker.shard_request({**context, "hash_only": True}, "", files)
        return self._threads.submit(self._run, request, files[0][0])

    def _run(self, request: str, first: str):
        worker = self._idle.get()
        try:
            reply = worker.call(request)
        except RuntimeError as e:
            raise RuntimeError(f"{e}, on the shard starting at {first}") from None
        finally:
            self._idle.put(worker)
        if "error" in reply:
            raise OSError(reply["error"])
        if "rows" in reply:
            return reply["rows"], reply["skipped"]
        facts = {tuple(row[:-1]): row[-1] for row in reply["facts"]}
        return facts, reply["skipped"], reply["health"]

    def close(self) -> None:
        """Waits for submitted shards, then stops the workers (they exit when stdin closes)."""
        self._threads.shutdown()
        for worker in self._workers:
            worker.close()
