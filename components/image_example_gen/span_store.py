"""The span store: each span ingested once, kept under the pipeline root, reused by later runs.

Why a store, and not ML Metadata: the executor must find earlier spans on
every orchestrator, and a Kubeflow step's container cannot query the
pipeline's ML Metadata. An entry is a folder named by the span and a digest
of everything its examples depend on: the span's files (path, size, mtime),
the reading options and the label id of each of its classes. A `_COMPLETE`
marker is written last; an entry without it is a killed ingestion's, and is
ingested again. So a re-run never re-encodes a span it has, and never reuses
one whose files changed.

Class ids across spans: the store keeps every class name it has seen, in id
order (CLASSES_FILE), and only ever appends to it. A class keeps its id for
good, whichever spans the window holds, so a model blessed on an earlier
window is scored on the same ids, and entries stay valid when a class
arrives or the window slides.
"""
import dataclasses
import hashlib
import json
import os
from typing import Dict, List, Optional

from components.common.contract import INGEST_REPORT_FILE, LABELS_FILE, SPLITS
from components.image_example_gen.data_health.groups_csv import groups_digest
from components.image_example_gen.encoding.encode import PIXEL_BASIS
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import Listing
from components.image_example_gen.spans import Span
from components.common.storage import files

COMPLETE_FILE = "_COMPLETE"
CLASSES_FILE = "classes.json"  # every class name seen, in id order; append-only


def known_classes(store: str) -> List[str]:
    path = os.path.join(store, CLASSES_FILE)
    return json.loads(files.read_text(path)) if files.exists(path) else []


def lasting_classes(store: str, window: Optional[List[str]]) -> Optional[List[str]]:
    """The store's classes, then the window's new ones: ids that never change."""
    if window is None:
        return None
    known = known_classes(store)
    return known + [name for name in window if name not in known]


def record_classes(store: str, classes: Optional[List[str]]) -> None:
    """Remembers `classes` (lasting_classes' answer) once its spans are ingested."""
    if classes is not None and classes != known_classes(store):
        files.write_text(os.path.join(store, CLASSES_FILE), json.dumps(classes))


def class_union(listings: List[Listing]) -> Optional[List[str]]:
    """Class names in id order: the oldest span's, then each new one as it first appears.

    None when any span's classes are known only after reading (TFRecords).
    """
    if any(listing.classes is None for listing in listings):
        return None
    union: List[str] = []
    for listing in listings:
        union.extend(name for name in listing.classes if name not in union)
    return union


def relabel(listing: Listing, classes: Optional[List[str]]) -> Listing:
    """`listing` with label ids into `classes`; arrays' ids are their own (must agree)."""
    if classes is None or listing.classes == classes[:len(listing.classes)]:
        return dataclasses.replace(listing, classes=classes) if classes else listing
    if listing.format != "folder":
        raise ValueError(f"{listing.format} spans must number their classes alike: "
                         f"{listing.classes} against {classes}")
    ids = [classes.index(name) for name in listing.classes]
    return dataclasses.replace(listing, classes=classes, files=[
        dataclasses.replace(unit, label=ids[unit.label]) for unit in listing.files])


def entry_key(span: Span, fingerprint: str, options: IngestOptions,
              classes: Optional[List[str]], own_classes: Optional[List[str]]) -> str:
    """A digest of what a span's examples depend on (see the module docstring), with
    --dedupe and the --groups file's content (both change the examples) and the
    pixel basis of the statistics and hashes (encode.PIXEL_BASIS)."""
    reading = {k: v for k, v in dataclasses.asdict(options).items()
               if k in ("format", "strict", "max_pixels", "image_key", "label_key",
                        "eval_percent")}
    if options.dedupe or options.groups:  # absent otherwise: earlier entries stay valid
        reading.update(dedupe=options.dedupe, groups=groups_digest(options.groups))
    ids = None if classes is None else [[n, classes.index(n)] for n in own_classes or []]
    text = json.dumps([span.root, fingerprint, reading, ids, PIXEL_BASIS], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_dir(store: str, span: Span, key: str) -> str:
    version = "" if span.version is None else f"-v{span.version}"
    return os.path.join(store, f"span-{span.number}{version}-{key}")


def is_complete(entry: str) -> bool:
    return files.exists(os.path.join(entry, COMPLETE_FILE))


def mark_complete(entry: str, span: Span) -> None:
    """The last write of an entry: from now on it is reused."""
    files.write_text(os.path.join(entry, COMPLETE_FILE),
                     json.dumps({"span": span.number, "version": span.version,
                                 "root": span.root}))


def latest_entry(store: str, number: int) -> Optional[str]:
    """The most recently completed entry of span `number`, whatever its key, or None.

    For the drift check, which needs the previous span's statistics only.
    """
    if not files.isdir(store):
        return None
    names = [n for n in files.list_dir(store)[0] if n.startswith(f"span-{number}-")]
    done = [os.path.join(store, n) for n in names if is_complete(os.path.join(store, n))]
    return max(done, key=_completed_at) if done else None


def _completed_at(entry: str) -> int:
    """When the entry's marker was written (ns), to pick the newest of several."""
    marker = [f for f in files.walk_files(entry) if f.path.endswith(COMPLETE_FILE)]
    return marker[0].mtime_ns if marker else 0


def link_splits(entries: Dict[Span, str], newest: Span, split_dirs: Dict[str, str]) -> None:
    """Train files of every entry, eval files of the newest, into the artifact's splits.

    Hard links where the store and the artifact share a local file system
    (no copy, no space), else copies. Names are prefixed with the span so
    that files of different spans never collide.
    """
    for span, entry in entries.items():
        for split in SPLITS:
            if split != SPLITS[0] and span != newest:
                continue
            source = os.path.join(entry, f"Split-{split}")
            files.makedirs(split_dirs[split])
            for name in sorted(files.list_dir(source)[1]):
                _link(os.path.join(source, name),
                      os.path.join(split_dirs[split], f"span-{span.number}-{name}"))


def _link(source: str, target: str) -> None:
    if not files.is_remote(source) and not files.is_remote(target):
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or links not allowed: copy
            pass
    files.copy(source, target)


def combined_report(reports: Dict[Span, dict], newest: Span, classes: List[str],
                    reused: Dict[Span, bool]) -> dict:
    """The artifact's ingest report: train counts of every span, eval of the newest.

    Shapes, skipped files and the other descriptive entries are the newest
    span's: what the report describes is the data the model is judged on.
    """
    base = dict(reports[newest])
    per_class = {split: {c: 0 for c in classes} for split in SPLITS}
    for span, report in reports.items():
        for split in SPLITS:
            if split != SPLITS[0] and span != newest:
                continue
            for name, count in report["per_class"][split].items():
                per_class[split][name] = per_class[split].get(name, 0) + count
    base.update(classes=classes, per_class=per_class,
                splits={split: sum(per_class[split].values()) for split in SPLITS})
    base["spans"] = [{"span": s.number, "version": s.version, "root": s.root,
                      "reused": reused[s], "splits": r["splits"]}
                     for s, r in reports.items()]
    return base


def write_artifact_files(examples_uri: str, report: dict) -> None:
    """The artifact's ingest report and labels.txt, from the combined report."""
    files.write_text(os.path.join(examples_uri, INGEST_REPORT_FILE),
                     json.dumps(report, indent=2, ensure_ascii=False))
    files.write_text(os.path.join(examples_uri, LABELS_FILE),
                     "".join(name + "\n" for name in report["classes"]))
