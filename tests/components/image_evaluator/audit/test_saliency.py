"""Saliency: integrated gradients and Grad-CAM give image-sized maps that vary."""
import numpy as np
import pytest
import tensorflow as tf

from components.image_evaluator.audit.classifier import Classifier
from components.image_evaluator.audit.saliency import (GRAD_CAM, INTEGRATED_GRADIENTS,
                                                       choose_images, integrated_gradients,
                                                       saliency_maps)

pytestmark = pytest.mark.integration  # Keras trains a tiny model


def test_misclassified_images_come_first():
    labels, predicted = np.array([0, 1, 1, 0, 1]), np.array([0, 0, 1, 1, 1])
    assert choose_images(labels, predicted, limit=3) == [1, 3, 0]


def test_integrated_gradients_map_the_image_and_vary(tiny):
    classifier, _, pixels, labels = tiny
    heat = integrated_gradients(classifier, pixels[0], int(labels[0]), steps=8)
    assert heat.shape == pixels.shape[1:3] and heat.std() > 0
    method, layer, maps = saliency_maps(classifier, pixels[:3], labels[:3])
    assert (method, layer, maps.shape) == (INTEGRATED_GRADIENTS, None, (3, 12, 12))
    assert maps.max() == pytest.approx(1.0)


def test_grad_cam_of_the_signature_is_resized_to_the_image(tiny):
    from modules.signatures import gradcam_layer, gradcam_signature
    _, model, pixels, labels = tiny
    assert gradcam_layer(model).name == "conv"
    signature = gradcam_signature(model, lambda p: p / 255.0)
    raw = signature(tf.constant(pixels[:4]), tf.constant(labels[:4], tf.int64))
    assert raw["heatmap"].shape == (4, 10, 10) and raw["layer"].numpy()[0] == b"conv"
    classifier = Classifier(lambda p: model(p / 255.0), 12, 1,
                            lambda p, c: signature(p, c))
    method, layer, maps = saliency_maps(classifier, pixels[:4], labels[:4])
    assert (method, layer, maps.shape) == (GRAD_CAM, "conv", (4, 12, 12))
    assert all(m.std() > 0 for m in maps)
