"""Keras Applications backbones: input mapping, weights files, the ImageNet cache, fine-tuning."""
import os

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from modules.networks import backbones
from modules.network_registry import BACKBONE_NAMES, backbone as registered
from modules.networks.backbones import (BackboneInput, WeightsError, backbone_of,
                                        build_backbone_model, build_network,
                                        save_backbone_weights, unfreeze_top)
from tests.support.paths import MNIST_PNG

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work

MEAN, STD = np.array([0.40, 0.45, 0.50]), np.array([0.20, 0.25, 0.30])
PREPROCESS = {"mobilenet_v2": keras.applications.mobilenet_v2.preprocess_input,
              "resnet50": keras.applications.resnet50.preprocess_input,
              "efficientnet_b0": lambda pixels: pixels}  # takes [0, 255]


def test_every_backbone_name_has_a_keras_application():
    assert BACKBONE_NAMES and all(hasattr(keras.applications, registered(name).build)
                                  for name in BACKBONE_NAMES)


@pytest.mark.parametrize("name", BACKBONE_NAMES)
def test_input_mapping_equals_the_backbones_own_preprocessing(name):
    pixels = np.random.default_rng(0).uniform(0, 255, (2, 8, 8, 3)).astype(np.float32)
    b = registered(name)
    layer = BackboneInput(MEAN, STD, b.scale, b.offset, b.bgr)
    got = layer((pixels / 255.0 - MEAN) / STD).numpy()
    np.testing.assert_allclose(got, PREPROCESS[name](pixels.copy()), atol=1e-3)


def test_grayscale_becomes_three_equal_channels_before_the_mapping():
    gray = np.random.default_rng(1).uniform(0, 255, (2, 8, 8, 1)).astype(np.float32)
    b = registered("resnet50")
    got = BackboneInput([0.3], [0.2], b.scale, b.offset, b.bgr)((gray / 255.0 - 0.3) / 0.2)
    want = PREPROCESS["resnet50"](np.repeat(gray, 3, axis=-1))
    np.testing.assert_allclose(got.numpy(), want, atol=1e-3)


@pytest.mark.parametrize("name", BACKBONE_NAMES)
def test_fine_tuning_opens_only_the_top_blocks_and_never_batch_norm(name):
    model = build_backbone_model(name, (32, 32, 3), 4, None, MEAN, STD)
    network = backbone_of(model)
    network.trainable = False
    opened = unfreeze_top(model, name)
    trainable = [layer for layer in network.layers if layer.trainable]
    start = [layer.name for layer in network.layers].index(registered(name).fine_tune_from)
    assert opened > 0 and trainable
    assert all(network.layers.index(layer) >= start for layer in trainable)
    assert not any(isinstance(layer, keras.layers.BatchNormalization) for layer in trainable)
    assert len(trainable) < len(network.layers) / 2


def _digits(count=64, side=32):
    """Real scans: the bundled MNIST digits, as RGB at `side` px."""
    from PIL import Image
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(MNIST_PNG)
                   for f in files)[:count]
    images = [np.asarray(Image.open(p).convert("RGB").resize((side, side))) for p in paths]
    labels = [int(os.path.basename(os.path.dirname(p))) % 4 for p in paths]
    return np.stack(images).astype(np.float32), np.eye(4)[labels]


def test_a_trained_backbone_saved_and_reloaded_through_weights_gives_the_same_outputs(tmp_path):
    pixels, labels = _digits()
    normalized = (pixels / 255.0 - MEAN) / STD
    model = build_backbone_model("mobilenet_v2", (32, 32, 3), 4, None, MEAN, STD)
    model.compile("adam", "categorical_crossentropy")
    before = backbone_of(model).get_weights()
    model.fit(normalized, labels, epochs=2, batch_size=16, verbose=0)
    assert any(not np.array_equal(a, b) for a, b in zip(before, backbone_of(model).get_weights()))
    path = save_backbone_weights(model, str(tmp_path))
    reloaded = build_network("mobilenet_v2", 32, path)
    images = model.get_layer("backbone_input")(normalized)
    np.testing.assert_allclose(reloaded(images, training=False).numpy(),
                               backbone_of(model)(images, training=False).numpy(), atol=1e-5)


