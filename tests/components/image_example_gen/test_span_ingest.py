"""ImageExampleGen on a {SPAN} pattern, run for real: spans stored once, reused, combined."""
import json
import os
import time

import pytest

from core.contract import BRIGHTNESS_KEY, CLASS_TEXT_KEY, LABEL_KEY
from components.image_example_gen.driver import ImageExampleGenDriver, input_fingerprint
from components.image_example_gen.span_window import SUCCESS_FILE
from components.image_example_gen.spans import SpanPatternError
from tests.support.digits import make_span
from tests.support.examples import example_gen_properties, read_split, run_example_gen

pytestmark = pytest.mark.integration  # real Beam ingestion


def _properties(pattern, out, **options):
    return example_gen_properties(pattern, data=pattern, eval_percent=30,
                                  output=str(out.parent), **options)


def _run(pattern, out, execution, props=None, **options):
    """The executor, as on Kubeflow (no driver), unless `props` come from the driver."""
    examples = run_example_gen(out / "ImageExampleGen" / "examples" / str(execution),
                               props or _properties(pattern, out, **options))
    with open(os.path.join(examples.uri, "ingest_report.json")) as f:
        return examples, json.load(f)


def test_a_new_span_is_ingested_alone_and_joins_the_window(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    make_span(spans / "s1", source=mnist_subset, classes=["0", "1"])
    pattern = str(spans / "s{SPAN}")
    first, report1 = _run(pattern, out, 1)
    assert [s["reused"] for s in report1["spans"]] == [False]
    assert first.get_int_custom_property("span") == 1 and first.span == 1
    assert report1["drift"] == {"span": 1, "previous_span": None, "compared": False,
                                "reason": "no earlier span"}
    assert first.split_names == '["train", "eval"]'

    make_span(spans / "s2", source=mnist_subset, classes=["0", "1", "2"], take=slice(0, 10))
    second, report2 = _run(pattern, out, 2)
    assert [(s["span"], s["reused"]) for s in report2["spans"]] == [(1, True), (2, False)]
    assert second.get_string_custom_property("spans") == "1,2" and second.span == 2
    # Class ids: the oldest span's first, the new class appended.
    assert report2["classes"] == ["0", "1", "2"]
    assert open(os.path.join(second.uri, "labels.txt")).read().split() == ["0", "1", "2"]
    train, evaluation = read_split(second.uri, "train"), read_split(second.uri, "eval")
    assert len(train) == report1["splits"]["train"] + report2["spans"][1]["splits"]["train"]
    assert len(evaluation) == report2["spans"][1]["splits"]["eval"]  # the newest span's only
    for example in train + evaluation:
        feature = example.features.feature
        assert report2["classes"][feature[LABEL_KEY].int64_list.value[0]] == \
            feature[CLASS_TEXT_KEY].bytes_list.value[0].decode()
    # ImageExampleGen measures only: both spans whole, as two splits, for the drift check.
    assert report2["drift"] == {"span": 2, "previous_span": 1, "compared": True, "reason": None}
    assert second.split_names == '["train", "eval", "newest_span", "previous_span"]'
    assert len(read_split(second.uri, "newest_span")) == 30
    assert len(read_split(second.uri, "previous_span")) == 20
    assert all(e.features.feature[BRIGHTNESS_KEY].float_list.value
               for e in read_split(second.uri, "newest_span"))
    health = report2["data_health"]  # the window's: class counts of what it trains and evaluates
    per_class = report2["per_class"]
    assert health["class_counts"] == {c: sum(per_class[s][c] for s in per_class)
                                      for c in report2["classes"]}
    assert health["images"] == 20 + 30 and health["leakage"]["count"] == 0


def test_a_span_outside_every_window_so_far_cannot_be_compared(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    make_span(spans / "s1", source=mnist_subset, classes=["0", "1"])
    make_span(spans / "s2", source=mnist_subset, classes=["0", "1"], invert=True)
    examples, report = _run(str(spans / "s{SPAN}"), out, 1, train_spans=1)
    assert [s["span"] for s in report["spans"]] == [2]
    # Span 1 is outside the window and was never ingested: nothing to compare with.
    assert report["drift"]["compared"] is False and "never ingested" in report["drift"]["reason"]
    assert examples.split_names == '["train", "eval"]'
    _, report = _run(str(spans / "s{SPAN}"), out, 2)  # the whole window: span 1 is ingested
    assert report["drift"]["compared"] is True and report["drift"]["previous_span"] == 1


def test_the_fingerprint_changes_with_a_new_span_and_only_then(tmp_path, mnist_subset):
    spans = tmp_path / "spans"
    make_span(spans / "s1", source=mnist_subset, classes=["0", "1"])
    pattern, out = str(spans / "s{SPAN}"), tmp_path / "tfx"
    before = input_fingerprint(_properties(pattern, out))
    assert input_fingerprint(_properties(pattern, out))[:3] == before[:3]
    assert before[1:3] == (1, None)
    make_span(spans / "s2", source=mnist_subset, classes=["0", "1"])
    after = input_fingerprint(_properties(pattern, out))
    assert after[0] != before[0] and after[1] == 2
    assert input_fingerprint(_properties(pattern, out, train_spans=1))[0] != after[0]


def test_a_span_still_uploading_waits_and_joins_once_marked_or_quiet(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    pattern = str(spans / "s{SPAN}")
    make_span(spans / "s1", source=mnist_subset, classes=["0", "1"])
    make_span(spans / "s2", source=mnist_subset, classes=["0", "1"], take=slice(0, 5), ready=False)
    first, report = _run(pattern, out, 1)
    assert [s["span"] for s in report["spans"]] == [1] and first.span == 1
    [left] = report["left_out"]
    assert left["span"] == 2 and "_SUCCESS" in left["reason"]
    # The upload goes on, then ends with the marker: the next run takes span 2.
    make_span(spans / "s2", source=mnist_subset, classes=["2"], ready=True)
    _, report = _run(pattern, out, 2)
    assert [(s["span"], s["reused"]) for s in report["spans"]] == [(1, True), (2, False)]
    assert report["left_out"] == [] and "2" in report["classes"]
    # Span 3's uploader writes no marker: it is taken once quiet for --span-quiet.
    make_span(spans / "s3", source=mnist_subset, classes=["0", "1"], ready=False)
    assert _run(pattern, out, 3)[1]["left_out"][0]["span"] == 3
    an_hour_ago = time.time() - 3600
    for png in (spans / "s3").rglob("*.png"):
        os.utime(png, (an_hour_ago, an_hour_ago))
    _, report = _run(pattern, out, 4)
    assert [(s["span"], s["reused"]) for s in report["spans"]][-1] == (3, False)


def test_the_executor_ingests_the_window_the_driver_listed(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    pattern = str(spans / "s{SPAN}")
    make_span(spans / "s1", source=mnist_subset, classes=["0", "1"])
    make_span(spans / "s2", source=mnist_subset, classes=["0", "1"], ready=False)
    driver = ImageExampleGenDriver(metadata_handle=None)
    props = driver.resolve_exec_properties(_properties(pattern, out), None, None)
    (spans / "s2" / SUCCESS_FILE).write_bytes(b"")  # ready now, after the driver listed
    examples, report = _run(pattern, out, 1, props=props)
    assert [s["span"] for s in report["spans"]] == [1]
    # The driver printed span 2 as left out, and kept it out of the cache key.
    assert report["left_out"] == [] and "left_out\": []" in props["span_window"]
    assert examples.get_string_custom_property("spans") == "1"


def test_span_names_the_window_end_and_a_missing_one_fails(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    pattern = str(spans / "s{SPAN}")
    for number in (1, 2, 3):
        make_span(spans / f"s{number}", source=mnist_subset, classes=["0", "1"], take=slice(0, 4))
    examples, report = _run(pattern, out, 1, span=2)
    assert [s["span"] for s in report["spans"]] == [1, 2] and examples.span == 2
    with pytest.raises(SpanPatternError, match="--span 4: .* has no span 4"):
        _run(pattern, out, 2, span=4)


def test_class_ids_last_when_the_window_slides(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    make_span(spans / "s1", source=mnist_subset, classes=["1", "2"])
    make_span(spans / "s2", source=mnist_subset, classes=["0", "1", "2"])
    _, first = _run(str(spans / "s{SPAN}"), out, 1, train_spans=2)
    assert first["classes"] == ["1", "2", "0"]  # span 1's, then the new one
    make_span(spans / "s3", source=mnist_subset, classes=["0", "1", "2"])
    _, slid = _run(str(spans / "s{SPAN}"), out, 2, train_spans=2)
    # Without span 1 the window alone would number them 0, 1, 2.
    assert slid["classes"] == ["1", "2", "0"]
    assert [(s["span"], s["reused"]) for s in slid["spans"]] == [(2, True), (3, False)]


def test_tfrecord_spans_must_number_their_classes_alike():
    from components.image_example_gen.span_ingest import _ids
    from components.image_example_gen.spans import Span
    agree = {Span(1, None, "a"): {"classes": ["cat"]},
             Span(2, None, "b"): {"classes": ["cat", "dog"]}}
    assert _ids(agree) == ["cat", "dog"]
    clash = {Span(1, None, "a"): {"classes": ["cat", "dog"]},
             Span(2, None, "b"): {"classes": ["dog", "cat"]}}
    with pytest.raises(ValueError, match="same label ids"):
        _ids(clash)


def _manifest_span(folder, number, images):
    """labels-<number>.csv in `folder`: Vertex AI rows for `images` (paths under folder),
    every fourth for validation."""
    rows = [f"{'validation' if i % 4 == 0 else 'training'},{path},{path.split('/')[0]}"
            for i, path in enumerate(images)]
    (folder / f"labels-{number}.csv").write_text("\n".join(rows) + "\n")


def test_manifest_files_are_spans_and_keep_their_splits(tmp_path, mnist_subset):
    """`labels-{SPAN}.csv` beside the images: each manifest file is a span, its rows'
    ML_USE its splits; a local file is ready once quiet (no folder for a _SUCCESS)."""
    images = sorted(str(p.relative_to(mnist_subset)) for p in mnist_subset.glob("*/*.png")
                    if p.parent.name in ("0", "1", "2"))
    _manifest_span(mnist_subset, 1, images[:16])
    pattern, out = str(mnist_subset / "labels-{SPAN}.csv"), tmp_path / "tfx"
    first, report1 = _run(pattern, out, 1, span_quiet=0)
    assert report1["format"] == "vertex-csv"
    assert report1["splits"] == {"train": 12, "eval": 4}
    _manifest_span(mnist_subset, 2, images[16:])
    second, report2 = _run(pattern, out, 2, span_quiet=0)
    assert [(s["span"], s["reused"]) for s in report2["spans"]] == [(1, True), (2, False)]
    assert report2["spans"][1]["splits"] == {"train": 10, "eval": 4}
    assert report2["classes"] == ["0", "1", "2"]
    names = {e.features.feature["image/filename"].bytes_list.value[0].decode()
             for e in read_split(second.uri, "train")}
    assert len(names) == 22 and names <= set(images)
