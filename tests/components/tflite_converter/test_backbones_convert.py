"""Keras Applications backbones convert to full-integer TFLite and pass the parity gate."""
import numpy as np
import pytest
import tensorflow as tf

from components.tflite_converter import conversion as tflite
from modules.networks.backbones import build_backbone_model
from modules.networks.keras_model import compile_model

pytestmark = pytest.mark.slow
SIDE, MEAN, STD = 32, np.array([0.5, 0.5, 0.5]), np.array([0.25, 0.25, 0.25])
# MobileNetV2 (depthwise convolutions, ReLU6) and EfficientNetB0 (swish, squeeze-and-excite
# multiplies) between them hold the ops ResNet50 has (convolutions, batch norm, adds, ReLU)
# but max pooling, which the `cnn`'s int8 file has in every end-to-end run; ResNet50's own
# conversion took 52 s of the suite.
CONVERTED = ("mobilenet_v2", "efficientnet_b0")


def _data(seed, count=64):
    """Two classes a backbone separates after a few steps: dark and bright images."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    pixels = rng.uniform(0, 120, (count, SIDE, SIDE, 3)).astype(np.float32)
    pixels[labels == 1] += 120.0
    return pixels, labels


def _saved_model(name, path):
    """A briefly trained backbone classifier with the Trainer's serving_tensor signature,
    saved to `path`; returns the path and the Keras model."""
    model = build_backbone_model(name, (SIDE, SIDE, 3), 2, None, MEAN, STD)
    compile_model(model, "adam", 1e-3, 1)
    pixels, labels = _data(seed=1)
    model.fit((pixels / 255.0 - MEAN) / STD, np.eye(2)[labels], epochs=3, batch_size=16,
              verbose=0)

    @tf.function(input_signature=[tf.TensorSpec([None, SIDE, SIDE, 3], tf.float32,
                                                name="pixels")])
    def serve(pixels):
        probabilities = model((pixels / 255.0 - MEAN) / STD, training=False)
        return {"probabilities": probabilities, "class_id": tf.argmax(probabilities, -1)}

    model.save(str(path), save_format="tf", signatures={tflite.SIGNATURE: serve})
    return str(path), model


@pytest.mark.parametrize("name", CONVERTED)
def test_each_backbone_converts_to_int8_and_passes_the_gate(name, tmp_path):
    saved, keras_model = _saved_model(name, tmp_path / name)
    pixels, labels = _data(seed=2)
    model = tflite.convert(saved, "int8", representative=_data(seed=3)[0][:32])
    # The gate reads files: the images as PNGs (lossless, so both see the same pixels).
    encoded = [tf.io.encode_png(np.round(image).astype(np.uint8)).numpy() for image in pixels]
    result = tflite.parity(saved, model, [(encoded, labels)], tolerance=0.05)
    assert result["ok"], result
    # The Keras model in memory: loading the SavedModel a third time costs more than the check.
    got = tflite.tflite_probabilities(model, pixels)
    want = keras_model.predict((pixels / 255.0 - MEAN) / STD, verbose=0)
    assert np.mean(got.argmax(-1) == want.argmax(-1)) >= 0.9
