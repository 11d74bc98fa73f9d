"""The lock object of a bucket output, for `imagepipe rollback`.

An output's run lock is an flock in its local state folder
(pipeline/local/lock.py): it keeps this machine's runs out, and no other
machine sees it. A compiled (Kubeflow, Vertex) pipeline's push destination,
its --pipeline-root, has no state folder here at all. On a bucket the
rollback also takes the object LOCK_OBJECT under the output, created only
where none is (files.create_exclusive: on gs:// an upload with a
generation-0 precondition, which the store decides atomically), so two
rollbacks, from any machines, never interleave their writes. It keeps out
rollbacks only: a compiled pipeline's Pusher does not take it, so a
recurring run must not be pushing meanwhile (docs/continuous.md).

A rollback takes seconds: an object older than STALE_S was left by one that
was killed, and is taken over.
"""
import contextlib
import json
import os
import socket
import time
from typing import Iterator, Optional

from core.storage import files
from core.errors import UsageError

LOCK_OBJECT = ".imagepipe-rollback.lock"
STALE_S = 600.0
TRIES = 3  # a holder that finishes, or an abandoned lock, between our looks


@contextlib.contextmanager
def bucket_lock(output: str) -> Iterator[str]:
    """Holds the lock object of `output` and yields its path; raises UsageError at once,
    naming --output and the holder, while another rollback holds it."""
    path = os.path.join(output, LOCK_OBJECT)
    _acquire(path, output)
    try:
        yield path
    finally:
        files.remove(path)


def _acquire(path: str, output: str) -> None:
    """Creates the lock object; retried when it was released meanwhile, and taken over
    when it was abandoned."""
    record = json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                         "started": time.time()})
    for _ in range(TRIES):
        if _create(path, output, record):
            return
        held = _read(path)
        if held == record:  # a retried upload whose first try landed: ours
            return
        if held is not None and _age(path, held) < STALE_S:
            raise UsageError(f"--output {output}: another imagepipe rollback is using it "
                             f"({_holder(held)}; lock object {path}); wait for it")
        # Removed only if unchanged since it was judged abandoned: another rollback
        # that took it over meanwhile keeps it.
        if held is not None and _read(path) == held:
            files.remove(path)
    raise UsageError(f"--output {output}: the lock object {path} keeps changing hands "
                     "(other rollbacks are starting); try again")


def _create(path: str, output: str, record: str) -> bool:
    """files.create_exclusive of `record`; a refused write names --output."""
    try:
        return files.create_exclusive(path, record.encode())
    except files.StorageError:
        raise
    except Exception as e:  # noqa: BLE001  (refused, unreachable: exit 2 naming the flag)
        lines = str(e).strip().splitlines() or [type(e).__name__]
        raise files.StorageError(f"--output {output}: cannot create the lock object "
                                 f"{path}: {lines[0]}") from None


def _read(path: str) -> Optional[str]:
    """The lock object's text, or None once it is gone."""
    try:
        return files.read_text(path)
    except Exception:  # noqa: BLE001  (gone, which each store says its own way; or not text)
        return "" if files.exists(path) else None


def _started(held: str) -> Optional[float]:
    try:
        return float(json.loads(held)["started"])
    except (ValueError, KeyError, TypeError):
        return None


def _age(path: str, held: str) -> float:
    """Seconds since the holder started; the object's own time if its text says none."""
    started = _started(held)
    if started is None:
        try:
            started = files.stat(path).mtime_ns / 1e9
        except Exception:  # noqa: BLE001  (gone meanwhile: it is free again)
            return STALE_S
    return time.time() - started


def _holder(held: str) -> str:
    try:
        record = json.loads(held)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record["started"]))
        return f"host {record['host']}, pid {record['pid']}, started {started}"
    except (ValueError, KeyError, TypeError):
        return "holder unknown"
