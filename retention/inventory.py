"""What an output holds, in the pieces `imagepipe gc` keeps or deletes whole (Unit).

One listing of every file under the output (files.walk_files: one paginated list on
gs://) gives each piece its size and the time of its newest file. The pieces:
- pushed versions: `serving/<model>/<version>/` and `tflite/<model>/<version>/`, and the
  hidden copies of pushes that never finished (`.<version>.partial-<hex>`);
- the span store's entries (`<root>/ImageExampleGen/spans/span-N-<key>/`), and in a
  complete entry each `attempt-*` folder its `_COMPLETE` marker does not name;
- a compiled pipeline's run folders, `<root>/<pipeline name>/<run id>/` (Kubeflow), or
  `<root>/<project number>/<job>/` (Vertex AI);
- a local run's artifact folders, `<root>/<component>/<output key>/<execution id>/`:
  those ML Metadata records as this pipeline's runs' outputs, and those no record names
  whose execution never finished (a run that was killed). Without a local store none
  are listed; nor are folders of finished executions that no record names (an output
  moved from elsewhere, whose records name the old place).
Everything else (served.json, models.config, classes.json, summary.json, the report,
ML Metadata itself, TFX's empty `.system` folders) is no piece: gc never deletes it.
"""
import dataclasses
import os
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from components.image_example_gen import span_store
from components.image_pusher.versions import (COMMIT_FILE, TFLITE_COMMIT_FILE,
                                               complete_versions, versions)
from core.storage import files

# One word each: printed before the unit's path, and the `kind` of the --json record.
VERSION, TFLITE, PARTIAL = "version", "tflite", "partial"
SPAN_ENTRY, ATTEMPT = "span", "attempt"
RUN, ARTIFACT = "run", "artifact"
KINDS = (VERSION, TFLITE, PARTIAL, SPAN_ENTRY, ATTEMPT, RUN, ARTIFACT)
PARTIAL_MARK = ".partial-"  # versions.publish's hidden copy: .<version>.partial-<hex>


@dataclasses.dataclass(frozen=True)
class Unit:
    """A folder gc keeps or deletes whole, never in part."""

    path: str
    kind: str
    size: int = 0  # bytes of its files
    newest: Optional[float] = None  # Unix time of its newest file; None: it holds none
    version: Optional[int] = None  # VERSION, TFLITE
    complete: bool = True  # VERSION, TFLITE: its commit file is there; SPAN_ENTRY: published
    artifact_ids: Tuple[int, ...] = ()  # ARTIFACT: its ML Metadata records not yet DELETED
    recorded: bool = True  # ARTIFACT: whether ML Metadata knows its URI


@dataclasses.dataclass(frozen=True)
class Inventory:
    """The units, and the bytes of every file under the output (units and the rest)."""

    units: List[Unit]
    total: int


@dataclasses.dataclass(frozen=True)
class Records:
    """What the local ML Metadata store says of the pipeline root (retention/lineage.py)."""

    ours: Dict[str, Tuple[int, ...]]  # URI of each output of this pipeline's runs -> live ids
    known: FrozenSet[str]  # every URI the store records, of any pipeline or rollback
    unfinished: FrozenSet[int] = frozenset()  # executions neither complete nor cached


def version_units(base_dir: str, kind: str, commit_file: str) -> List[Unit]:
    """The numbered folders of a serving or TFLite base folder, and hidden partial copies."""
    if not files.isdir(base_dir):
        return []
    complete = set(complete_versions(base_dir, commit_file))
    units = [Unit(os.path.join(base_dir, str(v)), kind, version=v, complete=v in complete)
             for v in versions(base_dir, complete_only=False)]
    hidden = [n for n in files.list_dir(base_dir)[0] if n.startswith(".") and PARTIAL_MARK in n]
    return units + [Unit(os.path.join(base_dir, name), PARTIAL) for name in hidden]


def span_units(store: str) -> List[Unit]:
    """Each entry of the span store, and the attempts its marker does not name."""
    if not files.isdir(store):
        return []
    units = []
    for name in files.list_dir(store)[0]:
        if not name.startswith("span-"):
            continue
        entry = os.path.join(store, name)
        try:
            winner = span_store.published(entry)
        except ValueError:  # a marker that is not JSON: the entry is kept whole, unjudged
            units.append(Unit(entry, SPAN_ENTRY))
            continue
        units.append(Unit(entry, SPAN_ENTRY, complete=winner is not None))
        if winner is not None:
            units += [Unit(os.path.join(entry, n), ATTEMPT) for n in files.list_dir(entry)[0]
                      if n.startswith(span_store.ATTEMPT_PREFIX) and n != os.path.basename(winner)]
    return units


