"""Models: the TPU MNIST example's CNN, a small ResNet, and their two custom summaries."""
import glob

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

from modules.networks.keras_model import compile_model
from modules.networks.small import build_cnn, build_resnet
from modules.networks.summaries import HISTOGRAM_SUMMARY, IMAGE_SUMMARY

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _toy(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(64, *shape)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 0).astype("int64")
    x[y == 1] += 1.0
    return x, y


def test_cnn_has_the_reference_layers_and_float32_softmax():
    model = build_cnn((28, 28, 1), 10)
    kinds = [type(layer).__name__ for layer in model.layers[1:]]
    assert kinds == ["ImageSummary", "Conv2D", "Conv2D", "MaxPooling2D", "Dropout", "Flatten",
                     "Dense", "Dropout", "Dense", "HistogramSummary"]
    assert model.output_shape == (None, 10)
    assert model.get_layer("probabilities").dtype == "float32"


def test_summary_layers_pass_data_through_unchanged():
    images, _ = _toy((6, 6, 3))
    model = build_cnn((6, 6, 3), 2)
    np.testing.assert_array_equal(model.get_layer(IMAGE_SUMMARY)(images), images)
    values = images[:, :2, 0, 0]
    np.testing.assert_array_equal(model.get_layer(HISTOGRAM_SUMMARY)(tf.constant(values)), values)


@pytest.mark.parametrize("build, shape", [(build_cnn, (12, 12, 1)), (build_resnet, (12, 12, 3))])
def test_models_fit_a_separable_toy_problem(build, shape):
    x, y = _toy(shape)
    model = compile_model(build(shape, 2), "adam", 1e-3, steps_per_execution=1)
    history = model.fit(x, np.eye(2)[y], epochs=15, batch_size=16, verbose=0)
    assert history.history["accuracy"][-1] > 0.9


def test_mixed_precision_keeps_the_output_in_float32():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = build_resnet((8, 8, 3), 4)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert model.layers[2].compute_dtype == "float16"
    assert model.output.dtype == tf.float32


def _tags(log_dir):
    tags = set()
    for path in glob.glob(f"{log_dir}/**/events.out.tfevents.*", recursive=True):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    return tags


def test_event_files_hold_both_custom_summaries(tmp_path):
    x, y = _toy((8, 8, 1))
    model = compile_model(build_cnn((8, 8, 1), 2), "sgd", 0.05, steps_per_execution=1)
    model.fit(x, np.eye(2)[y], epochs=1, batch_size=16, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path), update_freq=1)])
    tags = _tags(tmp_path / "train")
    assert any(t.endswith(IMAGE_SUMMARY) for t in tags), tags
    assert any(t.endswith(HISTOGRAM_SUMMARY) for t in tags), tags


def test_photo_channel_gates_sit_in_the_expanded_blocks_only():
    from modules.networks.photo import STAGES, build_photo
    gated = build_photo((32, 32, 3), 3, excite=True)
    gates = [layer for layer in gated.layers if isinstance(layer, keras.layers.Multiply)]
    assert len(gates) == sum(blocks for expansion, _, blocks, _ in STAGES if expansion != 1)
    assert gated.output_shape == build_photo((32, 32, 3), 3).output_shape == (None, 3)
