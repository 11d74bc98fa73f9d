"""`imagepipe run` end to end on the non-folder formats, on tiny generated data."""
import gzip

import numpy as np
import pytest
import tensorflow as tf

from tests.support.cli import run_pipeline

pytestmark = pytest.mark.slow


def _idx(path, array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    path.write_bytes(gzip.compress(header + array.astype(np.uint8).tobytes()))


def _digits(count, seed):
    """Learnable toy images: class k has a bright band at row 2k (16x16)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(count) % 4
    images = rng.integers(0, 40, (count, 16, 16), dtype=np.uint8)
    for i, label in enumerate(labels):
        images[i, 4 * label:4 * label + 3, :] = 255
    return images, labels


def make_idx(root):
    for prefix, count in (("train", 60), ("t10k", 20)):
        images, labels = _digits(count, len(prefix))
        _idx(root / f"{prefix}-images-idx3-ubyte.gz", images)
        _idx(root / f"{prefix}-labels-idx1-ubyte.gz", labels)
    return root, {"train": 60, "eval": 20}


def make_tfrecords(root):
    from components.image_example_gen.readers.arrays import encode_png
    images, labels = _digits(60, 7)
    with tf.io.TFRecordWriter(str(root / "part-0.tfrecord")) as writer:
        for image, label in zip(images, labels):
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "jpeg": tf.train.Feature(bytes_list=tf.train.BytesList(value=[encode_png(image)])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)]))}))
                .SerializeToString())
    return root, None


# An untrained model (one step at a tiny learning rate) cannot reach accuracy 1.0
# on 4 classes, so the tfrecord case also proves an impossible bar blocks the push.
IMPOSSIBLE = ["--accuracy-threshold", "1", "--train-steps", "1", "--learning-rate", "1e-7"]


@pytest.mark.parametrize("make, fmt, flags", [
    (make_idx, "idx", ["--accuracy-threshold", "0"]),
    (make_tfrecords, "tfrecord", ["--image-key", "jpeg", "--label-key", "y", *IMPOSSIBLE]),
])
def test_run_works_on_the_format(tmp_path, make, fmt, flags):
    (tmp_path / "data").mkdir()
    data, splits = make(tmp_path / "data")
    summary, _ = run_pipeline(data, tmp_path / "out", *flags, "--train-steps", "20",
                              "--eval-steps", "1", "--batch-size", "8", *flags)
    assert summary["data"]["format"] == fmt
    assert summary["data"]["classes"] == ["0", "1", "2", "3"]
    if splits:
        assert summary["data"]["splits"] == splits
    assert summary["data"]["shapes"]["most_common"] == {
        "16x16x1": sum(summary["data"]["splits"].values())}
    evaluation, pushed = summary["eval"], summary["pushed"]
    if "1e-7" in flags:
        assert evaluation["accuracy"] < 1.0 and evaluation["blessed"] is False
        assert evaluation["reason"] == f"accuracy {evaluation['accuracy']:.4f} < threshold 1.0"
        verdict = pushed.pop("verdict")
        assert set(pushed.values()) == {None}
        assert verdict["kind"] == "model" and "below --accuracy-threshold 1.0" in \
            verdict["reason"], verdict
        assert not (tmp_path / "out" / "serving").exists()
        assert not (tmp_path / "out" / "tflite").exists()
    else:
        assert evaluation["blessed"] is True and pushed["serving"]