def test_imagenet_weights_come_from_keras_cache(tmp_path, monkeypatch):
    # Keras looks in ~/.keras/models under this name before downloading (MobileNetV2
    # checks no hash); a file placed there stands in for the download.
    monkeypatch.setenv("HOME", str(tmp_path))
    cache = tmp_path / ".keras" / "models"
    cache.mkdir(parents=True)
    placed = keras.applications.MobileNetV2(include_top=False, weights=None,
                                            input_shape=(96, 96, 3))
    placed.set_weights([w + 0.01 for w in placed.get_weights()])
    name = "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_1.0_96_no_top.h5"
    placed.save_weights(str(cache / name))
    network = build_network("mobilenet_v2", 96, "imagenet")
    for got, want in zip(network.get_weights(), placed.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_imagenet_without_a_network_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # an empty cache: Keras must download
    with pytest.raises(WeightsError, match="--weights imagenet: Keras could not fetch .* "
                                           "--weights PATH"):
        build_network("mobilenet_v2", 96, "imagenet")


def test_a_weights_file_for_another_network_is_refused_naming_both(tmp_path):
    path = str(tmp_path / "mnv2.h5")
    keras.applications.MobileNetV2(include_top=False, weights=None,
                                   input_shape=(32, 32, 3)).save_weights(path)
    with pytest.raises(WeightsError, match=r"--weights .*mnv2.h5: could not be loaded into "
                                           r"resnet50 .*expected a Keras weights file of resnet50"):
        build_network("resnet50", 32, path)


def test_missing_and_corrupt_weights_files_are_refused(tmp_path):
    with pytest.raises(WeightsError, match="no such file"):
        build_network("mobilenet_v2", 32, str(tmp_path / "absent.h5"))
    corrupt = tmp_path / "corrupt.h5"
    corrupt.write_bytes(b"not an HDF5 file" * 10)
    with pytest.raises(WeightsError, match="corrupt.h5: could not be loaded into mobilenet_v2"):
        build_network("mobilenet_v2", 32, str(corrupt))


def test_efficientnet_weights_from_keras_imagenet_graph_keep_its_value_scale(tmp_path):
    # Keras' ImageNet EfficientNet multiplies by 1/sqrt(std) after Normalization;
    # a file saved from it (variance std**2) must give the same activations here.
    saved = keras.applications.EfficientNetB0(include_top=False, weights=None,
                                              input_shape=(32, 32, 3))
    norm = next(l for l in saved.layers if isinstance(l, keras.layers.Normalization))
    mean, _, count = norm.get_weights()
    std = backbones._EFFICIENTNET_STD.reshape(mean.shape)
    norm.set_weights([mean + 0.4, std ** 2, count])
    path = str(tmp_path / "effb0.h5")
    saved.save_weights(path)
    loaded = build_network("efficientnet_b0", 32, path)
    loaded_norm = next(l for l in loaded.layers if isinstance(l, keras.layers.Normalization))
    pixels = tf.constant(np.random.default_rng(2).uniform(0, 1, (1, 4, 4, 3)), tf.float32)
    want = norm(pixels) / tf.sqrt(tf.constant(backbones._EFFICIENTNET_STD))
    np.testing.assert_allclose(loaded_norm(pixels).numpy(), want.numpy(), rtol=1e-5)
    # Saved again after the fold, it is not folded twice.
    save_backbone_weights(keras.Sequential([loaded]), str(tmp_path))
    again = build_network("efficientnet_b0", 32, str(tmp_path / backbones.BACKBONE_WEIGHTS_FILE))
    again_norm = next(l for l in again.layers if isinstance(l, keras.layers.Normalization))
    np.testing.assert_allclose(again_norm(pixels).numpy(), want.numpy(), rtol=1e-5)


def _moving_mean(model):
    network = backbone_of(model)
    layer = next(l for l in network.layers if isinstance(l, keras.layers.BatchNormalization))
    return layer.moving_mean.numpy().copy()


@pytest.mark.parametrize("pretrained", [False, True])
def test_batch_norm_learns_from_scratch_and_keeps_pretrained_statistics(tmp_path, pretrained):
    weights = None
    if pretrained:
        weights = str(tmp_path / "w.h5")
        keras.applications.MobileNetV2(include_top=False, weights=None,
                                       input_shape=(32, 32, 3)).save_weights(weights)
    model = build_backbone_model("mobilenet_v2", (32, 32, 3), 4, weights, MEAN, STD)
    if pretrained:
        unfreeze_top(model, "mobilenet_v2")  # phase 2: batch norm stays in inference mode
    model.compile("adam", "categorical_crossentropy")
    before = _moving_mean(model)
    pixels, labels = _digits(count=32)
    model.fit((pixels / 255.0 - MEAN) / STD, labels, epochs=1, batch_size=16, verbose=0)
    changed = not np.allclose(before, _moving_mean(model))
    assert changed is not pretrained
