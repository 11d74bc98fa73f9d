"""Hostile and broken inputs: a clear message and the right exit code, never a hang or a traceback.

The CLI runs in-process (`cli.main`), so each case costs its ingestion, not
another TensorFlow import.
"""
import gzip
import json
import os
import re
import struct
import zlib

import numpy as np
import pytest

from tests.support.cli import main_in_process

pytestmark = pytest.mark.slow


def _main(capsys, *argv):
    code = main_in_process(*argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _tree(root, classes=("a", "b"), per_class=3, make_image=None):
    for name in classes:
        for i in range(per_class):
            make_image(root / name / f"{i}.png", seed=i)
    return root


def _report(out):
    return json.loads((out / "ingest_report.json").read_text())


def _ingest(capsys, data, out):
    return _main(capsys, "ingest", "--data", str(data), "--output", str(out))


def test_symlink_loops_are_skipped_with_the_os_reason(tmp_path, capsys, make_image):
    data = _tree(tmp_path / "data", make_image=make_image)
    os.symlink("../a", data / "a" / "sub")  # a folder loop: not followed
    os.symlink("self.png", data / "b" / "self.png")  # a file loop
    code, out, _ = _ingest(capsys, data, tmp_path / "out")
    assert code == 0
    report = _report(tmp_path / "out")
    assert sum(report["splits"].values()) == 6
    assert report["skipped"] == [{"path": "b/self.png", "reason": "[Errno 40] Too many levels "
                                  f"of symbolic links: '{data / 'b' / 'self.png'}'"}]


def test_names_that_are_not_utf8_are_skipped_naming_them(tmp_path, capsys, make_image):
    data = _tree(tmp_path / "data", make_image=make_image)
    png = (data / "a" / "0.png").read_bytes()
    (data / "a").joinpath(os.fsdecode(b"\xff.png")).write_bytes(png)
    os.makedirs(os.fsencode(data) + b"/\xfe")
    (data / os.fsdecode(b"\xfe") / "0.png").write_bytes(png)
    code, out, _ = _ingest(capsys, data, tmp_path / "out")
    assert code == 0
    skipped = _report(tmp_path / "out")["skipped"]
    assert skipped == [
        {"path": "\\xfe/", "reason": "folder name is not valid UTF-8; rename it"},
        {"path": "a/\\xff.png", "reason": "file name is not valid UTF-8; rename it"}]
    assert "2 undecodable image(s) skipped" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_skipped(tmp_path, capsys, make_image):
    data = _tree(tmp_path / "data", make_image=make_image)
    (data / "a" / "0.png").chmod(0)
    code, _, _ = _ingest(capsys, data, tmp_path / "out")
    assert code == 0 and "Permission denied" in _report(tmp_path / "out")["skipped"][0]["reason"]


def _png_claiming(width, height) -> bytes:
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\0" * 4096)) + chunk(b"IEND", b""))


def test_a_decompression_bomb_is_refused_from_its_header(tmp_path, capsys, make_image):
    data = _tree(tmp_path / "data", make_image=make_image)
    (data / "a" / "bomb.png").write_bytes(_png_claiming(200_000, 200_000))  # 40 gigapixels
    code, _, _ = _ingest(capsys, data, tmp_path / "out")
    assert code == 0
    [record] = _report(tmp_path / "out")["skipped"]
    assert record["path"] == "a/bomb.png" and "max-pixels" in record["reason"]


def _idx(path, array, dims=None):
    dims = array.shape if dims is None else dims
    header = bytes([0, 0, 0x08, len(dims)]) + b"".join(int(d).to_bytes(4, "big") for d in dims)
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes()))


@pytest.mark.parametrize("case", ["zero-byte", "mismatched"])
def test_broken_idx_files_exit_2_naming_the_file(tmp_path, capsys, case):
    data = tmp_path / "idx"
    data.mkdir()
    images = data / "train-images-idx3-ubyte"
    labels = data / "train-labels-idx1-ubyte"
    if case == "zero-byte":
        images.write_bytes(b"")
        _idx(labels, np.zeros(4))
    else:
        _idx(images.with_suffix(".gz"), np.zeros((5, 8, 8)))
        _idx(labels.with_suffix(".gz"), np.zeros(4))
    code, _, err = _ingest(capsys, data, tmp_path / "out")
    assert code == 2 and "train-" in err, err


@pytest.mark.parametrize("arrays, words", [
    ({"images": np.zeros((4, 8, 8), np.uint8), "labels": np.zeros(4, np.int64)}, "x_train"),
    ({"x_train": np.zeros((4, 8, 8), np.float64), "y_train": np.zeros(4, np.int64)}, "uint8"),
])
def test_npz_with_wrong_keys_or_dtypes_exits_2(tmp_path, capsys, arrays, words):
    path = tmp_path / "data.npz"
    np.savez(path, **arrays)
    code, _, err = _ingest(capsys, path, tmp_path / "out")
    assert code == 2 and "data.npz" in err and words in err, err


def test_a_tfrecord_truncated_mid_record_keeps_the_whole_records(tmp_path, capsys, make_image):
    import tensorflow as tf
    png = make_image(tmp_path / "x.png").read_bytes()
    path = tmp_path / "records" / "part.tfrecord"
    path.parent.mkdir()
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(40):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
                "image/class/label": tf.train.Feature(
                    int64_list=tf.train.Int64List(value=[i % 2]))})).SerializeToString())
    path.write_bytes(path.read_bytes()[:-40])  # cut inside the last record
    code, _, _ = _ingest(capsys, path.parent, tmp_path / "out")
    report = _report(tmp_path / "out")
    assert code == 0 and sum(report["splits"].values()) == 39
    [record] = report["skipped"]
    assert record["path"] == "part.tfrecord#39+"
    assert re.fullmatch(r"unreadable TFRecord: truncated record at \d+", record["reason"])


@pytest.mark.parametrize("classes, words", [(1, "only one class ('c0')"),
                                            (10_001, "10,001 classes; imagepipe supports up")])
def test_run_refuses_one_class_and_over_10000_classes_before_running(
        tmp_path, capsys, classes, words):
    data = tmp_path / "data"
    png = _png_claiming(2, 2)
    for i in range(classes):
        (data / f"c{i}").mkdir(parents=True)
        (data / f"c{i}" / "0.png").write_bytes(png)
    code, _, err = _main(capsys, "run", "--data", str(data), "--output", str(tmp_path / "out"))
    assert code == 2 and words in err, err
    assert not (tmp_path / "out" / "tfx").exists()


def test_a_dataset_of_only_corrupt_files_fails_naming_the_cause(tmp_path, capsys):
    for label in ("a", "b"):
        (tmp_path / "data" / label).mkdir(parents=True)
        for i in range(3):
            (tmp_path / "data" / label / f"{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    code, _, err = _ingest(capsys, tmp_path / "data", tmp_path / "out")
    assert code == 1 and "6 skipped as undecodable" in err, err


def test_model_names_cannot_escape_the_output(tmp_path, capsys):
    for name in ("../../etc", "/abs", "a/b"):
        code, _, err = _main(capsys, "run", "--model-name", name,
                             "--output", str(tmp_path / "out"))
        assert code == 2 and "--model-name must be letters, digits" in err, err
