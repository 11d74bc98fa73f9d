"""The span store: entry keys, and publishing attempts on real files, racing threads included."""
import json
import threading

from core.storage import files
from components.image_example_gen import span_store
from components.image_example_gen.spans import Span
from settings.config import PipelineConfig

SPAN = Span(1, None, "/data/span-1")


def _key():
    options = PipelineConfig.from_values(data="/data").ingest_options()
    return span_store.entry_key(SPAN, "files-digest", options, ["a", "b"], ["a", "b"])


def test_a_new_pixel_basis_ingests_the_span_again(monkeypatch):
    # Statistics and hashes from another decode would be compared with these (drift, leakage).
    before = _key()
    assert _key() == before
    monkeypatch.setattr(span_store, "PIXEL_BASIS", "full-decode")
    assert _key() != before


def _attempt(entry, rows: int) -> str:
    """An attempt folder holding a finished ingestion's files."""
    attempt = span_store.new_attempt(str(entry))
    files.write_text(f"{attempt}/Split-train/data.gz", "x" * rows)
    files.write_text(f"{attempt}/ingest_report.json", json.dumps({"rows": rows}))
    return attempt


def test_of_attempts_published_at_once_exactly_one_wins_and_the_others_use_it(tmp_path):
    entry = tmp_path / "span-1-key"
    attempts = [_attempt(entry, rows) for rows in range(8)]
    start, results = threading.Barrier(len(attempts)), [None] * len(attempts)

    def publish(index):
        start.wait()
        results[index] = span_store.publish(str(entry), attempts[index], SPAN)
    threads = [threading.Thread(target=publish, args=(i,)) for i in range(len(attempts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [attempt for attempt, (_, won) in zip(attempts, results) if won]
    assert len(winners) == 1 and {folder for folder, _ in results} == set(winners)
    assert span_store.published(str(entry)) == winners[0]
    # The losers' folders are gone; no temporary marker is left behind.
    assert sorted(p.name for p in entry.iterdir()) == sorted(
        ["_COMPLETE", winners[0].rsplit("/", 1)[1]])


def test_a_killed_attempt_is_never_read(tmp_path):
    entry = tmp_path / "span-1-key"
    _attempt(entry, 3)  # files written, never published: the run was killed
    assert span_store.published(str(entry)) is None
    assert span_store.latest_entry(str(tmp_path), 1) is None
    second = _attempt(entry, 4)
    assert span_store.publish(str(entry), second, SPAN) == (second, True)
    assert span_store.latest_entry(str(tmp_path), 1) == second


def test_an_entry_of_the_layout_before_attempts_is_not_used(tmp_path):
    old = tmp_path / "span-1-oldkey"
    files.write_text(str(old / "Split-train" / "data.gz"), "x")
    files.write_text(str(old / "_COMPLETE"), json.dumps({"span": 1, "version": None}))
    assert span_store.published(str(old)) is None
    assert span_store.latest_entry(str(tmp_path), 1) is None


def test_the_latest_entry_is_the_last_published(tmp_path):
    first, second = tmp_path / "span-1-a", tmp_path / "span-1-b"
    span_store.publish(str(first), _attempt(first, 1), SPAN)
    data, _ = span_store.publish(str(second), _attempt(second, 2), SPAN)
    assert span_store.latest_entry(str(tmp_path), 1) == data
    assert span_store.latest_entry(str(tmp_path), 12) is None
