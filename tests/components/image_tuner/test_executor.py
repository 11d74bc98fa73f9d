"""The Tuner's executor on real transformed images: every trial recorded, the best handed on."""
import dataclasses
import json
import os

import numpy as np
import pytest
from PIL import Image
from tfx.types import artifact_utils, standard_artifacts

from components.image_tuner.executor import Executor
from components.image_tuner.trials import (NoTrialError, read_best, read_choice,
                                          read_holdout_results, read_trials, tuning_summary)
from modules.tuning.choice import choose
from modules.tuning.settings import TuningParams
from tests.support.transformed import transformed_fixture
from tests.support.tuning_params import PARAMS

pytestmark = pytest.mark.integration  # real Keras trials, KerasTuner's oracle, TFX's executor

SETTINGS = TuningParams(trials=3, minutes=10.0, epoch_share=1.0, holdout_share=0.3,
                        max_examples=100, max_bytes=1 << 20, initial_points=2)


def _artifact(kind, uri, splits=None):
    artifact = kind()
    artifact.uri = uri
    if splits:
        artifact.split_names = artifact_utils.encode_split_names(splits)
    return artifact


def _run(transformed, tmp_path, settings=SETTINGS, params=PARAMS):
    for split in ("train", "eval"):
        os.rename(os.path.join(transformed.examples_dir, split),
                  os.path.join(transformed.examples_dir, f"Split-{split}"))
    outputs = {"best_hyperparameters": [_artifact(standard_artifacts.HyperParameters,
                                                  str(tmp_path / "best"))],
               "tuner_results": [_artifact(standard_artifacts.TunerResults,
                                           str(tmp_path / "results"))]}
    for artifacts in outputs.values():
        os.makedirs(artifacts[0].uri)
    inputs = {"examples": [_artifact(standard_artifacts.Examples, transformed.examples_dir,
                                     ["train", "eval"])],
              "transform_graph": [_artifact(standard_artifacts.TransformGraph,
                                            str(tmp_path / "tft"))]}
    executor = Executor(Executor.Context(tmp_dir=str(tmp_path / "tmp"), unique_id="1"))
    executor.Do(inputs, outputs, {
        "tuner_fn": "modules.tuning.search.tuner_fn",
        "custom_config": json.dumps({**params.to_custom_config(),
                                     **settings.to_custom_config()}),
        "train_args": json.dumps({"splits": ["train"]}),
        "eval_args": json.dumps({"splits": ["eval"]})})
    return str(tmp_path / "best"), str(tmp_path / "results")


@pytest.mark.parametrize("transformed", [1], indirect=True)
def test_every_trial_is_recorded_and_the_best_values_handed_on(transformed, tmp_path):
    params = dataclasses.replace(PARAMS, batch_size=4, epochs=4)
    settings = dataclasses.replace(SETTINGS, epoch_share=0.5)
    best, results = _run(transformed, tmp_path, settings, params)
    rows = read_trials(results)
    assert [row["trial_id"] for row in rows] == ["0", "1", "2"]
    assert all(row["status"] == "COMPLETED" and 0 <= row["score"] <= 1 for row in rows)
    # The plan's trial trains the Trainer's length; the others their share of it.
    assert [row["epochs_planned"] for row in rows] == [4, 2, 2]
    assert all(1 <= row["epochs_run"] <= row["epochs_planned"] for row in rows)
    assert rows[0]["plan"] and rows[0]["values"] == {}  # trial 0: the plan's own settings
    assert all(set(row["values"]) == {"learning_rate", "width", "depth", "dropout",
                                      "augment_strength"} for row in rows[1:])
    choice = read_choice(results)
    assert choice["plan_trial"] == "0" and choice["holdout_images"] >= 1
    assert choice["test"] == "mcnemar_exact_holm" and 0 <= choice["p_value"] <= 1
    # Every trial's per-image results, at the epoch of its score, and the choice made of them.
    held = read_holdout_results(results)
    assert list(held) == ["0", "1", "2"]
    assert all(len(correct) == choice["holdout_images"] for correct in held.values())
    assert [sum(held[row["trial_id"]]) / len(held["0"]) for row in rows] == pytest.approx(
        [row["score"] for row in rows], abs=1e-12)
    assert choose(held, "0") == choice
    winner = next(row for row in rows if row["trial_id"] == choice["trained"])
    assert read_best(best) == winner["values"]
    summary = tuning_summary(best, results, winner["values"])
    assert summary["trials"] == rows and summary["trained_with"] == winner["values"]
    assert summary["choice"] == choice
    assert os.path.exists(os.path.join(results, "tuner_results.json"))  # TFX's own, as well


