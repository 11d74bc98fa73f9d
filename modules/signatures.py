"""The exported SavedModel's signatures; all of them share the Transform graph's numbers.

- `serving_default`: serialized tf.Example in (TFMA, TF Serving predict).
- `serving_image`: encoded image bytes in (JPEG/PNG/BMP/GIF; base64 over REST).
- `serving_tensor`: float32 pixels in [0, 255], already at the model's size,
  for TFLite (which cannot decode images).

Each returns `probabilities`, `class_id` and `class_name` (from labels.txt).
A convolutional model also gets `serving_gradcam` (pixels and a class id in,
a Grad-CAM heatmap out), for the Evaluator's audit (components/image_evaluator/audit/).
"""
import json
import os
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
import tf_keras as keras

from core.contract import (ASSETS_EXTRA, IMAGE_BYTES_INPUT, IMAGE_KEY, IMAGE_XF,
                           LABELS_FILE, NORMALIZATION_FILE, PIXELS_INPUT,
                           PROBABILITIES, SERVING_DEFAULT, SERVING_IMAGE,
                           SERVING_TENSOR)
from components.image_evaluator.audit.signature import (CLASS_ID_INPUT, HEATMAP, LAYER,
                                                        SERVING_GRADCAM)
from core.storage import files


def normalization(transformed, size: int, channels: int) -> Tuple[np.ndarray, np.ndarray]:
    """(mean, std) per channel, as the Transform graph applies them to pixels in [0, 1].

    Read back through the graph itself, from a black and a white image, so
    `serving_tensor` cannot drift from what Transform computed: the graph
    maps 0 to -mean/std and 1 to (1 - mean)/std.
    """
    def through_graph(value: int) -> np.ndarray:
        png = tf.io.encode_png(tf.fill([size, size, channels], tf.constant(value, tf.uint8)))
        return transformed(tf.reshape(png, [1])).numpy()[0, 0, 0]

    black, white = through_graph(0), through_graph(255)
    std = 1.0 / (white - black)
    return -black * std, std


def _transformer(tft_layer, tft_output: tft.TFTransformOutput):
    """[batch] encoded images -> transformed images, through `tft_layer`."""
    spec = tft_output.raw_feature_spec()[IMAGE_KEY]

    def transformed(encoded):
        return tft_layer({IMAGE_KEY: tf.reshape(encoded, [-1, *spec.shape])})[IMAGE_XF]
    return transformed


def tft_normalization(tft_output: tft.TFTransformOutput) -> Tuple[np.ndarray, np.ndarray]:
    """(mean, std) per channel that Transform applies, for models that undo it (backbones)."""
    size, _, channels = tft_output.transformed_feature_spec()[IMAGE_XF].shape
    return normalization(_transformer(tft_output.transform_features_layer(), tft_output),
                         size, channels)


def serving_signatures(
        model: keras.Model, tft_output: tft.TFTransformOutput, labels: List[str],
        test_flip: bool = False
) -> Tuple[Dict[str, tf.types.experimental.ConcreteFunction], Tuple[np.ndarray, np.ndarray]]:
    """The signatures above, for model.save(signatures=...), and (mean, std).

    `test_flip`: every signature but serving_gradcam averages the scores of each image
    and its mirror image (test-time augmentation), so what the Evaluator scores, the
    TFLite file and TF Serving agree. Grad-CAM explains the image as given.
    """
    model.tft_layer = tft_output.transform_features_layer()  # tracked, so it is saved
    raw_spec = {IMAGE_KEY: tft_output.raw_feature_spec()[IMAGE_KEY]}
    _, size, _, channels = model.input_shape
    outputs = _scorer(model, labels, test_flip)
    transformed = _transformer(model.tft_layer, tft_output)
    mean, std = normalization(transformed, size, channels)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="examples")])
    def serve_examples(examples):
        features = tf.io.parse_example(examples, raw_spec)
        return outputs(model.tft_layer(features)[IMAGE_XF])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=IMAGE_BYTES_INPUT)])
    def serve_image(image_bytes):
        return outputs(transformed(image_bytes))

    def normalized(pixels):
        return (pixels / 255.0 - mean.astype(np.float32)) / std.astype(np.float32)

    @tf.function(input_signature=[
        tf.TensorSpec([None, size, size, channels], tf.float32, name=PIXELS_INPUT)])
    def serve_tensor(pixels):
        return outputs(normalized(pixels))

    signatures = {SERVING_DEFAULT: serve_examples, SERVING_IMAGE: serve_image,
                  SERVING_TENSOR: serve_tensor}
    gradcam = gradcam_signature(model, normalized)
    if gradcam is not None:
        signatures[SERVING_GRADCAM] = gradcam
    return signatures, (mean, std)


