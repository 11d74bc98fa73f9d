"""AutoGraph leaves tf_keras and tensorflow_transform alone, and still converts our code."""
import numpy as np
import tensorflow_transform as tft
import tf_keras as keras
from tensorflow.python.autograph.core import config
from tensorflow.python.autograph.impl import conversion

from modules import autograph_rules, preprocessing, trainer  # noqa: F401 (installs)
from modules.networks import keras_model, small, summaries


def test_library_internals_are_not_converted():
    assert conversion.is_allowlisted(keras.layers.Dense.call)
    assert conversion.is_allowlisted(keras.Model.train_step)
    assert conversion.is_allowlisted(tft.mean)


def test_our_layers_and_preprocessing_are_still_converted():
    assert not conversion.is_allowlisted(summaries.ImageSummary.call)
    assert not conversion.is_allowlisted(preprocessing.preprocessing_fn)


def test_installing_twice_adds_each_rule_once():
    autograph_rules.install()
    autograph_rules.install()
    prefixes = [rule._prefix for rule in config.CONVERSION_RULES
                if isinstance(rule, config.DoNotConvert)]
    for name in autograph_rules.SKIPPED:
        assert prefixes.count(name) == 1


def test_a_keras_training_step_traces_with_few_conversions(monkeypatch):
    """Without the rules this converts hundreds of tf_keras functions; with them, 8 (ours, and
    the step)."""
    from tensorflow.python.autograph.impl import api
    converted = []
    original = api._convert_actual
    monkeypatch.setattr(api, "_convert_actual",
                        lambda entity, ctx: converted.append(entity) or original(entity, ctx))
    cnn = keras_model.compile_model(small.build_cnn((8, 8, 1), 3), "adam", 1e-3, 1)
    cnn.fit(np.zeros((4, 8, 8, 1)), np.eye(3)[[0, 1, 2, 0]], epochs=1, verbose=0)
    assert len(converted) < 100
