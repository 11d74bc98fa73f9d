"""Warm start: weights saved beside a model, the decision, and loading with a new head."""
import os

import numpy as np
import pytest
import tf_keras as keras

from modules.training import warm_start

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


# --- The compiled pipelines' base model: PushedWarmStart's copy of the served version ---

def _pushed_base(tmp_path, pushed: bool) -> str:
    """FnArgs.base_model as the Trainer gets it from PushedWarmStart's output: with
    `pushed`, version 17 was pushed from a model saved like _saved's; else nothing was."""
    from components.image_pusher.versions import publish
    from components.pushed_warm_start.served_weights import fill, served_origin
    serving_dir = str(tmp_path / "serving" / "m")
    if pushed:
        _, serving = _saved(tmp_path, ["a", "b"])
        os.makedirs(serving)  # the SavedModel, as far as a push looks at it
        (tmp_path / "model" / "Format-Serving" / "saved_model.pb").write_bytes(b"graph")
        publish(serving, serving_dir, 17, source_uri=str(tmp_path / "model"))
    out = tmp_path / "pushed_warm_start" / "model"
    fill(served_origin(serving_dir), str(out))
    return str(out / "Format-Serving")


def _decision(base_model: str, labels):
    """starting_point's decision and schedule, with warm start on at an eighth."""
    import types
    from tfx.components.trainer.fn_args_utils import FnArgs
    from modules.schedule import Schedule
    from modules.training.starting_point import warm_start_decision
    params = types.SimpleNamespace(warm_start=True, warm_start_share=0.125, train_steps=None)
    return warm_start_decision(FnArgs(base_model=base_model), params,
                               warm_start.describe("cnn", None, SHAPE, labels),
                               Schedule(epochs=16, steps_per_epoch=4, validation_steps=1))


def test_an_empty_pushed_base_trains_from_scratch_saying_why(tmp_path):
    from modules.training.starting_point import warm_start_record
    decision, schedule = _decision(_pushed_base(tmp_path, pushed=False), ["a", "b"])
    assert not decision.warm and decision.reason == "nothing pushed yet"
    assert schedule.epochs == 16
    assert warm_start_record(None, decision, 16, 16) == {"from": None,
                                                         "reason": "nothing pushed yet"}


def test_the_served_version_starts_the_run_and_the_record_names_it(tmp_path):
    from modules.training.starting_point import warm_start_record
    base_model = _pushed_base(tmp_path, pushed=True)
    decision, schedule = _decision(base_model, ["a", "b", "c"])
    assert decision.warm and decision.new_head and decision.version == 17
    assert "a new head over version 17's weights" in decision.reason
    assert schedule.epochs == 2  # an eighth of 16
    record = warm_start_record(_net(3), decision, schedule.epochs, 16)
    assert record["version"] == 17 and record["layers_loaded"] == 2
    assert record["from"] == os.path.dirname(base_model)


def test_a_served_version_of_another_network_is_named_in_the_reason(tmp_path):
    base_model = _pushed_base(tmp_path, pushed=True)
    decision = warm_start.decide(base_model, warm_start.describe("photo", None, SHAPE, ["a"]))
    assert not decision.warm and decision.version == 17
    assert decision.reason.startswith("version 17's network was cnn")


def test_a_local_base_names_no_version(tmp_path):
    from modules.training.starting_point import warm_start_record
    _, serving = _saved(tmp_path, ["a", "b"])
    decision = warm_start.decide(serving, warm_start.describe("cnn", None, SHAPE, ["a", "b"]))
    assert decision.warm and decision.version is None
    assert "version" not in warm_start_record(_net(2), decision, 1, 8)
