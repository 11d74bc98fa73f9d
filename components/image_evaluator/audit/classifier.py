"""The candidate model as the audit sees it: pixels in [0, 255] -> probabilities.

Everything goes through the SavedModel's `serving_tensor` signature (the
normalization is inside it, and it is differentiable), so the audit needs
nothing model-specific; `serving_gradcam` is used where the Trainer exported it.
"""
import dataclasses
from typing import Callable, Dict, List, Optional

import numpy as np
import tensorflow as tf
from tfx.utils import path_utils

from core.contract import PIXELS_INPUT, PROBABILITIES, SERVING_TENSOR
from core.images import pixel_decoder
from components.image_evaluator.audit.signature import CLASS_ID_INPUT, SERVING_GRADCAM
from core.storage import files

BATCH = 64  # images per call: bounds the memory of 224 px photos
# Images per gradient call: the backward pass keeps every activation, and a model served
# with test-time flip keeps two views' (docs/training.md measured the peaks).
GRADIENT_BATCH = 32


@dataclasses.dataclass
class Classifier:
    """A differentiable [N, S, S, C] float32 pixels in [0, 255] -> [N, classes] function."""

    probabilities: Callable[[tf.Tensor], tf.Tensor]
    size: int
    channels: int
    # (pixels, class ids) -> {"heatmap": [N, h, w], "layer": [N]}; None: no Grad-CAM.
    gradcam: Optional[Callable[[tf.Tensor, tf.Tensor], Dict[str, tf.Tensor]]] = None
    source: object = None  # the loaded SavedModel: its variables live as long as it does


def load_classifier(model_uri: str) -> Classifier:
    """The Trainer's Model artifact (`<uri>/Format-Serving`) or a SavedModel folder."""
    path = path_utils.serving_model_dir(model_uri)
    loaded = tf.saved_model.load(path if files.exists(path) else model_uri)
    tensor = loaded.signatures[SERVING_TENSOR]
    _, size, _, channels = tensor.structured_input_signature[1][PIXELS_INPUT].shape
    gradcam = loaded.signatures.get(SERVING_GRADCAM)

    def probabilities(pixels):
        return tensor(**{PIXELS_INPUT: pixels})[PROBABILITIES]

    def heatmaps(pixels, class_ids):
        return gradcam(**{PIXELS_INPUT: pixels, CLASS_ID_INPUT: class_ids})
    return Classifier(probabilities, int(size), int(channels),
                      heatmaps if gradcam is not None else None, loaded)


def predict(classifier: Classifier, pixels: np.ndarray) -> np.ndarray:
    """[N, classes] probabilities, BATCH images a call."""
    if not len(pixels):
        return np.zeros([0, 0], np.float32)
    return np.concatenate([classifier.probabilities(tf.constant(pixels[i:i + BATCH])).numpy()
                           for i in range(0, len(pixels), BATCH)])


def decode(classifier: Classifier, encoded: List[bytes]) -> np.ndarray:
    """Encoded images -> [N, S, S, C] float32 pixels in [0, 255], as Transform decodes them."""
    if not encoded:
        return np.zeros([0, classifier.size, classifier.size, classifier.channels], np.float32)
    decoder = pixel_decoder(classifier.size, classifier.channels)
    return decoder(tf.constant(encoded, tf.string)).numpy()


def predict_encoded(classifier: Classifier, encoded: List[bytes]) -> np.ndarray:
    """Probabilities for encoded images, decoded BATCH at a time (a photo set fits memory)."""
    return np.concatenate([predict(classifier, decode(classifier, encoded[i:i + BATCH]))
                           for i in range(0, len(encoded), BATCH)])


def score_gradients(classifier: Classifier, pixels: np.ndarray, classes: np.ndarray,
                    log: bool = True) -> np.ndarray:
    """Gradients of log p[class] (of p[class] if not `log`) w.r.t. the pixels, in one call."""
    x = tf.constant(pixels, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        chosen = tf.gather(classifier.probabilities(x), tf.constant(classes, tf.int64),
                           batch_dims=1)
        score = tf.math.log(chosen + 1e-12) if log else chosen
    return tape.gradient(score, x).numpy()