def run_groups(root: str, pipeline_name: str) -> List[str]:
    """The folders of the pipeline root that hold compiled runs: the pipeline's name (KFP
    writes `<root>/<pipeline name>/<run id>/<task>/<output>`) and all-digit names (Vertex AI
    writes `<root>/<project number>/<pipeline job>/<task>_<id>/<output>`). A local run's
    component folders are never all digits."""
    if not files.isdir(root):
        return []
    return [os.path.join(root, name) for name in files.list_dir(root)[0]
            if name == pipeline_name or name.isdigit()]


def run_units(groups: Sequence[str]) -> List[Unit]:
    """One unit per compiled run folder."""
    return [Unit(os.path.join(group, name), RUN)
            for group in groups for name in files.list_dir(group)[0]]


def artifact_units(root: str, walked: Iterable[str], records: Records,
                   skipped: Sequence[str]) -> List[Unit]:
    """A local run's artifact folders: this pipeline's run outputs (ML Metadata's URIs, and
    the folders on disk), and folders no record names, of executions that never finished.
    `skipped`: the prefixes that are no artifacts (the span store, the compiled runs)."""
    on_disk = {_artifact_folder(root, path) for path in walked} - {None}
    on_disk = {p for p in on_disk if not _under_any(p, skipped)}
    units = []
    for path in sorted(on_disk):
        if path in records.ours:
            units.append(Unit(path, ARTIFACT, artifact_ids=records.ours[path]))
        elif path not in records.known and _execution_of(path) in records.unfinished:
            units.append(Unit(path, ARTIFACT, recorded=False))
    for path, ids in sorted(records.ours.items()):  # recorded, with nothing on disk
        if ids and path not in on_disk and _under_any(path, [root]) \
                and not _under_any(path, skipped):
            units.append(Unit(path, ARTIFACT, artifact_ids=ids))
    return units


def _execution_of(path: str) -> Optional[int]:
    name = path.rsplit("/", 1)[-1]
    return int(name) if name.isdigit() else None


def _artifact_folder(root: str, path: str) -> Optional[str]:
    """`<root>/<component>/<output key>/<id>` of a file under it; None for other files and
    for TFX's own folders (`.system`, `.backup`)."""
    if not _under_any(path, [root]):
        return None
    parts = path[len(root.rstrip("/")) + 1:].split("/")
    if len(parts) < 4 or parts[0].startswith(".") or parts[1].startswith("."):
        return None
    return "/".join([root.rstrip("/"), *parts[:3]])


def _under_any(path: str, prefixes: Iterable[str]) -> bool:
    return any(path.startswith(p.rstrip("/") + "/") or path == p.rstrip("/") for p in prefixes)


def with_sizes(units: List[Unit], walked: List[files.FileInfo], output: str) -> Inventory:
    """The units with the size and newest time of the files under each (a file counts in
    the innermost unit that holds it); the total of every file under `output`."""
    index = {u.path: i for i, u in enumerate(units)}
    sizes, newest = [0] * len(units), [None] * len(units)
    for found in walked:
        i = _owner(found.path, index, output)
        if i is not None:
            sizes[i] += found.size
            seconds = found.mtime_ns / 1e9
            newest[i] = seconds if newest[i] is None else max(newest[i], seconds)
    sized = [dataclasses.replace(u, size=sizes[i], newest=newest[i] or _own_time(u.path))
             for i, u in enumerate(units)]
    return Inventory(sized, sum(f.size for f in walked))


def _owner(path: str, index: Dict[str, int], output: str) -> Optional[int]:
    parent, top = os.path.dirname(path), output.rstrip("/")
    while len(parent) > len(top):
        if parent in index:
            return index[parent]
        parent, before = os.path.dirname(parent), parent
        if parent == before:
            return None
    return None


def _own_time(path: str) -> Optional[float]:
    """A local folder's own time, for one that holds no file (just made, perhaps, by a
    writer about to fill it); an object store has no empty folders."""
    if files.is_remote(path) or not files.exists(path):
        return None
    return files.stat(path).mtime_ns / 1e9


def take_inventory(output: str, serving_dir: str, tflite_dir: str, root: str,
                   store: str, pipeline_name: str, records: Optional[Records]) -> Inventory:
    """Every unit of the output, sized. `records`: the local ML Metadata store's, or None
    where there is none (a bucket another machine runs on, a compiled pipeline's root):
    then no local artifact folder is listed, since none could be told from another."""
    walked = files.walk_files(output)
    groups = run_groups(root, pipeline_name)
    units = (version_units(serving_dir, VERSION, COMMIT_FILE)
             + version_units(tflite_dir, TFLITE, TFLITE_COMMIT_FILE)
             + span_units(store) + run_units(groups))
    if records is not None:
        units += artifact_units(root, (f.path for f in walked), records, [store, *groups])
    return with_sizes(units, walked, output)
