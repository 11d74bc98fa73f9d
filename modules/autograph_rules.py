"""Keep AutoGraph out of tf_keras and tensorflow_transform internals.

AutoGraph rewrites Python control flow into graph ops, function by function,
recursively; TensorFlow exempts its own packages and `keras` from it
(tensorflow/python/autograph/core/config.py, CONVERSION_RULES). Under
TF_USE_LEGACY_KERAS=1 Keras is the `tf_keras` package, which that list does
not name, so every tf_keras function a model touches is parsed and transpiled
again on first trace: thousands of conversions for our CNN, most of a
Trainer's first epoch (measured: docs/performance.md). tensorflow_transform is
graph-building code by design (it also runs in TF1 graphs) and adds more
conversions. Both are written to run without AutoGraph, exactly as `keras` is;
user code (our layers, preprocessing_fn) is still converted.

TensorFlow's own converter tests extend the rules the same way
(autograph/core/converter_testing.py).
"""
from tensorflow.python.autograph.core import config

SKIPPED = ("tf_keras", "tensorflow_transform")


def install() -> None:
    """Adds DoNotConvert rules for SKIPPED, once per process; cheap and idempotent."""
    present = {rule._prefix for rule in config.CONVERSION_RULES
               if isinstance(rule, config.DoNotConvert)}
    missing = tuple(config.DoNotConvert(name) for name in SKIPPED if name not in present)
    config.CONVERSION_RULES = missing + tuple(config.CONVERSION_RULES)
