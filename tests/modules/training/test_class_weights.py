"""Class weights for an imbalanced train split: the rule, and Keras taking them."""
import json

import numpy as np
import pytest

from modules.training import class_weights


def test_no_weights_when_the_classes_are_within_the_ratio():
    assert class_weights.class_weights([100, 40, 34], 3.0) is None
    assert class_weights.class_weights([100, 10], 0.0) is None  # 0: never
    assert class_weights.class_weights(None, 3.0) is None


def test_balanced_weights_beyond_the_ratio_give_every_class_equal_total_weight():
    counts = [300, 30, 0, 70]
    weights = class_weights.class_weights(counts, 3.0)
    assert sorted(weights) == [0, 1, 2, 3]  # Keras wants every label
    totals = {label: weights[label] * n for label, n in enumerate(counts) if n}
    assert max(totals.values()) == pytest.approx(min(totals.values()))
    assert weights[2] == 1.0 and weights[1] > weights[3] > weights[0]


def test_train_counts_follow_label_order(tmp_path):
    report = {"per_class": {"train": {"b": 5, "a": 7}, "eval": {"a": 1, "b": 1}}}
    (tmp_path / "ingest_report.json").write_text(json.dumps(report))
    assert class_weights.train_counts(str(tmp_path), ["a", "b", "c"]) == [7, 5, 0]
    assert class_weights.train_counts(str(tmp_path / "none"), ["a"]) is None


def test_the_log_line_says_what_was_found_and_done():
    line = class_weights.describe([90, 10], class_weights.class_weights([90, 10], 3.0), 3.0)
    assert "largest class 90" in line and "smallest 10" in line and "n/(k*n_c)" in line
    assert "none" in class_weights.describe([20, 10], None, 3.0)


@pytest.mark.integration
def test_keras_weighs_the_one_hot_batches_the_trainer_feeds_it():
    import tensorflow as tf
    import tf_keras as keras
    from modules.networks.keras_model import compile_model
    images = np.random.default_rng(0).random((32, 4), np.float32)
    labels = tf.one_hot(np.r_[np.zeros(28, int), np.ones(4, int)], 2)
    data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(8)
    losses = []
    for weights in (None, class_weights.class_weights([28, 4], 3.0)):
        keras.utils.set_random_seed(1)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, "softmax")])
        compile_model(model, "adam", 0.0, 1, 0.0)
        losses.append(model.fit(data, class_weight=weights, verbose=0).history["loss"][0])
    assert losses[0] != pytest.approx(losses[1])