def _two_shades(path, size=(8, 8), mode="L", seed=0):
    """A dark image for class c0 and a bright one for c1: a plan that trains learns them."""
    shade = 40 if path.parent.name == "c0" else 200
    pixels = np.random.default_rng(seed).integers(shade, shade + 16, size[::-1], np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels, "L").save(path)  # never two alike: ingestion drops duplicates
    return path


# A module file whose own space holds only learning rates too small to train with, and a
# model that starts wrong on every image (Transform centres the pixels: a bright image's
# mean is positive, and leans to c0), so a trial that does not train scores 0.
FROZEN_MODULE = '''
import tf_keras as keras
from modules.tuning.search import tuner_for


def tuner_fn(fn_args):
    return tuner_for(fn_args, lambda hp: hp.Float("learning_rate", 1e-9, 1e-8,
                                                  sampling="log"))


def build_model(input_shape, num_classes, params):
    inputs = keras.Input(input_shape)
    wrong = keras.initializers.Constant([[0.1, -0.1]])
    outputs = keras.layers.Dense(num_classes, activation="softmax", kernel_initializer=wrong)(
        keras.layers.GlobalAveragePooling2D()(inputs))
    return keras.Model(inputs, outputs)
'''


def test_a_search_whose_trials_all_lose_keeps_the_plans_settings(tmp_path):
    transformed = transformed_fixture(tmp_path, _two_shades, 1)
    params = dataclasses.replace(PARAMS, batch_size=4, epochs=8, max_epochs=8,
                                 learning_rate=0.3, model="module", module_file="frozen.py",
                                 module_source=FROZEN_MODULE, module_sha256="0" * 64)
    best, results = _run(transformed, tmp_path, params=params)
    rows = read_trials(results)
    assert len(rows) == 3 and rows[0]["plan"] and rows[0]["values"] == {}
    assert all(row["values"]["learning_rate"] < 1e-7 for row in rows[1:])
    choice = read_choice(results)
    assert choice["trained"] == "0" and choice["plan_won"]
    assert max(row["score"] for row in rows[1:]) < choice["plan_score"]
    assert all(rival["lost"] > rival["gained"] for rival in choice["rivals"])
    assert read_best(best) == {}  # the Trainer trains as it would without --tune


@pytest.mark.parametrize("transformed", [1], indirect=True)
def test_the_time_budget_stops_the_running_trial_and_starts_no_other(transformed, tmp_path):
    params = dataclasses.replace(PARAMS, batch_size=4, epochs=40, max_epochs=40)
    settings = dataclasses.replace(SETTINGS, minutes=1e-9, epoch_share=1.0)
    _, results = _run(transformed, tmp_path, settings, params)
    rows = read_trials(results)
    assert len(rows) == 1  # the first trial runs one whole epoch whatever the budget
    assert rows[0]["stopped"] == "time budget" and rows[0]["epochs_run"] == 2


MODULE_FILE = '''
import tf_keras as keras
from modules.tuning.search import tuner_for


def tuner_fn(fn_args):
    return tuner_for(fn_args, lambda hp: hp.Choice("filters", [4, 8]))


def build_model(input_shape, num_classes, params):
    filters = params.tuned_values.get("filters", 16)
    inputs = keras.Input(input_shape)
    x = keras.layers.Conv2D(filters, 3, activation="relu")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(num_classes, activation="softmax")(x))
'''


@pytest.mark.parametrize("transformed", [1], indirect=True)
def test_a_module_files_tuner_fn_searches_its_own_space(transformed, tmp_path):
    params = dataclasses.replace(PARAMS, batch_size=4, epochs=2, model="module",
                                 module_file="my_model.py", module_source=MODULE_FILE,
                                 module_sha256="0" * 64)
    best, results = _run(transformed, tmp_path, params=params)
    rows = read_trials(results)
    assert rows[0]["values"] == {}  # the plan's trial: build_model's own filters, 16
    assert sorted(row["values"]["filters"] for row in rows[1:]) == [4, 8]
    assert read_best(best).get("filters", 16) in (4, 8, 16)


@pytest.mark.parametrize("transformed", [1], indirect=True)
def test_a_model_that_never_builds_ends_the_search_naming_the_error(transformed, tmp_path):
    source = MODULE_FILE.replace('filters = params.tuned_values.get("filters", 16)',
                                 'raise ValueError("no such layer")').replace(
        'hp.Choice("filters", [4, 8])', 'hp.Float("rate", 0.0, 1.0)')  # endless values
    params = dataclasses.replace(PARAMS, batch_size=4, epochs=2, model="module",
                                 module_file="my_model.py", module_source=source,
                                 module_sha256="0" * 64)
    with pytest.raises(NoTrialError, match="completed none of its 3 trials: .*no such layer"):
        _run(transformed, tmp_path, dataclasses.replace(SETTINGS, trials=6), params)
