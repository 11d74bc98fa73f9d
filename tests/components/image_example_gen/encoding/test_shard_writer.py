"""write_shard: TFRecord framing TensorFlow reads back, one file per split, atomic."""
import os

import pytest
import tensorflow as tf

from components.image_example_gen.encoding.shard_writer import frame, write_shard


def _records(path):
    return [r.numpy() for r in tf.data.TFRecordDataset(str(path), compression_type="GZIP")]


def test_frame_matches_tensorflows_writer(tmp_path):
    records = [b"", b"x", bytes(range(256)) * 300]
    with tf.io.TFRecordWriter(str(tmp_path / "tf.rec")) as writer:
        for record in records:
            writer.write(record)
    assert b"".join(map(frame, records)) == (tmp_path / "tf.rec").read_bytes()


def test_writes_one_gzipped_file_per_split_and_counts_facts(tmp_path):
    dirs = {"train": str(tmp_path / "train"), "eval": str(tmp_path / "eval")}
    fact = ("train", 0, "a", "1x1x1")
    items = [("train", b"r1", fact, None), {"path": "bad.png", "reason": "empty file"},
             ("train", b"r2", fact, None)]
    facts, skipped = write_shard(iter(items), dirs, "data-00000-of-00001.tfrecord.gz")
    assert facts == {fact: 2}
    assert skipped == [{"path": "bad.png", "reason": "empty file"}]
    assert _records(tmp_path / "train" / "data-00000-of-00001.tfrecord.gz") == [b"r1", b"r2"]
    assert not (tmp_path / "eval").exists()  # no example, no file
    assert os.listdir(tmp_path / "train") == ["data-00000-of-00001.tfrecord.gz"]


def test_a_failure_mid_shard_leaves_no_file_at_all(tmp_path):
    def items():
        yield "train", b"r1", ("train", 0, "a", "1x1x1"), None
        raise RuntimeError("decoder crashed")

    with pytest.raises(RuntimeError, match="decoder crashed"):
        write_shard(items(), {"train": str(tmp_path / "train")}, "data.gz")
    assert os.listdir(tmp_path / "train") == []


def test_same_examples_give_byte_identical_files(tmp_path):
    item = ("train", b"record", ("train", 0, "a", "1x1x1"), None)
    for run in ("a", "b"):
        write_shard([item], {"train": str(tmp_path / run)}, "d.gz")
    assert (tmp_path / "a" / "d.gz").read_bytes() == (tmp_path / "b" / "d.gz").read_bytes()
