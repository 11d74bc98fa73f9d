"""float32_copy: a model trained under mixed precision exports in float32, with its weights."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from modules.networks import backbones
from modules.networks.keras_model import float32_copy
from modules.networks.small import build_cnn

pytestmark = pytest.mark.integration  # real Keras builds and a TFLite conversion


@pytest.fixture
def policy():
    """Sets a global policy for the test; float32 again after it."""
    yield keras.mixed_precision.set_global_policy
    keras.mixed_precision.set_global_policy("float32")


def _images(shape, seed=0):
    return np.random.default_rng(seed).random((4, *shape), np.float32)


def test_a_float32_model_is_its_own_copy():
    model = build_cnn((28, 28, 1), 3)
    assert float32_copy(model, lambda: pytest.fail("no rebuild")) is model


def test_a_mixed_float16_cnn_converts_to_tflite_through_its_copy(policy):
    policy("mixed_float16")
    model = build_cnn((28, 28, 1), 3)
    copy = float32_copy(model, lambda: build_cnn((28, 28, 1), 3))
    assert model.compute_dtype == "float16" and copy.compute_dtype == "float32"
    images = _images((28, 28, 1))
    np.testing.assert_allclose(copy(images).numpy(), model(images).numpy().astype(np.float32),
                               atol=2e-3)
    assert tf.lite.TFLiteConverter.from_keras_model(copy).convert()


def test_a_partly_unfrozen_backbone_keeps_each_weight_in_its_place(policy):
    # Fine-tuned (top blocks training, the rest frozen), against a fresh build's flags.
    policy("mixed_bfloat16")
    build = (lambda: backbones.build_backbone_model(
        "mobilenet_v2", (32, 32, 3), 3, None, np.zeros(3), np.ones(3)))
    model = build()
    assert backbones.unfreeze_top(model, "mobilenet_v2") > 0
    for weight in model.weights:  # away from a fresh build's initial values
        weight.assign(weight + tf.random.stateless_normal(weight.shape, (1, 2)) * 0.01)
    copy = float32_copy(model, build)
    images = _images((32, 32, 3))
    expected = model(images, training=False).numpy().astype(np.float32)
    np.testing.assert_allclose(copy(images, training=False).numpy(), expected, atol=3e-2)
