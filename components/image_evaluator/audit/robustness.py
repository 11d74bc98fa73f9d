"""Accuracy under common corruptions (corruptions.py) and under FGSM.

FGSM (Goodfellow, Shlens & Szegedy, ICLR 2015): each image moved by epsilon,
in the direction of the sign of the cross-entropy's gradient with respect to
its pixels, through `serving_tensor` (normalization included).
"""
from typing import Dict, Optional

import numpy as np

from components.image_evaluator.audit.classifier import (GRADIENT_BATCH, Classifier, predict,
                                                         score_gradients)
from components.image_evaluator.audit.corruptions import CORRUPTIONS, SEVERITIES

# Eval images corrupted: every cell and FGSM is a pass over them (the clean pass is the
# audit's own prediction of every eval image).
EXAMPLES = 256
# Larger images cost more a pass: above FULL_SIZE px, fewer images, in proportion to
# the pixels, but never fewer than MIN_EXAMPLES (224 px: 64 images).
FULL_SIZE = 112
MIN_EXAMPLES = 64
# In [0, 255] pixel units: 2/255 of the range, a perturbation no one sees.
FGSM_EPSILON = 2.0


def examples_for(size: int) -> int:
    """How many images the robustness check corrupts at the model's size."""
    return int(max(MIN_EXAMPLES, min(EXAMPLES, EXAMPLES * (FULL_SIZE / size) ** 2)))


def accuracy(probabilities: np.ndarray, labels: np.ndarray) -> float:
    """Share of argmax predictions equal to the labels (0 for no examples)."""
    return float(np.mean(probabilities.argmax(axis=1) == labels)) if len(labels) else 0.0


def fgsm(classifier: Classifier, pixels: np.ndarray, labels: np.ndarray,
         epsilon: float) -> np.ndarray:
    """The FGSM images: pixels + epsilon * sign(d cross-entropy / d pixels), clipped."""
    adversarial = []
    for i in range(0, len(pixels), GRADIENT_BATCH):
        batch = slice(i, i + GRADIENT_BATCH)
        # Cross-entropy is -log p[label]: its gradient is minus the log-probability's.
        gradient = -score_gradients(classifier, pixels[batch], labels[batch])
        adversarial.append(np.clip(pixels[batch] + epsilon * np.sign(gradient), 0.0, 255.0))
    return np.concatenate(adversarial).astype(np.float32)


def robustness(classifier: Classifier, pixels: np.ndarray, labels: np.ndarray,
               epsilon: float = FGSM_EPSILON, *, clean: Optional[np.ndarray] = None) -> dict:
    """audit.json's "robustness": accuracies clean, per corruption and severity, FGSM.

    `clean`: the probabilities of `pixels` as they are, when the caller has them
    (the audit predicts every eval image first), so they are not predicted again.
    """
    if clean is not None and len(clean) != len(labels):
        raise ValueError(f"{len(clean)} clean predictions for {len(labels)} images")
    cells: Dict[str, Dict[str, float]] = {}
    for name, corrupt in CORRUPTIONS.items():
        cells[name] = {str(s): accuracy(predict(classifier, corrupt(pixels, s)), labels)
                       for s in SEVERITIES}
    values = [v for by_severity in cells.values() for v in by_severity.values()]
    attacked = predict(classifier, fgsm(classifier, pixels, labels, epsilon))
    return {"examples": int(len(labels)),
            "clean": accuracy(predict(classifier, pixels) if clean is None else clean, labels),
            "corruptions": cells, "mean": float(np.mean(values)),
            "fgsm": {"epsilon": float(epsilon), "accuracy": accuracy(attacked, labels)}}
