"""One `imagepipe run` per output directory at a time.

Two runs on the same output would interleave writes to one ML Metadata store
and one push destination. The lock is an flock on <output>/.imagepipe.lock,
held for the whole run: the kernel releases it when the process ends however
it ends (even SIGKILL), so a lock left by a killed run is simply free again
and the next run takes it over; nothing has to guess whether a PID is alive.
The file records the holder's PID and start time, for the refusal message.
"""
import contextlib
import fcntl
import json
import os
import time
from typing import Iterator, Optional

from core.errors import UsageError

LOCK_FILE = ".imagepipe.lock"


@contextlib.contextmanager
def output_lock(folder: str, label: Optional[str] = None) -> Iterator[None]:
    """Holds the lock in `folder` (the run's local state folder), or raises UsageError at
    once if a run has it; messages name `label` (default: "--output <folder>")."""
    path = os.path.join(folder, LOCK_FILE)
    label = label or f"--output {folder}"
    try:  # never follow a planted symlink into someone else's file
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise UsageError(f"{label}: cannot create {LOCK_FILE}: {e.strerror}") \
            from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{label}: another imagepipe run is using it "
                             f"({_holder(path)}); wait for it, or use another --output") \
                from None
        except OSError as e:  # ENOLCK, EOPNOTSUPP: some network and FUSE filesystems
            raise UsageError(f"{label}: its filesystem does not support file "
                             f"locks ({e.strerror}); use a local --output") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": time.time()}).encode())
        yield
    finally:
        os.close(fd)  # releases the flock


def _holder(path: str) -> str:
    try:
        with open(path) as f:
            holder = json.load(f)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder["started"]))
        return f"pid {holder['pid']}, started {started}"
    except (OSError, ValueError, KeyError):
        return "holder unknown"
