"""Versioned pushes into a TF Serving model base directory, never half-visible.

TF Serving loads the highest numeric subdirectory of a model's base path as
soon as it appears. TFX's stock Pusher copies the SavedModel straight into
`<base>/<unix time>/` (saved_model.pb last), so a crash mid-copy leaves a
numeric folder that a server may try to load, and two pushes within a second
share a version.

Every version is first written under a hidden, non-numeric name, which TF
Serving ignores. Local (POSIX) destinations then rename it to its version:
the rename is atomic. Object stores (gs://) have no atomic folder rename
(TF's GCS filesystem renames object by object, in name order, which would
put saved_model.pb before the variables). There the staged copy is checked
against the source, file by file and size by size, then copied server-side
into the version folder with saved_model.pb last: until it exists, TF
Serving cannot load the folder and retries, and once it exists everything
it references does; `versions` lists only folders that have it.

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

from components.storage import files
from components.storage.files import is_remote
from components.storage.tree_copy import copy_tree

PROVENANCE_FILE = os.path.join("assets.extra", "imagepipe_push.json")
COMMIT_FILE = "saved_model.pb"  # written last on object stores



def versions(base_dir: str, complete_only: bool = True) -> List[int]:
    """The numeric version folders under `base_dir`, ascending; on an object store,
    only those whose commit file is there, unless `complete_only` is False."""
    base_dir = str(base_dir)
    if not files.isdir(base_dir):
        return []
    found = sorted(int(n) for n in files.list_dir(base_dir)[0] if n.isdigit())
    if not is_remote(base_dir) or not complete_only:
        return found
    return [v for v in found if is_complete(os.path.join(base_dir, str(v)))]


def next_version(base_dir: str) -> int:
    """The current Unix time, or one more than the highest version if that is later.

    Time-based numbers stay readable and sortable across machines; the max()
    keeps them strictly increasing even within one second or after a clock
    step backwards.
    """
    existing = versions(base_dir, complete_only=False)  # a killed push's number is taken
    return max(int(time.time()), existing[-1] + 1 if existing else 0)


def provenance(version_dir: str) -> Optional[dict]:
    """The push record of a version folder, or None (pushed by something else)."""
    path = os.path.join(str(version_dir), PROVENANCE_FILE)
    try:
        if not files.exists(path):
            return None
        return json.loads(files.read_text(path))
    except (OSError, ValueError):
        return None


def is_complete(version_dir: str, commit_file: str = COMMIT_FILE) -> bool:
    """Whether the version's commit file is there (always, for a local push)."""
    return files.isfile(os.path.join(str(version_dir), commit_file))


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
    if is_remote(base_dir):
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
    """Staged under a hidden name, verified, then copied into `final` with `commit_file`
    last (see the module docstring). On failure nothing numeric is left."""
    if files.exists(final):
        raise FileExistsError(f"{final} already exists; versions are never overwritten")
    base, version = os.path.split(final)
    staging = os.path.join(base, f".{version}.partial-{uuid.uuid4().hex[:8]}")
    try:
        copied = copy_tree(source_dir, staging)
        for rel, data in extra.items():
            files.write_bytes(os.path.join(staging, rel), data)
        _verify(source_dir, staging, copied)
        copy_tree(staging, final, last=commit_file)
    except BaseException:
        files.rmtree(final)
        raise
    finally:
        files.rmtree(staging)
    return final


def _verify(source_dir: str, staging: str, copied: List[str]) -> None:
    """Every source file is in the staged copy, with its size; raises OSError if not."""
    for rel in copied:
        want, got = files.size(os.path.join(source_dir, rel)), \
            files.size(os.path.join(staging, rel))
        if want != got:
            raise OSError(f"push: {rel} staged with {got} bytes, the model has {want}")
