"""Keras models the Trainer can build; Keras 2 (tf_keras), as TFX 1.16 expects.

Both models open with a pass-through layer that writes an image summary of
their inputs and end with one that writes a histogram of their outputs, as
the Cloud TPU Keras MNIST example does; TensorBoard shows them under the tags
`custom_image_summary` and `custom_histogram_summary`.
"""
from typing import Callable, Dict, Sequence

import tensorflow as tf
import tf_keras as keras

IMAGE_SUMMARY = "custom_image_summary"
HISTOGRAM_SUMMARY = "custom_histogram_summary"


class ImageSummary(keras.layers.Layer):
    """Returns its input unchanged; writes up to 3 of the images to TensorBoard.

    Each image is rescaled to [0, 1] for display: inputs are normalized, so
    most pixels would otherwise clip to black or white. Without a default
    summary writer (serving, evaluation) the summary is a no-op.
    """

    def call(self, images):
        shown = tf.cast(images[:3], tf.float32)
        low = tf.reduce_min(shown, axis=[1, 2, 3], keepdims=True)
        high = tf.reduce_max(shown, axis=[1, 2, 3], keepdims=True)
        tf.summary.image(IMAGE_SUMMARY, (shown - low) / tf.maximum(high - low, 1e-6),
                         max_outputs=3)
        return images


class HistogramSummary(keras.layers.Layer):
    """Returns its input unchanged; writes a histogram of it to TensorBoard."""

    def call(self, values):
        tf.summary.histogram(HISTOGRAM_SUMMARY, tf.cast(values, tf.float32))
        return values


def _classifier(x, num_classes: int):
    """Softmax in float32 (under mixed precision too), then the histogram summary."""
    x = keras.layers.Dense(num_classes, activation="softmax", dtype="float32",
                           name="probabilities")(x)
    return HistogramSummary(name=HISTOGRAM_SUMMARY, dtype="float32")(x)


def build_cnn(input_shape: Sequence[int], num_classes: int) -> keras.Model:
    """The CNN of the Cloud TPU Keras MNIST example.

    Conv2D 32 -> Conv2D 64 -> MaxPool -> Dropout 0.25 -> Flatten -> Dense 128
    -> Dropout 0.5 -> Dense num_classes (softmax, kept in float32).
    """
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = ImageSummary(name=IMAGE_SUMMARY)(inputs)
    x = keras.layers.Conv2D(32, 3, activation="relu")(x)
    x = keras.layers.Conv2D(64, 3, activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Dropout(0.25)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dropout(0.5)(x)
    return keras.Model(inputs, _classifier(x, num_classes), name="mnist_cnn")


def _residual_block(x, filters: int, stride: int):
    shortcut = x
    y = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.ReLU()(y)
    y = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = keras.layers.BatchNormalization()(shortcut)
    return keras.layers.ReLU()(keras.layers.Add()([y, shortcut]))


def build_resnet(input_shape: Sequence[int], num_classes: int) -> keras.Model:
    """A small ResNet (CIFAR-style, 3 stages of 2 basic blocks, 16/32/64 filters), for RGB data."""
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = ImageSummary(name=IMAGE_SUMMARY)(inputs)
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(x)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(2):
            x = _residual_block(x, filters, 2 if stage and not block else 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, _classifier(x, num_classes), name="small_resnet")


MODELS: Dict[str, Callable[[Sequence[int], int], keras.Model]] = {
    "cnn": build_cnn, "resnet": build_resnet}
OPTIMIZERS = {"adam": keras.optimizers.Adam, "sgd": keras.optimizers.SGD}


def compile_model(model: keras.Model, optimizer: str, learning_rate: float,
                  steps_per_execution: int) -> keras.Model:
    """Compiles with sparse categorical cross-entropy and accuracy."""
    model.compile(optimizer=OPTIMIZERS[optimizer](learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
                  steps_per_execution=steps_per_execution)
    return model
