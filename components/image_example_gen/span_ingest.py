"""Ingest a window of spans: the missing ones into the span store, then one Examples artifact.

The artifact holds the train split of every span in the window and the eval
split of the newest span, so that the candidate and the baseline are both
judged on the newest data. Its report says which spans were reused from the
store and which were ingested now, which were left out as not ready
(span_window.py), and which span the newest is compared with for drift; with
a previous span, the artifact also holds both spans whole, as two more splits
(see _drift_basis).
"""
import logging
import os
from typing import Callable, Dict, List, Optional, Tuple

from components.image_example_gen import health, span_store
from components.image_example_gen.ingest import IngestImages, finish_ingest
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.spans import Span
from components.image_example_gen.span_window import SpanWindow
from core.contract import (DATA_HEALTH_KEY, DRIFT_KEY, NEWEST_SPAN_SPLIT,
                           PREVIOUS_SPAN_SPLIT, SPLITS, read_ingest_report)
from core.storage import files


def _entries(window: SpanWindow, options: IngestOptions, store: str):
    """(entry folder, relabelled listing) per span, and the window's class list."""
    # Each span holds only some of --groups' paths: rows are not checked per span.
    listings = {listed: list_dataset(listed.span.root, options, check_groups=False)
                for listed in window.spans}
    # Ids are reserved before anything is encoded with them (span_store.reserve_classes).
    classes = span_store.reserve_classes(
        store, span_store.class_union(list(listings.values())))
    entries = {}
    for listed, listing in listings.items():
        # The fingerprint of the files the window listed: what is ingested is what was listed.
        key = span_store.entry_key(listed.span, listed.fingerprint, options, classes,
                                   listing.classes)
        entries[listed.span] = (span_store.entry_dir(store, listed.span, key),
                                span_store.relabel(listing, classes))
    return entries, classes


def _ingest_missing(missing: Dict[Span, tuple], options: IngestOptions,
                    make_pipeline: Callable, processes: int) -> Dict[Span, Tuple[str, bool]]:
    """One Beam pipeline with a branch per missing span, each into an attempt folder of its
    own; then each attempt is published. Returns {span: (its data folder, whether this
    run's attempt won)}: another run may have published the span first."""
    attempts = {span: span_store.new_attempt(entry) for span, (entry, _) in missing.items()}
    try:
        with make_pipeline() as pipeline:
            for span, (entry, listing) in missing.items():
                split_dirs = {s: os.path.join(attempts[span], f"Split-{s}") for s in SPLITS}
                _ = pipeline | f"IngestSpan{span.number}" >> IngestImages(
                    root=span.root, listing=listing, options=options, split_dirs=split_dirs,
                    report_dir=attempts[span], processes=processes)
        for attempt in attempts.values():
            finish_ingest(attempt, options.strict)
    except BaseException:
        for attempt in attempts.values():  # nothing published: leave nothing behind
            files.rmtree(attempt)
        raise
    return {span: span_store.publish(missing[span][0], attempts[span], span)
            for span in missing}


def _drift_basis(window: SpanWindow, folders: Dict[Span, str], store: str,
                 examples_uri: str) -> dict:
    """What the drift check compares, and the two splits it reads: all of the newest span's
    examples (NEWEST_SPAN_SPLIT) and all of the previous span's (PREVIOUS_SPAN_SPLIT).

    ImageExampleGen only measures; ImageDistributionValidator judges, on the statistics
    StatisticsGen computes for these splits. They travel in this artifact because
    open-source KFP runs no resolver that could fetch an earlier run's statistics.
    """
    newest, before = window.newest, window.previous
    previous = (folders.get(before) or span_store.latest_entry(store, before.number)
                if before else None)
    entry = {"span": newest.number, "previous_span": before.number if before else None,
             "compared": previous is not None, "reason": None}
    if previous is None:
        entry["reason"] = "no earlier span" if before is None else \
            f"span {before.number} was never ingested (outside every window so far)"
        return entry
    for split, folder in ((NEWEST_SPAN_SPLIT, folders[newest]), (PREVIOUS_SPAN_SPLIT, previous)):
        span_store.link_whole_span(folder, os.path.join(examples_uri, f"Split-{split}"))
    return entry


def _data_folders(entries: Dict[Span, tuple], options: IngestOptions, make_pipeline: Callable,
                  processes: int) -> Tuple[Dict[Span, str], Dict[Span, bool]]:
    """{span: the data folder of its published entry}, ingesting the missing ones, and
    {span: whether it was reused}: found in the store, or published by another run
    while this one ingested it."""
    found = {span: span_store.published(entry) for span, (entry, _) in entries.items()}
    missing = {span: entries[span] for span, folder in found.items() if folder is None}
    logging.info("spans %s: reusing %s, ingesting %s", [s.number for s in entries],
                 [s.number for s in entries if s not in missing], [s.number for s in missing])
    ingested = _ingest_missing(missing, options, make_pipeline, processes) if missing else {}
    for span in [span for span, (_, won) in ingested.items() if not won]:
        print(f"          {span.name}: another run published it first; its entry is used",
              flush=True)
    folders = {span: ingested[span][0] if span in ingested else found[span] for span in entries}
    return folders, {span: span not in ingested or not ingested[span][1] for span in entries}


def ingest_window(window: SpanWindow, options: IngestOptions, examples_uri: str,
                  split_dirs: Dict[str, str], make_pipeline: Callable, processes: int) -> dict:
    """Ingests what the window lacks, fills the artifact's splits; returns its report."""
    store = options.span_store
    entries, classes = _entries(window, options, store)
    folders, reused = _data_folders(entries, options, make_pipeline, processes)
    newest = window.newest
    span_store.link_splits(folders, newest, split_dirs)
    reports = {span: read_ingest_report(folder) for span, folder in folders.items()}
    report = span_store.combined_report(reports, newest, classes or _ids(reports), reused,
                                        folders)
    report["left_out"] = [{"span": s.span.number, "version": s.span.version,
                           "root": s.span.root, "reason": s.reason} for s in window.left_out]
    report[DRIFT_KEY] = _drift_basis(window, folders, store, examples_uri)
    _add_window_health(report, folders, reports)
    span_store.write_artifact_files(examples_uri, report)
    return report


def _add_window_health(report: dict, folders: Dict[Span, str],
                       reports: Dict[Span, dict]) -> None:
    """The window's data_health (health.window_health), when every span has one."""
    sections = health.health_sections(list(reports.values()))
    if sections is None:
        report.pop(DATA_HEALTH_KEY, None)
        return
    window = list(folders)
    report[DATA_HEALTH_KEY] = health.window_health(
        sections, report["per_class"], [health.read_hashes(folders[s]) for s in window],
        len(window) - 1)


def _ids(reports: Dict[Span, dict]) -> List[str]:
    """TFRecord spans: the longest class list read (ids are the records' own, so every
    span's list must be a beginning of it)."""
    longest = max((r["classes"] for r in reports.values()), key=len)
    for span, report in reports.items():
        if report["classes"] != longest[:len(report["classes"])]:
            raise ValueError(
                f"{span.name} ({span.root}) numbers its classes {report['classes']}, another "
                f"span {longest}: TFRecord spans must use the same label ids")
    return longest


def window_names(report: dict) -> Optional[str]:
    """"1,2,3": the spans of a combined report, for the artifact's `spans` property."""
    numbers = [str(s["span"]) for s in report.get("spans", [])]
    return ",".join(numbers) if numbers else None
