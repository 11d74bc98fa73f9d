"""ImageExampleGen on a {SPAN} pattern, run for real: spans stored once, reused, combined."""
import json
import os

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image
from tfx.proto import example_gen_pb2
from tfx.types import standard_artifacts

from components.common.contract import CLASS_TEXT_KEY, LABEL_KEY
from components.image_example_gen.component import ImageExampleGen
from components.image_example_gen.driver import input_fingerprint
from components.image_example_gen.executor import Executor
from pipeline.config import PipelineConfig

pytestmark = pytest.mark.integration  # real Beam ingestion


def _span(mnist_subset, target, classes, invert=False, take=slice(0, 10)):
    for name in classes:
        (target / name).mkdir(parents=True)
        for png in sorted((mnist_subset / name).iterdir())[take]:
            pixels = np.asarray(Image.open(png))
            Image.fromarray(255 - pixels if invert else pixels).save(target / name / png.name)


def _run(pattern, out, execution, **options):
    component = ImageExampleGen(input_base=pattern, options=PipelineConfig(
        eval_percent=30, output=str(out.parent), **options).ingest_options())
    examples = standard_artifacts.Examples()
    examples.uri = str(out / "ImageExampleGen" / "examples" / str(execution))
    props = dict(component.exec_properties)
    props["output_file_format"] = example_gen_pb2.FORMAT_TFRECORDS_GZIP
    Executor().Do({}, {"examples": [examples]}, props)
    with open(os.path.join(examples.uri, "ingest_report.json")) as f:
        return examples, json.load(f)


def _examples(uri, split):
    files = tf.io.gfile.glob(os.path.join(uri, f"Split-{split}", "*"))
    return [tf.train.Example.FromString(r.numpy())
            for r in tf.data.TFRecordDataset(files, compression_type="GZIP")]


def test_a_new_span_is_ingested_alone_and_joins_the_window(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    _span(mnist_subset, spans / "s1", ["0", "1"])
    pattern = str(spans / "s{SPAN}")
    first, report1 = _run(pattern, out, 1)
    assert [s["reused"] for s in report1["spans"]] == [False]
    assert first.get_int_custom_property("span") == 1 and first.span == 1
    assert report1["drift"]["verdict"] == "not compared"

    _span(mnist_subset, spans / "s2", ["0", "1", "2"], take=slice(0, 10))
    second, report2 = _run(pattern, out, 2)
    assert [(s["span"], s["reused"]) for s in report2["spans"]] == [(1, True), (2, False)]
    assert second.get_string_custom_property("spans") == "1,2" and second.span == 2
    # Class ids: the oldest span's first, the new class appended.
    assert report2["classes"] == ["0", "1", "2"]
    assert open(os.path.join(second.uri, "labels.txt")).read().split() == ["0", "1", "2"]
    train, evaluation = _examples(second.uri, "train"), _examples(second.uri, "eval")
    assert len(train) == report1["splits"]["train"] + report2["spans"][1]["splits"]["train"]
    assert len(evaluation) == report2["spans"][1]["splits"]["eval"]  # the newest span's only
    for example in train + evaluation:
        feature = example.features.feature
        assert report2["classes"][feature[LABEL_KEY].int64_list.value[0]] == \
            feature[CLASS_TEXT_KEY].bytes_list.value[0].decode()
    assert report2["drift"]["previous_span"] == 1
    assert "brightness" not in report2["drift"]["drifted"]
    health = report2["data_health"]  # the window's: class counts of what it trains and evaluates
    per_class = report2["per_class"]
    assert health["class_counts"] == {c: sum(per_class[s][c] for s in per_class)
                                      for c in report2["classes"]}
    assert health["images"] == 20 + 30 and health["leakage"]["count"] == 0


def test_an_inverted_span_drifts_on_brightness(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    _span(mnist_subset, spans / "s1", ["0", "1"])
    _span(mnist_subset, spans / "s2", ["0", "1"], invert=True)
    _, report = _run(str(spans / "s{SPAN}"), out, 1, train_spans=1)
    assert [s["span"] for s in report["spans"]] == [2]
    # Span 1 is outside the window and was never ingested: nothing to compare with.
    assert report["drift"]["verdict"] == "not compared"
    _, report = _run(str(spans / "s{SPAN}"), out, 2)
    assert report["drift"]["verdict"] == "drift"
    assert "brightness" in report["drift"]["drifted"]


def test_the_fingerprint_changes_with_a_new_span_and_only_then(tmp_path, mnist_subset):
    spans = tmp_path / "spans"
    _span(mnist_subset, spans / "s1", ["0", "1"])
    pattern = str(spans / "s{SPAN}")
    before = input_fingerprint(pattern, 0)
    assert input_fingerprint(pattern, 0) == before and before[1:] == (1, None)
    _span(mnist_subset, spans / "s2", ["0", "1"])
    after = input_fingerprint(pattern, 0)
    assert after[0] != before[0] and after[1] == 2
    assert input_fingerprint(pattern, 1)[0] != after[0]


def test_class_ids_last_when_the_window_slides(tmp_path, mnist_subset):
    spans, out = tmp_path / "spans", tmp_path / "tfx"
    _span(mnist_subset, spans / "s1", ["1", "2"])
    _span(mnist_subset, spans / "s2", ["0", "1", "2"])
    _, first = _run(str(spans / "s{SPAN}"), out, 1, train_spans=2)
    assert first["classes"] == ["1", "2", "0"]  # span 1's, then the new one
    _span(mnist_subset, spans / "s3", ["0", "1", "2"])
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