def _scorer(model: keras.Model, labels: List[str], test_flip: bool) -> Callable:
    """images -> {probabilities, class_id, class_name}: the model's scores, with
    `test_flip` the mean of each image's and its mirror image's."""
    names = tf.constant(labels)

    def outputs(images):
        probabilities = model(images, training=False)
        if test_flip:
            # After the first view, not beside it: TensorFlow runs independent branches
            # at once, holding both views' activations; a batch scored in order peaked
            # lower in a bare process (docs/training.md).
            with tf.control_dependencies([probabilities]):
                images = tf.identity(images)
            # Axis 2 is the width of NHWC images: a left-right mirror.
            mirrored = model(tf.reverse(images, axis=[2]), training=False)
            probabilities = (probabilities + mirrored) / 2
        class_id = tf.argmax(probabilities, axis=-1)
        return {PROBABILITIES: probabilities, "class_id": class_id,
                "class_name": tf.gather(names, class_id)}
    return outputs


def gradcam_layer(model: keras.Model) -> Optional[keras.layers.Layer]:
    """The last top-level layer with a 4-D output larger than 1x1, or None.

    Only layers from the first one with weights on count: those before it
    (the input summary, a backbone's input mapping) hold the pixels
    themselves, and a "map" of them explains nothing. A Keras Applications
    backbone is one such layer (a nested Model); a subclassed model has none.
    """
    layers = getattr(model, "layers", [])
    first = next((i for i, layer in enumerate(layers) if layer.weights), len(layers))
    found = None
    for layer in layers[first:]:
        shape = getattr(_layer_output(layer), "shape", None)
        if shape is not None and len(shape) == 4 and (shape[1] or 0) * (shape[2] or 0) > 1:
            found = layer
    return found


def _layer_output(layer):
    """The layer's output where the model calls it (a nested model's last call), or None."""
    try:
        return layer.get_output_at(-1)
    except (AttributeError, ValueError, RuntimeError):  # a subclassed model's layers
        return None


def gradcam_signature(model: keras.Model, normalized: Callable):
    """`serving_gradcam` (Selvaraju et al., ICCV 2017) on gradcam_layer's output, or None.

    The score explained is the class's log probability: the model ends in a
    softmax, and a probability near 1 has a vanishing gradient.
    """
    layer = gradcam_layer(model)
    if layer is None:
        return None
    features_and_output = keras.Model(
        model.inputs, [_layer_output(layer), model.outputs[0]])
    _, size, _, channels = model.input_shape

    @tf.function(input_signature=[
        tf.TensorSpec([None, size, size, channels], tf.float32, name=PIXELS_INPUT),
        tf.TensorSpec([None], tf.int64, name=CLASS_ID_INPUT)])
    def serve_gradcam(pixels, class_id):
        with tf.GradientTape() as tape:
            features, probabilities = features_and_output(normalized(pixels), training=False)
            chosen = tf.gather(tf.cast(probabilities, tf.float32), class_id, batch_dims=1)
            score = tf.math.log(chosen + 1e-12)
        grads = tf.cast(tape.gradient(score, features), tf.float32)
        weights = tf.reduce_mean(grads, axis=[1, 2], keepdims=True)
        heatmap = tf.nn.relu(tf.reduce_sum(weights * tf.cast(features, tf.float32), axis=-1))
        return {HEATMAP: heatmap, LAYER: tf.fill(tf.shape(class_id), layer.name)}
    return serve_gradcam


def export(model: keras.Model, tft_output: tft.TFTransformOutput, labels: List[str],
           path: str, test_flip: bool = False) -> None:
    """Saves the SavedModel with its signatures, plus what apps need beside it.

    `assets.extra/` (TF Serving's place for extra files) gets labels.txt and
    normalization.json (per-channel mean and std for pixels in [0, 1]), which
    the TFLite push copies into model_info.json. `test_flip`: see serving_signatures.
    """
    signatures, (mean, std) = serving_signatures(model, tft_output, labels, test_flip)
    # No optimizer slots: serving never needs them, and Adam's would triple the size.
    model.save(path, save_format="tf", signatures=signatures, include_optimizer=False)
    extra = os.path.join(path, ASSETS_EXTRA)
    files.write_text(os.path.join(extra, LABELS_FILE), "".join(name + "\n" for name in labels))
    files.write_text(os.path.join(extra, NORMALIZATION_FILE),
                     json.dumps({"mean": [float(v) for v in np.ravel(mean)],
                                 "std": [float(v) for v in np.ravel(std)]}))
