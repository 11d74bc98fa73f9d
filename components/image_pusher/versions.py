"""Versioned, atomic pushes into a TF Serving model base directory.

TF Serving loads the highest numeric subdirectory of a model's base path as
soon as it appears. TFX's stock Pusher copies the SavedModel straight into
`<base>/<unix time>/` (saved_model.pb last), so a crash mid-copy leaves a
numeric folder that a server may try to load, and two pushes within a second
share a version. Here the copy goes to a hidden, non-numeric sibling, which
TF Serving ignores, and is renamed to its version when complete: on a local
or POSIX filesystem the rename is atomic.
"""
import os
import shutil
import time
import uuid
from typing import List


def versions(base_dir: str) -> List[int]:
    """The numeric version folders under `base_dir`, ascending."""
    if not os.path.isdir(base_dir):
        return []
    return sorted(int(n) for n in os.listdir(base_dir)
                  if n.isdigit() and os.path.isdir(os.path.join(base_dir, n)))


def next_version(base_dir: str) -> int:
    """The current Unix time, or one more than the highest version if that is later.

    Time-based numbers stay readable and sortable across machines; the max()
    keeps them strictly increasing even within one second or after a clock
    step backwards.
    """
    existing = versions(base_dir)
    return max(int(time.time()), existing[-1] + 1 if existing else 0)


def publish(source_dir: str, base_dir: str, version: int) -> str:
    """Copies `source_dir` to `<base_dir>/<version>` atomically; returns that path.

    Raises FileExistsError if the version exists. On any failure the partial
    copy is removed and no version folder appears.
    """
    final = os.path.join(base_dir, str(version))
    if os.path.exists(final):
        raise FileExistsError(f"{final} already exists; versions are never overwritten")
    os.makedirs(base_dir, exist_ok=True)
    partial = os.path.join(base_dir, f".{version}.partial-{uuid.uuid4().hex[:8]}")
    try:
        shutil.copytree(source_dir, partial)
        os.rename(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return final
