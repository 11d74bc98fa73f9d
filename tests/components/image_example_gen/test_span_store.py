"""span_store.entry_key: an entry is reused only for the same files, options and pixel basis."""
from components.image_example_gen import span_store
from components.image_example_gen.spans import Span
from pipeline.config import PipelineConfig


def _key():
    options = PipelineConfig(data="/data").ingest_options()
    return span_store.entry_key(Span(1, None, "/data/span-1"), "files-digest", options,
                                ["a", "b"], ["a", "b"])


def test_a_new_pixel_basis_ingests_the_span_again(monkeypatch):
    # Statistics and hashes from another decode would be compared with these (drift, leakage).
    before = _key()
    assert _key() == before
    monkeypatch.setattr(span_store, "PIXEL_BASIS", "full-decode")
    assert _key() != before
