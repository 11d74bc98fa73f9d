"""The ImageExampleGen executor, run for real (in-process Beam) on a tiny messy tree."""
import json

import pytest
import tensorflow as tf

from components.image_example_gen.encoding import encode
from tests.support.examples import ingest_folder, read_split
from tests.support.paths import MNIST_IDX

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def test_ingests_good_images_and_reports_bad_ones(tmp_path, make_image):
    data = tmp_path / "data"
    for i in range(6):
        make_image(data / "cat" / f"{i}.png", mode="L", seed=i)
        make_image(data / "dog" / f"{i}.JPG", fmt="JPEG", seed=10 + i)
    make_image(data / "dog" / "rgba.png", mode="RGBA")
    make_image(data / "dog" / "cmyk.jpg", mode="CMYK", fmt="JPEG")
    make_image(data / "cat" / "palette.gif", mode="P", fmt="GIF")
    (data / "dog" / "empty.jpg").write_bytes(b"")
    (data / "dog" / ".DS_Store").write_bytes(b"\x00\x01")
    (data / "no_images_here").mkdir()
    good = make_image(tmp_path / "big.jpg", size=(64, 64), fmt="JPEG").read_bytes()
    (data / "cat" / "truncated.jpg").write_bytes(good[: len(good) // 2])
    (data / "cat" / "notes.txt").write_text("not an image")

    examples = ingest_folder(data, tmp_path / "out")

    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    written = read_split(examples.uri, "train") + read_split(examples.uri, "eval")
    names = sorted(e.features.feature[encode.FILENAME_KEY].bytes_list.value[0].decode()
                   for e in written)
    assert names == sorted([f"cat/{i}.png" for i in range(6)]
                           + [f"dog/{i}.JPG" for i in range(6)]
                           + ["dog/rgba.png", "dog/cmyk.jpg", "cat/palette.gif"])
    assert sum(report["splits"].values()) == 15
    assert {r["path"] for r in report["skipped"]} == {"dog/empty.jpg", "cat/truncated.jpg"}
    assert report["ignored"] == 2  # notes.txt, .DS_Store
    assert report["empty_classes"] == ["no_images_here"]
    assert report["shapes"]["most_common"]["8x8x4"] == 2  # RGBA and CMYK keep 4 channels
    assert report["per_class"]["train"]["cat"] + report["per_class"]["eval"]["cat"] == 7
    assert (tmp_path / "out" / "labels.txt").read_text() == "cat\ndog\n"
    assert examples.split_names == '["train", "eval"]'


def test_empty_split_fails_naming_skipped_files(tmp_path, make_image):
    data = tmp_path / "data"
    good = make_image(tmp_path / "big.jpg", size=(64, 64), fmt="JPEG").read_bytes()
    for i in range(3):
        (data / "cat").mkdir(parents=True, exist_ok=True)
        (data / "cat" / f"{i}.jpg").write_bytes(good[: len(good) // 3])
    with pytest.raises(ValueError, match=r"got no images: 0 ingested, 3 skipped.*cat/"):
        ingest_folder(data, tmp_path / "out")


def test_strict_mode_fails_naming_the_bad_file(tmp_path, make_image):
    data = tmp_path / "data"
    for i in range(4):
        make_image(data / "cat" / f"{i}.png", seed=i)
    (data / "cat" / "broken.png").write_bytes(b"\x89PNG not really")
    with pytest.raises(ValueError, match=r"--strict: 1 file\(s\).*cat/broken.png: cannot decode"):
        ingest_folder(data, tmp_path / "out", strict=True)


def test_split_folders_decide_the_splits(tmp_path, make_image):
    data = tmp_path / "data"
    for i in range(3):
        make_image(data / "train" / "a" / f"{i}.png", seed=i)
        make_image(data / "train" / "b" / f"{i}.png", seed=10 + i)
    make_image(data / "eval" / "b" / "x.png", seed=20)
    examples = ingest_folder(data, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert report["splits"] == {"train": 6, "eval": 1}
    (only,) = read_split(examples.uri, "eval")
    assert only.features.feature[encode.LABEL_KEY].int64_list.value[0] == 1
    assert only.features.feature[encode.FILENAME_KEY].bytes_list.value[0] == b"eval/b/x.png"


def test_idx_files_ingest_with_their_own_splits(tmp_path):
    examples = ingest_folder(MNIST_IDX, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert (report["format"], report["splits"]) == ("idx", {"train": 800, "eval": 200})
    assert report["shapes"]["most_common"] == {"28x28x1": 1000}
    first = read_split(examples.uri, "eval")[0].features.feature
    assert first[encode.FORMAT_KEY].bytes_list.value[0] == b"png"
    assert first[encode.FILENAME_KEY].bytes_list.value[0].startswith(b"t10k-images-idx3-ubyte.gz#")


def test_npz_ingests_with_hash_split_when_it_has_no_test_arrays(tmp_path):
    import numpy as np
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.random.default_rng(0).integers(0, 255, (40, 5, 5, 3), np.uint8),
             y_train=np.arange(40) % 4)
    ingest_folder(path, tmp_path / "out", eval_percent=25)
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert sum(report["splits"].values()) == 40 and min(report["splits"].values()) > 0
    assert report["classes"] == ["0", "1", "2", "3"]
    assert (tmp_path / "out" / "labels.txt").read_text() == "0\n1\n2\n3\n"


def test_tfrecords_with_foreign_keys_ingest_and_derive_labels(tmp_path, make_image):
    import tensorflow as tf
    (tmp_path / "in").mkdir()
    with tf.io.TFRecordWriter(str(tmp_path / "in" / "a.tfrecord")) as writer:
        for i in range(12):
            png = make_image(tmp_path / f"{i}.png", seed=i).read_bytes()
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[png])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
                .SerializeToString())
    ingest_folder(tmp_path / "in", tmp_path / "out", image_key="raw", label_key="y")
    report = json.loads((tmp_path / "out" / "ingest_report.json").read_text())
    assert report["format"] == "tfrecord" and report["classes"] == ["0", "1"]
    assert sum(report["splits"].values()) == 12
