"""Versioned pushes into a TF Serving model base directory, never half-visible.

TF Serving loads the highest numeric subdirectory of a model's base path as
soon as it appears. TFX's stock Pusher copies the SavedModel straight into
`<base>/<unix time>/` (saved_model.pb last), so a crash mid-copy leaves a
numeric folder that a server may try to load, and two pushes within a second
share a version.

Local (POSIX) destinations: the copy goes to a hidden, non-numeric sibling,
which TF Serving ignores, and is renamed to its version when complete; the
rename is atomic. Object stores (gs://, s3://) have no atomic folder rename
(TF's GCS filesystem renames object by object, in name order, which would put
saved_model.pb before the variables). There, files are copied into the
version folder with saved_model.pb last: until it exists, TF Serving cannot
load the folder and retries, and once it exists everything it references does.

Every pushed version records where it came from (`PROVENANCE_FILE` in its
assets.extra, which TF Serving ignores), so the Kubeflow target's baseline
step can tell the candidate's own push from the previous blessed model's.
"""
import json
import os
import shutil
import time
import uuid
from typing import Dict, List, Optional

from components.storage.tree_copy import copy_tree

PROVENANCE_FILE = os.path.join("assets.extra", "imagepipe_push.json")
COMMIT_FILE = "saved_model.pb"  # written last on object stores


def is_local(path: str) -> bool:
    return "://" not in str(path)


def _gfile():
    import tensorflow as tf  # only for object stores: keeps the local path light
    return tf.io.gfile


def versions(base_dir: str) -> List[int]:
    """The numeric version folders under `base_dir`, ascending."""
    base_dir = str(base_dir)
    if is_local(base_dir):
        if not os.path.isdir(base_dir):
            return []
        return sorted(int(n) for n in os.listdir(base_dir)
                      if n.isdigit() and os.path.isdir(os.path.join(base_dir, n)))
    gfile = _gfile()
    if not gfile.isdir(base_dir):
        return []
    return sorted(int(n.rstrip("/")) for n in gfile.listdir(base_dir) if n.rstrip("/").isdigit())


def next_version(base_dir: str) -> int:
    """The current Unix time, or one more than the highest version if that is later.

    Time-based numbers stay readable and sortable across machines; the max()
    keeps them strictly increasing even within one second or after a clock
    step backwards.
    """
    existing = versions(base_dir)
    return max(int(time.time()), existing[-1] + 1 if existing else 0)


def provenance(version_dir: str) -> Optional[dict]:
    """The push record of a version folder, or None (pushed by something else)."""
    path = os.path.join(str(version_dir), PROVENANCE_FILE)
    try:
        if is_local(path):
            with open(path) as f:
                return json.load(f)
        gfile = _gfile()
        if not gfile.exists(path):
            return None
        with gfile.GFile(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def is_complete(version_dir: str, commit_file: str = COMMIT_FILE) -> bool:
    """Whether the version's commit file is there (always, for a local push)."""
    path = os.path.join(str(version_dir), commit_file)
    return os.path.isfile(path) if is_local(path) else _gfile().exists(path)


def pushed_version_of(base_dir: str, source_uri: str) -> Optional[int]:
    """The newest complete version pushed from `source_uri`, or None.

    Lets a Pusher that failed or was killed after publishing reuse that
    version on its re-run, instead of serving the same model twice.
    """
    for version in reversed(versions(base_dir)):
        path = os.path.join(str(base_dir), str(version))
        record = provenance(path)
        if record and record.get("source_uri") == source_uri and is_complete(path):
            return version
    return None


def publish(source_dir: str, base_dir: str, version: int, commit_file: str = COMMIT_FILE,
            source_uri: Optional[str] = None, files: Optional[Dict[str, bytes]] = None) -> str:
    """Copies `source_dir` to `<base_dir>/<version>`, never half-visible; returns that path.

    `commit_file` is the file copied last on object stores. With `source_uri`
    (the pushed Model artifact's URI), a provenance record is added; `files`
    ({relative path: bytes}) are added too. Raises
    FileExistsError if the version exists. On any failure the partial copy is
    removed.
    """
    base_dir = str(base_dir)
    final = os.path.join(base_dir, str(version))
    extra = dict(files or {})
    if source_uri is not None:
        extra[PROVENANCE_FILE] = json.dumps({"version": version, "source_uri": source_uri,
                                             "pushed_at": time.time()}).encode()
    if not is_local(base_dir):
        return _publish_to_object_store(str(source_dir), final, commit_file, extra)
    if os.path.exists(final):
        raise FileExistsError(f"{final} already exists; versions are never overwritten")
    os.makedirs(base_dir, exist_ok=True)
    partial = os.path.join(base_dir, f".{version}.partial-{uuid.uuid4().hex[:8]}")
    try:
        shutil.copytree(source_dir, partial)
        for rel, data in extra.items():
            os.makedirs(os.path.dirname(os.path.join(partial, rel)), exist_ok=True)
            with open(os.path.join(partial, rel), "wb") as f:
                f.write(data)
        os.rename(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return final


def _publish_to_object_store(source_dir: str, final: str, commit_file: str,
                             extra: dict) -> str:
    """File by file into `final`, `commit_file` last (see the module docstring)."""
    gfile = _gfile()
    if gfile.exists(final):
        raise FileExistsError(f"{final} already exists; versions are never overwritten")
    try:
        for rel, data in extra.items():
            _write(gfile, os.path.join(final, rel), data)
        copy_tree(source_dir, final, last=commit_file)
    except BaseException:
        if gfile.exists(final):
            gfile.rmtree(final)
        raise
    return final


def _write(gfile, path: str, data: bytes) -> None:
    gfile.makedirs(os.path.dirname(path))
    with gfile.GFile(path, "wb") as f:
        f.write(data)
