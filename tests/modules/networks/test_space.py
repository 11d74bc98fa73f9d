"""The search space per model, and how a trial's values reach the Trainer and the model."""
import dataclasses
import json

import keras_tuner as kt
import pytest

from modules.networks.keras_model import build_model
from modules.networks import space
from tests.support.tuning_params import PARAMS


def _space(params, side=28):
    hp = kt.HyperParameters()
    space.declare(hp, params, side)
    return {p.name: p for p in hp.space}


@pytest.mark.parametrize("planned, sides", [(128, [128, 96, 64]), (28, [28]), (48, [48, 32]),
                                            (40, [40, 32])])
def test_sides_are_the_planned_side_or_smaller_multiples_of_8(planned, sides):
    assert space.sides(planned) == sides


def test_built_in_models_search_their_shape_and_training():
    names = set(_space(PARAMS, side=128))
    assert names == {"learning_rate", "width", "depth", "dropout", "image_size",
                     "augment_strength"}
    assert "image_size" not in _space(PARAMS, side=28)  # no smaller side worth trying


def test_backbones_search_both_phases_and_how_much_opens():
    backbone = dataclasses.replace(PARAMS, model="mobilenet_v2", weights="imagenet",
                                   head_share=0.33, fine_tune_lr_factor=0.1)
    assert set(_space(backbone)) == {"learning_rate", "fine_tune_lr_factor", "unfreeze"}
    scratch = dataclasses.replace(backbone, weights=None)
    assert set(_space(scratch)) == {"learning_rate"}


def test_the_largest_model_is_the_widest_and_deepest_the_space_declares():
    hp = kt.HyperParameters()
    space.declare(hp, PARAMS, 128)
    declared = {p.name: p for p in hp.space}
    assert space.largest(PARAMS, 128) == {"width": max(declared["width"].values),
                                           "depth": declared["depth"].max_value}
    backbone = dataclasses.replace(PARAMS, model="mobilenet_v2", weights="imagenet")
    assert space.largest(backbone, 128) == {}


def test_the_learning_rate_is_searched_around_the_planned_one():
    lr = _space(PARAMS)["learning_rate"]
    assert lr.min_value == pytest.approx(1e-3 / space.LR_SPAN)
    assert lr.max_value == pytest.approx(1e-3 * space.LR_SPAN)


def test_no_augmentation_strength_when_the_plan_augments_nothing():
    plain = dataclasses.replace(PARAMS, augment_crop=0, augment_scale=0.0, augment_color=0.0)
    assert "augment_strength" not in _space(plain)


def test_apply_sets_training_values_and_keeps_all_for_the_model():
    tuned = space.apply(PARAMS, {"learning_rate": 3e-4, "augment_strength": 0.5,
                                 "width": 1.5, "depth": 1})
    assert tuned.learning_rate == 3e-4
    assert tuned.augment_color == pytest.approx(0.1)
    assert tuned.augment_crop == 1
    assert tuned.augment_scale == pytest.approx(1 - 0.75 * 0.5)  # drops half as much area
    assert json.loads(tuned.hyperparameters)["width"] == 1.5
    assert space.architecture(tuned) == space.Architecture(width=1.5, depth=1)
    assert space.architecture(PARAMS) == space.Architecture()


def test_strength_zero_turns_augmentation_off_and_a_crop_keeps_some_area():
    off = space.apply(PARAMS, {"augment_strength": 0.0})
    assert (off.augment_color, off.augment_crop, off.augment_scale) == (0.0, 0, 0.0)
    assert space.apply(PARAMS, {"augment_strength": 1.5}).augment_scale == 0.05


def _convs(model):
    return [layer for layer in model.layers if "conv" in type(layer).__name__.lower()]


def test_the_cnn_is_built_wider_deeper_and_smaller_as_tuned():
    plain = build_model(PARAMS, (28, 28, 1), 10)
    tuned = build_model(space.apply(PARAMS, {"width": 0.5, "depth": 1, "dropout": 0.1,
                                             "image_size": 20}), (28, 28, 1), 10)
    assert [c.filters for c in _convs(plain)] == [32, 64]
    assert [c.filters for c in _convs(tuned)] == [16, 32, 32]
    assert tuned.get_layer("tuned_resize").output_shape == (None, 20, 20, 1)
    assert tuned.input_shape == plain.input_shape == (None, 28, 28, 1)  # serving unchanged
    assert [layer.rate for layer in tuned.layers if hasattr(layer, "rate")][-1] == 0.1


@pytest.mark.parametrize("model", ["photo", "resnet"])
def test_photo_models_scale_every_width_and_add_blocks(model):
    params = dataclasses.replace(PARAMS, model=model)
    plain = build_model(params, (32, 32, 3), 5)
    tuned = build_model(space.apply(params, {"width": 1.5, "depth": 1}), (32, 32, 3), 5)
    assert len(_convs(tuned)) > len(_convs(plain))
    assert max(c.filters for c in _convs(tuned) if hasattr(c, "filters") and c.filters) > \
        max(c.filters for c in _convs(plain) if hasattr(c, "filters") and c.filters)


def test_the_searched_names_are_the_declared_ones():
    backbone = dataclasses.replace(PARAMS, model="mobilenet_v2", weights="imagenet",
                                   head_share=0.33, fine_tune_lr_factor=0.1)
    for params, side in ((PARAMS, 128), (PARAMS, 28), (backbone, 96)):
        assert space.searched(params, side) == list(_space(params, side))


def test_warm_start_compares_only_what_changes_the_weights():
    assert space.weights_key(PARAMS) is None
    tuned = space.apply(PARAMS, {"width": 1.5, "depth": 1, "dropout": 0.3, "learning_rate": 1e-3})
    assert space.weights_key(tuned) == {"width": 1.5, "depth": 1, "image_size": None}
    resnet = space.apply(dataclasses.replace(PARAMS, model="resnet"), {"dropout": 0.3})
    assert space.weights_key(resnet)["dropout_layer"] is True
    module = dataclasses.replace(PARAMS, model="module", module_source="x", module_file="m.py")
    assert space.weights_key(space.apply(module, {"filters": 8})) == {"filters": 8}
    # A planned width changes the weights too, and a search's width wins over it.
    half = dataclasses.replace(PARAMS, model_width=0.5)
    assert space.weights_key(half) == {"width": 0.5, "depth": 0, "image_size": None}
    assert space.architecture(space.apply(half, {"width": 1.5})).width == 1.5
