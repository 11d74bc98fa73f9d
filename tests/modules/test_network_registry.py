"""The registry is the one place to add a network: a new family registered there alone
is planned, built, trained and searched; a network without plan defaults is refused."""
import dataclasses

import keras_tuner as kt
import numpy as np
import pytest

from modules import autograph_rules, network_registry
from modules.network_registry import (PLANNED_SETTINGS, Network, PlanDefaults, Search,
                                      SideRule, SmallSetRule)
from modules.networks import space
from modules.networks.keras_model import build_model, compile_model
from pipeline.planning.plan import plan_lines
from pipeline.planning.resolve import resolve_plan
from settings.config import PipelineConfig

HIDDEN = 32  # the mlp's hidden units at width 1


def build_mlp(input_shape, num_classes, arch):
    """A family neither cnn nor photo: Flatten, one hidden Dense layer, an optional dropout."""
    import tf_keras as keras
    inputs = keras.Input(input_shape)
    x = keras.layers.Flatten()(inputs)
    x = keras.layers.Dense(int(HIDDEN * arch.width), activation="relu", name="hidden")(x)
    if arch.dropout:
        x = keras.layers.Dropout(arch.dropout)(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32",
                                 name="probabilities")(x)
    return keras.Model(inputs, outputs)


# Every value differs from the cnn's and the photo model's where it can, so a plan that
# read anything but this entry would show it.
MLP = Network(
    "mlp", "a tiny multi-layer perceptron (tests/modules/test_network_registry.py)",
    builder="tests.modules.test_network_registry:build_mlp",
    plan=PlanDefaults(
        {**network_registry.CNN_PLAN.settings,
         "learning_rate": (3e-3, "the mlp's rate"),
         "label_smoothing": (0.05, "the mlp's smoothing"),
         "augment_crop": (1, "the mlp's shift"),
         "augment_rotate": (0.0, "no warp for the mlp"),
         "accuracy_threshold": (0.5, "the mlp's bar")},
        SideRule({"cpu": 24, "gpu": 40, "tpu": 40}, 8,
                 why="{model} on {hardware}: {size} px (at most {cap}; data's {side} px)"),
        small_set=SmallSetRule(10_000, 0.25, small_why="{width:g}: {train:,} at most "
                               "{max_train:,}", large_why="none: over {max_train:,}")),
    search=Search(("width", "dropout"), augment=True, dropout_layer=True))


@pytest.mark.integration  # the bundled digits' headers, a real Keras build and fit: seconds
def test_a_network_added_in_the_registry_alone_is_planned_built_trained_and_searched(
        monkeypatch):
    monkeypatch.setitem(network_registry.NETWORKS, "mlp", MLP)
    plan, _ = resolve_plan(PipelineConfig.from_values(model="mlp", tune=True), "cpu", 8 << 30)
    values, reasons = plan.to_json()["values"], plan.reasons
    assert (values["model"], values["image_size"], values["channels"]) == ("mlp", 24, 1)
    assert reasons["image_size"] == "mlp on CPU: 24 px (at most 24; data's 28 px)"
    assert (values["learning_rate"], values["label_smoothing"], values["augment_crop"],
            values["accuracy_threshold"]) == (3e-3, 0.05, 1, 0.5)
    assert reasons["learning_rate"] == "the mlp's rate"
    assert values["model_width"] == 0.25 and reasons["model_width"].startswith("0.25: ")
    assert any("width, dropout, augment strength" in line for line in plan_lines(plan))

    params = plan.trainer_params()
    model = build_model(params, (24, 24, 1), 10)  # as the Trainer's new_model does
    assert model.get_layer("hidden").units == HIDDEN // 4
    compile_model(model, params.optimizer, params.learning_rate, params.steps_per_execution,
                  params.label_smoothing)
    rng = np.random.default_rng(0)
    images = rng.normal(size=(8, 24, 24, 1)).astype("float32")
    labels = np.eye(10, dtype="float32")[rng.integers(0, 10, 8)]
    autograph_rules.install()  # as the Trainer does: tracing then skips tf_keras' internals
    history = model.fit(images, labels, batch_size=8, epochs=1, verbose=0)
    assert int(model.optimizer.iterations) == 1 and np.isfinite(history.history["loss"][0])

    hp = kt.HyperParameters()
    space.declare(hp, params, 24)
    assert [p.name for p in hp.space] == ["learning_rate", "width", "dropout",
                                          "augment_strength"]
    assert hp.get("learning_rate") == 3e-3  # the plan's trial comes first
    sampled = {p.name: p.random_sample(seed=1) for p in hp.space}
    trial = space.apply(params, {**sampled, "width": 1.5, "dropout": 0.25})
    assert build_model(trial, (24, 24, 1), 10).get_layer("hidden").units == HIDDEN * 3 // 2
    assert space.weights_key(trial) == {"width": 1.5, "depth": 0, "image_size": None,
                                        "dropout_layer": True}
    assert space.largest(params, 24) == {"width": max(space.WIDTHS)}


def test_a_network_without_plan_defaults_is_refused_where_it_is_registered():
    side = network_registry.PHOTO_PLAN.side
    with pytest.raises(TypeError, match="plan"):
        Network("bare", "no plan", builder="m:f", search=Search())
    partial = PlanDefaults({"learning_rate": (1e-3, "a rate")}, side)
    with pytest.raises(ValueError, match="'bare' .*lack early_stopping_patience"):
        Network("bare", "half a plan", builder="m:f", plan=partial, search=Search())
    with pytest.raises(ValueError, match="a builder or a backbone"):
        dataclasses.replace(MLP, builder=None)


@pytest.mark.parametrize("name", sorted(network_registry.NETWORKS))
def test_every_network_plans_each_setting_on_each_hardware_and_searches_known_shapes(name):
    network = network_registry.NETWORKS[name]
    assert set(network.plan.settings_for(fine_tunes=True)) == set(PLANNED_SETTINGS)
    assert set(network.plan.side.cap) == {"cpu", "gpu", "tpu"}
    assert set(network.search.shape) <= set(space.ARCHITECTURE_KEYS) - {"unfreeze"}
    assert network.search.fine_tune == (network.backbone is not None)
