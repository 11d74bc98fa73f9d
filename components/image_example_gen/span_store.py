"""The span store: each span ingested once, kept under the pipeline root, reused by later runs.

Why a store, and not ML Metadata: the executor must find earlier spans on
every orchestrator, and a Kubeflow step's container cannot query the
pipeline's ML Metadata. An entry is a folder named by the span and a digest
of everything its examples depend on: the span's files (path, size, mtime),
the reading options and the label id of each of its classes. So a re-run
never re-encodes a span it has, and never reuses one whose files changed.

Several runs may ingest one span at once (an overlapping recurring run, two
machines on one bucket). Each ingestion attempt writes into a folder of its
own, `<entry>/attempt-<id>/`, and only then publishes it: it creates the
entry's `_COMPLETE` marker, naming the attempt, with a create that fails if
the marker exists (files.create_exclusive). Exactly one attempt wins; a loser
deletes its own folder and uses the winner's. Readers go through the marker
only, so a killed or losing attempt is never read, and no attempt's files
are ever rewritten under a reader.

Class ids across spans: the store keeps every class name it has seen, in id
order (CLASSES_FILE), and only ever appends to it, before encoding and
conditionally (reserve_classes). A class keeps its id for good, whichever
spans the window holds, so a model blessed on an earlier window is scored on
the same ids, and entries stay valid when a class arrives or the window
slides.
"""
import dataclasses
import hashlib
import json
import logging
import os
import uuid
from typing import Dict, List, Optional, Tuple

from core.contract import INGEST_REPORT_FILE, LABELS_FILE, SPLITS
from components.image_example_gen.data_health.groups_csv import groups_digest
from components.image_example_gen.encoding.encode import PIXEL_BASIS
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.folder_tree import ImageFile, Listing
from components.image_example_gen.spans import Span
from core.storage import files, shared_json

COMPLETE_FILE = "_COMPLETE"  # created once, exclusively: {"attempt": <the winner's folder>}
ATTEMPT_PREFIX = "attempt-"
# In every entry key: entries written before attempts existed (data beside the
# marker, not in an attempt) get other names, and are ingested again once.
LAYOUT = "attempts"
CLASSES_FILE = "classes.json"  # every class name seen, in id order; append-only


def known_classes(store: str) -> List[str]:
    return shared_json.read_json(os.path.join(store, CLASSES_FILE), [])


def reserve_classes(store: str, window: Optional[List[str]]) -> Optional[List[str]]:
    """The store's classes, then the window's new ones appended: ids that never change.

    Written before any example is encoded, conditionally (core/storage/shared_json.py): of two
    runs that bring different new classes at once, the second re-reads the first's ids
    and appends after them. So the record holds every id an example was encoded with,
    and the returned list, which may also hold classes other runs added, is the one
    this run encodes with.
    """
    if window is None:
        return None

    def append(known: List[str]) -> List[str]:
        return list(known) + [name for name in window if name not in known]
    return shared_json.update_json(os.path.join(store, CLASSES_FILE), append, [])


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
    if listing.files and not isinstance(listing.files[0], ImageFile):  # arrays' own ids
        raise ValueError(f"{listing.format} spans must number their classes alike: "
                         f"{listing.classes} against {classes}")
    ids = [classes.index(name) for name in listing.classes]
    return dataclasses.replace(listing, classes=classes, files=[
        dataclasses.replace(unit, label=ids[unit.label]) for unit in listing.files])


