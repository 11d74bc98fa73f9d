"""Robustness: accuracies per corruption and severity, and FGSM, on a tiny trained model."""
import numpy as np
import pytest

from components.image_evaluator.audit.classifier import predict
from components.image_evaluator.audit.corruptions import CORRUPTIONS
from components.image_evaluator.audit.robustness import accuracy, examples_for, fgsm, robustness

pytestmark = pytest.mark.integration  # Keras trains a tiny model


def test_fgsm_lowers_the_accuracy_of_a_trained_model(tiny):
    classifier, _, pixels, labels = tiny
    clean = accuracy(predict(classifier, pixels), labels)
    attacked = fgsm(classifier, pixels, labels, epsilon=40.0)
    assert clean >= 0.9 and np.abs(attacked - pixels).max() <= 40.0 + 1e-4
    assert accuracy(predict(classifier, attacked), labels) < clean - 0.2


def test_the_report_has_every_cell_and_their_mean(tiny):
    classifier, _, pixels, labels = tiny
    result = robustness(classifier, pixels, labels)
    assert result["examples"] == 64 and result["fgsm"]["epsilon"] == 2.0
    assert set(result["corruptions"]) == set(CORRUPTIONS)
    cells = [v for c in result["corruptions"].values() for v in c.values()]
    assert len(cells) == 15 and result["mean"] == pytest.approx(np.mean(cells))
    assert set(result["corruptions"]["jpeg"]) == {"1", "2", "3"}


def test_larger_images_are_fewer():
    assert examples_for(28) == 256 and examples_for(112) == 256
    assert examples_for(224) == 64 and 64 < examples_for(160) < 256


def test_given_clean_probabilities_are_used_instead_of_predicting_again(tiny):
    classifier, _, pixels, labels = tiny
    predicted = predict(classifier, pixels)
    assert robustness(classifier, pixels, labels, clean=predicted)["clean"] == pytest.approx(
        robustness(classifier, pixels, labels)["clean"])
    wrong = np.eye(predicted.shape[1])[(labels + 1) % predicted.shape[1]]
    assert robustness(classifier, pixels, labels, clean=wrong)["clean"] == 0.0
