"""Confident learning (cleanlab): flipped labels are the suspects, lowest self-confidence first."""
import numpy as np
import pytest

from components.image_evaluator.audit.suspects import find_suspects


def _noisy(count=200, classes=4, flipped=10, seed=0):
    """Probabilities of a good model, and labels with `flipped` of them changed."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, classes, count)
    logits = rng.normal(0, 1, (count, classes))
    logits[np.arange(count), truth] += 4.0
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = truth.copy()
    flips = rng.choice(count, flipped, replace=False)
    labels[flips] = (truth[flips] + 1) % classes
    return probabilities, labels, set(flips.tolist()), truth


def test_flipped_labels_are_flagged_and_ranked_first():
    probabilities, labels, flips, truth = _noisy()
    found = find_suspects(probabilities, labels)
    # A flip whose true class is less probable than that class's threshold is missed
    # (confident learning's price for its precision): most are found, and rank first.
    assert len(flips & set(found.order)) >= 7 and set(found.order[:7]) <= flips
    assert found.scores == sorted(found.scores)  # self-confidence, ascending
    assert found.scores == [probabilities[i, labels[i]] for i in found.order]
    assert all(found.predicted[k] == truth[i] for k, i in enumerate(found.order[:7]))


def test_an_example_confident_in_no_class_is_not_flagged():
    # Thresholds are 0.85 (class 0) and 0.8 (class 1): example 2 reaches neither.
    probabilities = np.array([[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.2, 0.8]])
    assert find_suspects(probabilities, np.array([0, 0, 0, 1])).order == []


def test_an_example_the_model_predicts_as_labelled_is_never_flagged():
    # Class 1's threshold is low, so example 0 is confidently 1 too; argmax keeps it.
    probabilities = np.array([[0.6, 0.4], [0.1, 0.9], [0.9, 0.1], [0.8, 0.2]])
    assert find_suspects(probabilities, np.array([0, 1, 0, 1])).order == [3]


def test_a_tie_with_the_given_label_is_not_flagged():
    # Example 0 is confidently class 0 only (thresholds 0.5 and 0.65), but the model's
    # top classes tie and one of them is the given label: cleanlab keeps it.
    probabilities = np.array([[0.5, 0.5], [0.4, 0.6], [0.2, 0.8], [0.6, 0.4]])
    assert find_suspects(probabilities, np.array([1, 0, 1, 0])).order == []


def test_a_class_no_image_is_labelled_or_predicted_as_is_allowed():
    probabilities = np.array([[0.2, 0.8, 0.0], [0.7, 0.3, 0.0], [0.9, 0.1, 0.0]])
    found = find_suspects(probabilities, np.array([0, 1, 0]))
    assert found.order == [0, 1] and found.predicted == [1, 0]


def test_an_empty_split_has_no_suspects():
    assert find_suspects(np.zeros((0, 3)), np.zeros(0, np.int64)).order == []


@pytest.mark.integration  # Keras trains a small model
def test_a_small_trained_model_ranks_the_flipped_eval_labels_on_top():
    import tf_keras as keras
    keras.utils.set_random_seed(1)
    rng = np.random.default_rng(1)
    centers = rng.normal(0, 3, (3, 8))

    def blobs(count):
        y = rng.integers(0, 3, count)
        return (centers[y] + rng.normal(0, 1, (count, 8))).astype(np.float32), y
    (x_train, y_train), (x_eval, y_eval) = blobs(300), blobs(150)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    model.compile(keras.optimizers.Adam(0.05), "sparse_categorical_crossentropy")
    model.fit(x_train, y_train, epochs=5, batch_size=32, verbose=0)
    flips = rng.choice(150, 8, replace=False)
    given = y_eval.copy()
    given[flips] = (y_eval[flips] + 1) % 3
    found = find_suspects(model(x_eval).numpy(), given)
    assert set(found.order[:8]) == set(flips.tolist())
