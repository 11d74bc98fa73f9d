"""Warm start: weights saved beside a model, the decision, and loading with a new head."""
import os

import numpy as np
import pytest
import tf_keras as keras

from modules.continuous import warm_start

SHAPE = [8, 8, 1]


def _net(classes: int) -> keras.Model:
    inputs = keras.Input(SHAPE)
    x = keras.layers.Conv2D(4, 3)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(classes)(x))


def _saved(tmp_path, labels):
    keras.utils.set_random_seed(1)
    model = _net(len(labels))
    serving = tmp_path / "model" / "Format-Serving"
    warm_start.save(model, warm_start.describe("cnn", None, SHAPE, labels), str(serving))
    return model, str(serving)


def test_same_network_and_classes_loads_every_layer(tmp_path):
    old, serving = _saved(tmp_path, ["a", "b"])
    decision = warm_start.decide(serving, warm_start.describe("cnn", None, SHAPE, ["a", "b"]))
    assert decision.warm and not decision.new_head
    keras.utils.set_random_seed(2)
    new = _net(2)
    assert warm_start.load(new, decision) == 3  # conv, batch norm, dense
    for a, b in zip(old.get_weights(), new.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_new_class_gets_a_new_head_over_the_old_weights(tmp_path):
    old, serving = _saved(tmp_path, ["a", "b"])
    decision = warm_start.decide(serving,
                                 warm_start.describe("cnn", None, SHAPE, ["a", "b", "c"]))
    assert decision.warm and decision.new_head and "new classes ['c']" in decision.reason
    new = _net(3)
    fresh_head = new.layers[-1].get_weights()[0].copy()
    assert warm_start.load(new, decision) == 2
    np.testing.assert_array_equal(new.layers[1].get_weights()[0], old.layers[1].get_weights()[0])
    np.testing.assert_array_equal(new.layers[-1].get_weights()[0], fresh_head)


def test_reordered_classes_never_keep_the_old_head(tmp_path):
    _, serving = _saved(tmp_path, ["a", "b"])
    decision = warm_start.decide(serving, warm_start.describe("cnn", None, SHAPE, ["b", "a"]))
    assert decision.new_head and "classes changed" in decision.reason


@pytest.mark.parametrize("change, words", [
    (dict(model_name="photo"), "network was cnn"),
    (dict(shape=[16, 16, 1]), "input shape"),
    (dict(module="abc"), "module file")])
def test_another_network_or_input_starts_from_scratch(tmp_path, change, words):
    _, serving = _saved(tmp_path, ["a", "b"])
    description = warm_start.describe(change.get("model_name", "cnn"), change.get("module"),
                                      change.get("shape", SHAPE), ["a", "b"])
    decision = warm_start.decide(serving, description)
    assert not decision.warm and words in decision.reason


def test_no_base_model_or_no_saved_weights(tmp_path):
    description = warm_start.describe("cnn", None, SHAPE, ["a"])
    assert warm_start.decide(None, description).reason == "no earlier blessed model"
    older = tmp_path / "older" / "Format-Serving"
    os.makedirs(older)
    assert "kept no weights" in warm_start.decide(str(older), description).reason
