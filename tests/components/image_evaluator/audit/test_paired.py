"""The candidate against the baseline on the same images: the 2x2 table and its interval."""
import numpy as np
import pytest

from core.intervals import paired_difference
from components.image_evaluator.audit.paired import baseline_comparison, compare


def test_the_table_counts_agreement_and_the_interval_is_newcombes():
    candidate = np.array([1, 1, 1, 1, 0, 0, 1, 0], bool)
    baseline = np.array([1, 1, 0, 0, 1, 0, 1, 0], bool)
    found = compare(candidate, baseline)
    assert (found["both"], found["candidate_only"], found["baseline_only"],
            found["neither"]) == (3, 2, 1, 2)
    assert found["examples"] == 8 and found["difference"] == pytest.approx(1 / 8)
    assert found["candidate_accuracy"] == 5 / 8 and found["baseline_accuracy"] == 4 / 8
    assert found["interval"] == list(paired_difference(3, 2, 1, 2))
    assert found["confidence"] == 0.95 and "Newcombe" in found["method"]


def test_answers_on_different_images_are_refused():
    with pytest.raises(ValueError, match="same images"):
        compare(np.ones(3, bool), np.ones(4, bool))


@pytest.mark.integration
def test_the_baseline_is_predicted_on_the_same_images(exported_model):
    from components.image_evaluator.audit.classifier import load_classifier, predict_encoded
    from components.image_evaluator.audit.examples import read_eval_examples
    examples = read_eval_examples(exported_model.examples_uri)
    right = predict_encoded(load_classifier(exported_model.model_dir),
                            examples.encoded).argmax(axis=1) == examples.labels
    # The candidate as its own baseline: every image agrees, the difference is 0.
    same = baseline_comparison(exported_model.model_dir, examples.encoded, examples.labels,
                               right)
    assert same["examples"] == len(examples.labels) and same["difference"] == 0
    assert same["candidate_only"] == same["baseline_only"] == 0
    assert same["both"] == int(right.sum())
    assert baseline_comparison(None, examples.encoded, examples.labels, right) is None
    missing = baseline_comparison("/no/such/model", examples.encoded, examples.labels, right)
    assert missing["examples"] is None and "could not be scored" in missing["reason"]
