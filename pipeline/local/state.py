"""The run's local state folder: what cannot live in a bucket, and the leftovers of dead runs.

ML Metadata's SQLite store, the run lock and the Trainer's decode cache need
a local file system. For a local --output the folder is the output itself;
for a gs:// one it is named by `PipelineConfig.state_path` and printed.
A Trainer that is killed leaves its decode cache behind; each cache folder
carries its process id (core/contract.py), and `prepare` removes
those whose process is gone, never a live one's.
"""
import os
import shutil
from typing import List

from core.contract import DECODE_CACHE_DIR, decode_cache_owner


def decode_cache_root(state_path: str) -> str:
    """Where the Trainer keeps its decoded images during a local run."""
    return os.path.join(state_path, DECODE_CACHE_DIR)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def remove_dead_caches(state_path: str) -> List[str]:
    """Deletes the decode caches whose process has exited; returns their names."""
    root = decode_cache_root(state_path)
    if not os.path.isdir(root):
        return []
    removed = []
    for name in sorted(os.listdir(root)):
        pid = decode_cache_owner(name)
        if pid is not None and not _alive(pid):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)
            removed.append(name)
    return removed


def prepare(state_path: str) -> List[str]:
    """Creates the state folder; removes dead runs' leftovers (their names are returned)."""
    os.makedirs(state_path, exist_ok=True)
    return remove_dead_caches(state_path)
