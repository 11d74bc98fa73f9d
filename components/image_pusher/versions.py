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

Which version is served: TF Serving serves the highest one unless
models.config pins another. The pin, and the versions a rollback took out of
service, are kept per model in `SERVED_FILE` beside models.config (the
serving root); a TFLite base folder's `POINTER_FILE` names its current
version. See `ServingState`.
"""
import dataclasses
import json
import os
import shutil
import time
import uuid
from typing import Dict, List, Optional, Tuple

from core.contract import ASSETS_EXTRA, TFLITE_MODEL_FILE
from core.storage import files, shared_json
from core.storage.files import is_remote
from core.storage.tree_copy import copy_tree

PROVENANCE_FILE = os.path.join(ASSETS_EXTRA, "imagepipe_push.json")
COMMIT_FILE = "saved_model.pb"  # written last on object stores
TFLITE_COMMIT_FILE = TFLITE_MODEL_FILE  # a TFLite version's
SERVED_FILE = "served.json"  # in the serving root, beside models.config
POINTER_FILE = "CURRENT"  # in a TFLite base folder: the version clients should use


def versions(base_dir: str, complete_only: bool = True) -> List[int]:
    """The numeric version folders under `base_dir`, ascending; on an object store,
    only those whose commit file is there, unless `complete_only` is False."""
    found = _numbered(str(base_dir))
    if not is_remote(base_dir) or not complete_only:
        return found
    return _with_commit(str(base_dir), found, COMMIT_FILE)


def complete_versions(base_dir: str, commit_file: str = COMMIT_FILE) -> List[int]:
    """The versions whose commit file is there, local or not: what a server can load
    (a local folder made by hand may lack it)."""
    return _with_commit(str(base_dir), _numbered(str(base_dir)), commit_file)


def _numbered(base_dir: str) -> List[int]:
    if not files.isdir(base_dir):
        return []
    return sorted(int(n) for n in files.list_dir(base_dir)[0] if n.isdigit())


def _with_commit(base_dir: str, found: List[int], commit_file: str) -> List[int]:
    return [v for v in found if is_complete(os.path.join(base_dir, str(v)), commit_file)]


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
            source_uri: Optional[str] = None, files: Optional[Dict[str, bytes]] = None,
            record: Optional[dict] = None) -> str:
    """Copies `source_dir` to `<base_dir>/<version>`, never half-visible; returns that path.

    `commit_file` is the file copied last on object stores. With `source_uri`
    (the pushed Model artifact's URI), a provenance record is added: version,
    source_uri, pushed_at (Unix time) and the fields of `record` (the Pusher's:
    spans, accuracy, drift_overridden); `files` ({relative path: bytes}) are
    added too. Raises FileExistsError if the version exists. On any failure
    the partial copy is removed.
    """
    base_dir = str(base_dir)
    final = os.path.join(base_dir, str(version))
    extra = dict(files or {})
    if source_uri is not None:
        extra[PROVENANCE_FILE] = json.dumps({**(record or {}), "version": version,
                                             "source_uri": source_uri,
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


@dataclasses.dataclass(frozen=True)
class ServingState:
    """One model's entry in SERVED_FILE.

    `pinned`: the version models.config pins (None: TF Serving's own choice, the
    highest). `rolled_back`: the versions a rollback took out of service; they
    stay out (no baseline, never pushed again) after a later push clears the pin.
    """

    pinned: Optional[int]
    rolled_back: Tuple[int, ...]


def read_served(serving_root: str) -> Dict[str, dict]:
    """SERVED_FILE: {model name: {"pinned": int or null, "rolled_back": [int]}}; {} if
    nothing was ever pinned. A file that is not JSON raises StorageError, naming it."""
    path = os.path.join(str(serving_root), SERVED_FILE)
    if not files.exists(path):
        return {}
    try:
        return json.loads(files.read_text(path))
    except ValueError as e:  # guessing would serve a version nobody chose
        raise files.StorageError(f"{path} is not JSON ({e}): fix it or remove it (it pins "
                                 "the served versions)") from None


def _root_and_name(base_dir: str) -> Tuple[str, str]:
    return os.path.split(str(base_dir).rstrip("/"))


def serving_state(base_dir: str) -> ServingState:
    """The pin and the rolled-back versions of the model whose base folder is `base_dir`."""
    root, name = _root_and_name(base_dir)
    entry = read_served(root).get(name, {})
    return ServingState(entry.get("pinned"), tuple(sorted(entry.get("rolled_back", ()))))


def write_serving_state(base_dir: str, state: ServingState) -> None:
    """Replaces the model's entry in SERVED_FILE, conditionally: another model's entry,
    written meanwhile, is kept (core/storage/shared_json.py); never half-written."""
    root, name = _root_and_name(base_dir)
    read_served(root)  # a file that is not JSON is refused, naming it, before any change
    shared_json.update_json(os.path.join(root, SERVED_FILE), shared_json.replaced_entry(
        name, {"pinned": state.pinned, "rolled_back": sorted(state.rolled_back)}), {})


def served_version(base_dir: str) -> Optional[int]:
    """The version TF Serving serves: the pinned one, else the highest complete one."""
    pinned = serving_state(base_dir).pinned
    if pinned is not None:
        return pinned
    complete = complete_versions(base_dir)
    return complete[-1] if complete else None


def in_service(base_dir: str) -> List[int]:
    """The complete versions that may serve, newest first: the served one, then those
    below it, less the versions a rollback took out of service. What the push
    destination's readers (the Kubeflow target's baseline and warm start) start from."""
    served, rolled_back = served_version(base_dir), serving_state(base_dir).rolled_back
    return [v for v in reversed(complete_versions(base_dir))
            if (served is None or v <= served) and v not in rolled_back]


def unpin_for(base_dir: str, version: int) -> None:
    """After a push of `version`: if it is the highest complete version, the pin goes, so
    it is served. An older model's version, kept by a re-run, leaves the pin alone, and
    so does a version taken out of service."""
    state = serving_state(base_dir)
    if state.pinned is None or version in state.rolled_back:
        return
    complete = complete_versions(base_dir)
    if complete and complete[-1] == version:
        write_serving_state(base_dir, dataclasses.replace(state, pinned=None))


def tflite_current(tflite_dir: str, served: Optional[int],
                   rolled_back: Tuple[int, ...]) -> Optional[int]:
    """The TFLite version that goes with SavedModel version `served`: the newest complete
    one not above it and not rolled back (a push whose TFLite failed the parity gate
    kept the one before)."""
    if served is None:
        return None
    found = [v for v in complete_versions(tflite_dir, TFLITE_COMMIT_FILE)
             if v <= served and v not in rolled_back]
    return found[-1] if found else None


def point_tflite(tflite_dir: str, base_dir: str) -> Optional[int]:
    """(Re)writes `<tflite_dir>/POINTER_FILE` (the version number and a newline) from the
    served SavedModel version; removes it when none fits. Returns the version."""
    if not files.isdir(str(tflite_dir)):
        return None
    current = tflite_current(tflite_dir, served_version(base_dir),
                             serving_state(base_dir).rolled_back)
    path = os.path.join(str(tflite_dir), POINTER_FILE)
    if current is None:
        files.remove(path)
    else:
        files.write_text(path, f"{current}\n")
    return current


def read_pointer(tflite_dir: str) -> Optional[int]:
    """The TFLite version POINTER_FILE names, or None."""
    path = os.path.join(str(tflite_dir), POINTER_FILE)
    if not files.exists(path):
        return None
    text = files.read_text(path).strip()
    return int(text) if text.isdigit() else None
