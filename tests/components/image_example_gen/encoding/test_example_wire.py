"""serialize_example writes exactly what tf.train.Example serializes to."""
import pytest
import tensorflow as tf

from components.image_example_gen.encoding.example_wire import serialize_example


def _reference(features) -> bytes:
    def feature(value):
        if isinstance(value, bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
    return tf.train.Example(features=tf.train.Features(
        feature={k: feature(v) for k, v in features.items()})).SerializeToString(
            deterministic=True)


@pytest.mark.parametrize("features", [
    {},
    {"image/encoded": b"", "image/height": 0},
    {"image/encoded": bytes(range(256)) * 700, "image/class/label": 127,
     "image/width": 128, "image/height": 2**40, "z": -1, "a": -(2**63), "m": 2**63 - 1},
    {"image/class/text": "Ünïcødé/猫".encode("utf-8"), "ключ": b"\x00\xff"},
])
def test_bytes_equal_tf_train_example(features):
    assert serialize_example(features) == _reference(features)


def test_parses_back_with_tensorflow():
    parsed = tf.io.parse_single_example(
        serialize_example({"image/encoded": b"abc", "image/class/label": 7}),
        {"image/encoded": tf.io.FixedLenFeature([], tf.string),
         "image/class/label": tf.io.FixedLenFeature([], tf.int64)})
    assert parsed["image/encoded"].numpy() == b"abc"
    assert parsed["image/class/label"].numpy() == 7


@pytest.mark.parametrize("value", [0.0, 33.25, 254.99, 1e-3, -7.5])
def test_float_features_equal_tf_train_example(value):
    reference = tf.train.Example(features=tf.train.Features(feature={
        "image/brightness": tf.train.Feature(float_list=tf.train.FloatList(value=[value])),
        "image/height": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
    assert serialize_example({"image/brightness": value, "image/height": 3}) == \
        reference.SerializeToString(deterministic=True)
