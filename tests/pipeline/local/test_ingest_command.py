"""`imagepipe ingest`: TFRecords, labels and report, published atomically."""
import json
import os

import pytest
import tensorflow as tf

from settings.config import PipelineConfig
from core.errors import UsageError
from pipeline.local.ingest_command import run_ingest
from tests.support.cli import imagepipe

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _tree(root, make_image, per_class=5):
    for label in ("cat", "dog"):
        for i in range(per_class):
            make_image(root / label / f"{i}.png", seed=hash((label, i)) % 1000)
    return root


def _count(pattern):
    files = tf.io.gfile.glob(pattern)
    return sum(1 for _ in tf.data.TFRecordDataset(files, compression_type="GZIP"))


def test_ingest_writes_gzipped_splits_labels_and_report(tmp_path, make_image):
    data = _tree(tmp_path / "data", make_image)
    out = tmp_path / "out"
    report = run_ingest(PipelineConfig.from_values(data=str(data), output=str(out),
                                                   eval_percent=30))
    assert _count(str(out / "train" / "*.tfrecord.gz")) == report["splits"]["train"]
    assert _count(str(out / "eval" / "*.tfrecord.gz")) == report["splits"]["eval"]
    assert sum(report["splits"].values()) == 10
    assert (out / "labels.txt").read_text() == "cat\ndog\n"
    assert json.loads((out / "ingest_report.json").read_text())["classes"] == ["cat", "dog"]


def test_reingest_replaces_the_old_output_and_leaves_no_temp_dirs(tmp_path, make_image):
    data = _tree(tmp_path / "data", make_image)
    config = PipelineConfig.from_values(data=str(data), output=str(tmp_path / "out"))
    run_ingest(config)
    (data / "dog" / "0.png").unlink()
    report = run_ingest(config)
    assert sum(report["splits"].values()) == 9
    assert sorted(os.listdir(tmp_path)) == ["data", "out"]


def test_a_foreign_non_empty_output_is_refused(tmp_path, make_image):
    data = _tree(tmp_path / "data", make_image)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "precious.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not an earlier ingest's output"):
        run_ingest(PipelineConfig.from_values(data=str(data), output=str(tmp_path / "out")))
    assert (tmp_path / "out" / "precious.txt").read_text() == "keep me"


def test_failed_strict_ingest_exits_1_and_publishes_nothing(tmp_path, make_image):
    data = _tree(tmp_path / "data", make_image)
    (data / "cat" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    result = imagepipe("ingest", "--data", data, "--output", tmp_path / "out", "--strict",
                       timeout=300)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "pipeline failed in ingest: ValueError: --strict: 1 file(s)" in result.stderr
    assert "cat/bad.png" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["data"]


def test_same_ingestion_runs_on_multiprocessing_workers(tmp_path, make_image):
    data = _tree(tmp_path / "data", make_image, per_class=20)
    args = "--direct_running_mode=multi_processing --direct_num_workers=2"
    report = run_ingest(PipelineConfig.from_values(data=str(data), output=str(tmp_path / "out"),
                                                   beam_args=args))
    assert sum(report["splits"].values()) == 40
    assert _count(str(tmp_path / "out" / "*" / "*.tfrecord.gz")) == 40
