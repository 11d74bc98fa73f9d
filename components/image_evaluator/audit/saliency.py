"""Saliency maps: Grad-CAM where the model exported it, integrated gradients otherwise.

- Grad-CAM (Selvaraju et al., ICCV 2017): the `serving_gradcam` signature
  (modules/signatures.py) weighs the last spatial layer's channels by the
  mean gradient of the class's log probability; one pass an image.
- Integrated gradients (Sundararajan, Taly & Yan, ICML 2017): the gradient of
  the class's probability averaged along the straight path from a black
  image to the image (IG_STEPS points, right Riemann sum), times the image,
  summed over channels as magnitudes. Model-agnostic (it needs only
  `serving_tensor`), so it covers every user model, at IG_STEPS passes an image.
Both explain the predicted class.
"""
from typing import List, Optional, Tuple

import numpy as np
import tensorflow as tf

from components.image_evaluator.audit.classifier import Classifier, score_gradients
from components.image_evaluator.audit.signature import HEATMAP, LAYER

GRAD_CAM = "grad-cam"
INTEGRATED_GRADIENTS = "integrated gradients"
MAX_IMAGES = 12  # images explained, misclassified ones first
IG_STEPS = 32


def choose_images(labels: np.ndarray, predicted: np.ndarray, limit: int = MAX_IMAGES
                  ) -> List[int]:
    """Up to `limit` indices: the misclassified first, then the others, in split order."""
    wrong = [int(i) for i in np.flatnonzero(predicted != labels)]
    right = [int(i) for i in np.flatnonzero(predicted == labels)]
    return (wrong + right)[:limit]


def integrated_gradients(classifier: Classifier, image: np.ndarray, class_id: int,
                         steps: int = IG_STEPS) -> np.ndarray:
    """[S, S] attribution magnitudes of one [S, S, C] image, from a black baseline."""
    alphas = (np.arange(1, steps + 1, dtype=np.float32) / steps).reshape(-1, 1, 1, 1)
    path = alphas * image[None]  # the baseline is 0: baseline + alpha * (image - baseline)
    gradients = score_gradients(classifier, path, np.full(steps, class_id), log=False)
    return np.abs(image * gradients.mean(axis=0)).sum(axis=-1)


def gradcam(classifier: Classifier, pixels: np.ndarray, class_ids: np.ndarray
            ) -> Tuple[np.ndarray, str]:
    """([N, S, S] maps resized to the image, the layer's name) from `serving_gradcam`."""
    outputs = classifier.gradcam(tf.constant(pixels, tf.float32),
                                 tf.constant(class_ids, tf.int64))
    heat = tf.image.resize(outputs[HEATMAP][..., None], pixels.shape[1:3], method="bilinear")
    return heat.numpy()[..., 0], outputs[LAYER].numpy()[0].decode()


def saliency_maps(classifier: Classifier, pixels: np.ndarray, class_ids: np.ndarray
                  ) -> Tuple[str, Optional[str], np.ndarray]:
    """(method, Grad-CAM's layer or None, [N, S, S] maps scaled to [0, 1] per image)."""
    if classifier.gradcam is not None and len(pixels):
        maps, layer = gradcam(classifier, pixels, class_ids)
        method = GRAD_CAM
    else:
        maps = np.stack([integrated_gradients(classifier, image, int(c))
                         for image, c in zip(pixels, class_ids)]) if len(pixels) else \
            np.zeros(pixels.shape[:3], np.float32)
        method, layer = INTEGRATED_GRADIENTS, None
    peak = maps.reshape(len(maps), -1).max(axis=1).reshape(-1, 1, 1) if len(maps) else 1.0
    return method, layer, maps / np.maximum(peak, 1e-12)