def entry_key(span: Span, fingerprint: str, options: IngestOptions,
              classes: Optional[List[str]], own_classes: Optional[List[str]]) -> str:
    """A digest of what a span's examples depend on (see the module docstring), with
    --dedupe, the --groups file's content and a manifest's --allowed-root and columns
    (each changes the examples; only when set) and the pixel basis of the statistics
    and hashes (encode.PIXEL_BASIS)."""
    reading = {k: v for k, v in dataclasses.asdict(options).items()
               if k in ("format", "strict", "max_pixels", "image_key", "label_key",
                        "eval_percent")}
    if options.dedupe or options.groups:  # absent otherwise: earlier entries stay valid
        reading.update(dedupe=options.dedupe, groups=groups_digest(options.groups))
    manifest = ("allowed_root", "image_folder", "path_column", "label_column", "split_column")
    reading.update({k: getattr(options, k) for k in manifest if getattr(options, k)})
    ids = None if classes is None else [[n, classes.index(n)] for n in own_classes or []]
    text = json.dumps([span.root, fingerprint, reading, ids, PIXEL_BASIS, LAYOUT],
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_dir(store: str, span: Span, key: str) -> str:
    version = "" if span.version is None else f"-v{span.version}"
    return os.path.join(store, f"span-{span.number}{version}-{key}")


def published(entry: str) -> Optional[str]:
    """The folder of the entry's winning attempt, or None while no attempt has published."""
    marker = os.path.join(entry, COMPLETE_FILE)
    if not files.exists(marker):
        return None
    attempt = json.loads(files.read_text(marker)).get("attempt")
    return os.path.join(entry, attempt) if attempt else None


def new_attempt(entry: str) -> str:
    """A folder of the entry's that no other attempt writes to."""
    return os.path.join(entry, f"{ATTEMPT_PREFIX}{uuid.uuid4().hex[:16]}")


def publish(entry: str, attempt: str, span: Span) -> Tuple[str, bool]:
    """Makes `attempt` the entry's data unless another attempt was published first.

    Returns (the winner's folder, whether it is `attempt`). A losing attempt
    is deleted: the winner's examples are the same, from the same files.
    """
    record = {"attempt": os.path.basename(attempt), "span": span.number,
              "version": span.version, "root": span.root}
    files.create_exclusive(os.path.join(entry, COMPLETE_FILE), json.dumps(record).encode())
    # The marker's content decides, not create_exclusive's answer: a retried create
    # whose first try landed answers "exists" although it is this attempt's.
    winner = published(entry)
    if winner is None:
        raise OSError(f"{entry}: {COMPLETE_FILE} names no attempt")
    if os.path.basename(winner) != record["attempt"]:
        logging.info("%s: another run published %s first; using it", span.name, winner)
        files.rmtree(attempt)
        return winner, False
    return attempt, True


def latest_entry(store: str, number: int) -> Optional[str]:
    """The data folder of the most recently published entry of span `number`, whatever its
    key, or None.

    For the drift check, which needs the previous span's statistics only.
    """
    if not files.isdir(store):
        return None
    names = [n for n in files.list_dir(store)[0] if n.startswith(f"span-{number}-")]
    done = [(os.path.join(store, n, COMPLETE_FILE), published(os.path.join(store, n)))
            for n in names]
    done = [(files.stat(marker).mtime_ns, data) for marker, data in done if data]
    return max(done)[1] if done else None


def link_splits(folders: Dict[Span, str], newest: Span, split_dirs: Dict[str, str]) -> None:
    """Train files of every span, eval files of the newest, into the artifact's splits;
    `folders` are the spans' data folders (`published`).

    Hard links where the store and the artifact share a local file system
    (no copy, no space), else copies. Names are prefixed with the span so
    that files of different spans never collide.
    """
    for span, folder in folders.items():
        for split in SPLITS:
            if split != SPLITS[0] and span != newest:
                continue
            source = os.path.join(folder, f"Split-{split}")
            files.makedirs(split_dirs[split])
            for name in sorted(files.list_dir(source)[1]):
                _link(os.path.join(source, name),
                      os.path.join(split_dirs[split], f"span-{span.number}-{name}"))


def link_whole_span(folder: str, split_dir: str) -> None:
    """Every train and eval file of one span's data folder into `split_dir`, linked (or
    copied) as link_splits does; names prefixed with their split so they never collide."""
    files.makedirs(split_dir)
    for split in SPLITS:
        source = os.path.join(folder, f"Split-{split}")
        for name in sorted(files.list_dir(source)[1]):
            _link(os.path.join(source, name), os.path.join(split_dir, f"{split}-{name}"))


def _link(source: str, target: str) -> None:
    if not files.is_remote(source) and not files.is_remote(target):
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or links not allowed: copy
            pass
    files.copy(source, target)


def combined_report(reports: Dict[Span, dict], newest: Span, classes: List[str],
                    reused: Dict[Span, bool], folders: Dict[Span, str]) -> dict:
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
                      "reused": reused[s], "entry": folders[s], "splits": r["splits"]}
                     for s, r in reports.items()]
    return base


def write_artifact_files(examples_uri: str, report: dict) -> None:
    """The artifact's ingest report and labels.txt, from the combined report."""
    files.write_text(os.path.join(examples_uri, INGEST_REPORT_FILE),
                     json.dumps(report, indent=2, ensure_ascii=False))
    files.write_text(os.path.join(examples_uri, LABELS_FILE),
                     "".join(name + "\n" for name in report["classes"]))
