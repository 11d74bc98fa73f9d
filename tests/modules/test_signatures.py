"""Exported signatures: one preprocessing for training and serving, and they all agree."""
import json

import pytest

import numpy as np
import tensorflow as tf
import tf_keras as keras
from PIL import Image

from modules.networks.small import build_cnn
from modules.signatures import export
from modules.training.input_pipeline import make_dataset
from tests.support.examples import image_example

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work

LABELS = [f"class {i}" for i in range(8 * 8 * 3)]  # enough for an identity "model"


def _export(model, transformed, tmp_path, test_flip=False, name="model"):
    path = str(tmp_path / name)
    export(model, transformed.tft_output, LABELS, path, test_flip)
    return tf.saved_model.load(path).signatures


def _examples(paths):
    return [image_example(p.read_bytes()) for p in paths]


def test_training_and_serving_image_give_the_same_tensor(transformed, tmp_path):
    # A "model" that returns its input, flattened, shows the tensor each path feeds it.
    shape = (transformed.size, transformed.size, transformed.channels)
    identity = keras.Sequential([keras.Input(shape), keras.layers.Flatten()])
    signatures = _export(identity, transformed, tmp_path)
    assert "serving_gradcam" not in signatures  # no layer with a spatial output
    batch = next(iter(make_dataset(transformed.files["eval"], transformed.data_accessor,
                                   transformed.tft_output, 1, shuffle=False, seed=0,
                                   num_classes=len(LABELS))))
    image, _ = batch
    # The record's filename says which source image it is.
    raw = next(iter(tf.data.TFRecordDataset(tf.io.gfile.glob(transformed.files["eval"]),
                                            compression_type="GZIP")))
    name = tf.train.Example.FromString(raw.numpy()).features.feature[
        "image/filename"].bytes_list.value[0].decode()
    source = next(p for p in transformed.images if str(p).endswith(name))
    served = signatures["serving_image"](image_bytes=tf.constant([source.read_bytes()]))
    np.testing.assert_allclose(served["probabilities"].numpy()[0],
                               image.numpy().reshape(-1), atol=1e-6)


def test_all_signatures_load_and_agree(transformed, tmp_path):
    size = transformed.size
    model = build_cnn((size, size, transformed.channels), len(LABELS))
    signatures = _export(model, transformed, tmp_path)
    assert set(signatures) == {"serving_default", "serving_image", "serving_tensor",
                               "serving_gradcam"}
    paths = transformed.images[:5]
    pixels = np.stack([np.asarray(Image.open(p), np.float32).reshape(
        size, size, transformed.channels) for p in paths])
    results = [
        signatures["serving_default"](examples=tf.constant(_examples(paths))),
        signatures["serving_image"](image_bytes=tf.constant([p.read_bytes() for p in paths])),
        signatures["serving_tensor"](pixels=tf.constant(pixels)),
    ]
    for result in results[1:]:
        np.testing.assert_allclose(result["probabilities"], results[0]["probabilities"],
                                   atol=1e-5)
        assert result["class_id"].numpy().tolist() == results[0]["class_id"].numpy().tolist()
    extra = tmp_path / "model" / "assets.extra"
    assert (extra / "labels.txt").read_text().splitlines() == LABELS
    assert len(json.loads((extra / "normalization.json").read_text())["std"]) == \
        transformed.channels
    names = [LABELS[i] for i in results[0]["class_id"].numpy()]
    assert [n.decode() for n in results[0]["class_name"].numpy()] == names
    # Grad-CAM on the last spatial layer: 8 -> 6 -> 4 px (convolutions) -> 2 px (pooling).
    gradcam = signatures["serving_gradcam"](pixels=tf.constant(pixels),
                                            class_id=results[0]["class_id"])
    assert gradcam["heatmap"].shape == (5, 2, 2) and gradcam["heatmap"].numpy().min() >= 0
    (layer,) = {name.decode() for name in gradcam["layer"].numpy()}
    assert layer.startswith("dropout")  # Keras numbers names within a process


def test_a_test_flip_model_serves_the_mean_of_each_image_and_its_mirror(transformed, tmp_path):
    # The identity "model" again: its scores are the pixels it was fed, so the flipped
    # export must serve the mean of the image and its left-right mirror, in every
    # signature that scores, and the plain export the image alone.
    size, channels = transformed.size, transformed.channels
    identity = keras.Sequential([keras.Input((size, size, channels)), keras.layers.Flatten()])
    plain = _export(identity, transformed, tmp_path)
    flipped = _export(identity, transformed, tmp_path, test_flip=True, name="flipped")
    paths = transformed.images[:3]
    pixels = np.stack([np.asarray(Image.open(p), np.float32).reshape(size, size, channels)
                       for p in paths])
    as_given = plain["serving_tensor"](pixels=tf.constant(pixels))["probabilities"].numpy()
    mirrored = plain["serving_tensor"](
        pixels=tf.constant(pixels[:, :, ::-1]))["probabilities"].numpy()
    assert not np.allclose(as_given, mirrored)  # digits are not mirror-symmetric
    expected = (as_given + mirrored) / 2
    served = [flipped["serving_tensor"](pixels=tf.constant(pixels)),
              flipped["serving_image"](image_bytes=tf.constant([p.read_bytes() for p in paths])),
              flipped["serving_default"](examples=tf.constant(_examples(paths)))]
    for result in served:
        np.testing.assert_allclose(result["probabilities"].numpy(), expected, atol=1e-5)
        assert result["class_id"].numpy().tolist() == expected.argmax(-1).tolist()
