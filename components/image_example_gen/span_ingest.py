"""Ingest a window of spans: the missing ones into the span store, then one Examples artifact.

The artifact holds the train split of every span in the window and the eval
split of the newest span, so that the candidate and the baseline are both
judged on the newest data. Its report says which spans were reused from the
store and which were ingested now, and the drift verdict between the newest
span and the one before it.
"""
import logging
import os
from typing import Callable, Dict, List, Optional

from components.common import drift
from components.image_example_gen import health, span_store, spans
from components.image_example_gen.ingest import IngestImages, finish_ingest
from components.image_example_gen.options import IngestOptions
from components.image_example_gen.readers.formats import list_dataset
from components.image_example_gen.spans import Span
from components.common.contract import DATA_HEALTH_KEY, SPLITS, read_ingest_report
from components.common.storage import files


def _entries(window: List[Span], options: IngestOptions, store: str, fingerprint):
    """(entry folder, relabelled listing) per span, and the window's class list."""
    # Each span holds only some of --groups' paths: rows are not checked per span.
    listings = {span: list_dataset(span.root, options, check_groups=False) for span in window}
    classes = span_store.lasting_classes(
        store, span_store.class_union(list(listings.values())))
    entries = {}
    for span, listing in listings.items():
        key = span_store.entry_key(span, fingerprint(span.root), options, classes,
                                   listing.classes)
        entries[span] = (span_store.entry_dir(store, span, key),
                         span_store.relabel(listing, classes))
    return entries, classes


def _ingest_missing(missing: Dict[Span, tuple], options: IngestOptions,
                    make_pipeline: Callable, processes: int) -> None:
    """One Beam pipeline with a branch per missing span; markers only after all succeed."""
    for span, (entry, _) in missing.items():
        files.rmtree(entry)  # a killed ingestion's leftovers
    with make_pipeline() as pipeline:
        for span, (entry, listing) in missing.items():
            split_dirs = {s: os.path.join(entry, f"Split-{s}") for s in SPLITS}
            _ = pipeline | f"IngestSpan{span.number}" >> IngestImages(
                root=span.root, listing=listing, options=options, split_dirs=split_dirs,
                report_dir=entry, processes=processes)
    for span, (entry, _) in missing.items():
        finish_ingest(entry, options.strict)
        span_store.mark_complete(entry, span)


def _drift(all_spans: List[Span], newest: Span, newest_report: dict, store: str,
           options: IngestOptions) -> dict:
    """The drift verdict against the span before the newest, if the store has it."""
    before = spans.previous(all_spans, newest)
    entry = span_store.latest_entry(store, before.number) if before else None
    if entry is None:
        reason = "no earlier span" if before is None else \
            f"span {before.number} was never ingested (outside every window so far)"
        return {"verdict": "not compared", "reason": reason, "span": newest.number,
                "previous_span": before.number if before else None, "drifted": []}
    thresholds = drift.DriftThresholds(options.drift_label, options.drift_brightness,
                                       options.drift_size, options.drift_grayscale)
    return drift.compare_spans(read_ingest_report(entry), newest_report, thresholds,
                               before.number, newest.number)


def ingest_window(pattern: str, options: IngestOptions, examples_uri: str,
                  split_dirs: Dict[str, str], make_pipeline: Callable,
                  processes: int, fingerprint: Callable[[str], str]) -> dict:
    """Ingests what the window lacks, fills the artifact's splits; returns its report."""
    all_spans = spans.list_spans(pattern)
    window = spans.select(all_spans, options.train_spans)
    newest = window[-1]
    store = options.span_store
    entries, classes = _entries(window, options, store, fingerprint)
    missing = {s: e for s, e in entries.items() if not span_store.is_complete(e[0])}
    logging.info("spans %s: reusing %s, ingesting %s", [s.number for s in window],
                 [s.number for s in window if s not in missing], [s.number for s in missing])
    if missing:
        _ingest_missing(missing, options, make_pipeline, processes)
    folders = {span: entry for span, (entry, _) in entries.items()}
    span_store.record_classes(store, classes)
    span_store.link_splits(folders, newest, split_dirs)
    reports = {span: read_ingest_report(entry) for span, entry in folders.items()}
    report = span_store.combined_report(reports, newest, classes or _ids(reports),
                                        {s: s not in missing for s in window})
    report["drift"] = _drift(all_spans, newest, reports[newest], store, options)
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
