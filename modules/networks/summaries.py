"""The custom TensorBoard summary layers every model wraps itself in.

Pass-through layers, as in the Cloud TPU Keras MNIST example: one writes an
image summary of the model's inputs, one a histogram of its outputs;
TensorBoard shows them under the tags `custom_image_summary` and
`custom_histogram_summary`. Without a default summary writer (serving,
evaluation) they are no-ops, and soft device placement puts them on the CPU
under a TPU.
"""
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


def image_input(input_shape, image_size=None):
    """(the model's input, the image summary of it), resized to `image_size` when a
    search chose a side smaller than Transform's (modules/networks/space.py).

    Bilinear: TFLite has a builtin for it (not for area resizing), and at the
    searched factors of 1/2 it averages 2x2 pixels as area resizing would.
    """
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = ImageSummary(name=IMAGE_SUMMARY)(inputs)
    if image_size and image_size < input_shape[0]:
        x = keras.layers.Resizing(image_size, image_size, name="tuned_resize")(x)
    return inputs, x


def scaled(channels: int, width: float) -> int:
    """`channels` times a searched width, a multiple of 8 (at least 8)."""
    return max(8, int(round(channels * width / 8)) * 8)


def classifier(x, num_classes: int):
    """Softmax in float32 (under mixed precision too), then the histogram summary."""
    x = keras.layers.Dense(num_classes, activation="softmax", dtype="float32",
                           name="probabilities")(x)
    return HistogramSummary(name=HISTOGRAM_SUMMARY, dtype="float32")(x)
