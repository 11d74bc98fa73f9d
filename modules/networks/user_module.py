"""A user's module file: the network of their own that the Trainer trains.

The contract (docs/models.md, "The contract"):

    def build_model(input_shape, num_classes, params) -> tf_keras.Model
    def augment(images, params) -> images          # optional

`build_model` gets (side, side, channels) and returns a model from float32
images, normalized per channel by Transform, to `num_classes` probabilities.
imagepipe wraps it between its summary layers, so the serving signatures,
TFLite, the Evaluator and the report treat it as one of its own.

The file's text travels in the Trainer's custom_config, so it runs where the
Trainer runs (here, KFP, Vertex) without a copy of the file, and editing it
changes the Trainer's cache key.
"""
import hashlib
import traceback
import types
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf
import tf_keras as keras

from core.storage import files
from modules.networks.summaries import (HISTOGRAM_SUMMARY, IMAGE_SUMMARY, HistogramSummary,
                                        ImageSummary)

# Plenty for a network definition; the text rides in the pipeline spec.
MAX_SOURCE_BYTES = 256 * 1024
# Row sums of softmax outputs, allowing for float16 compute.
_SUM_TOLERANCE = 1e-2


class ModuleFileError(ValueError):
    """The module file cannot be used; the message names the file (and line)."""


def read_source(path: str) -> str:
    """The file's text; ModuleFileError if missing, unreadable or too large."""
    try:
        data = files.read_head(path, MAX_SOURCE_BYTES + 1)
    except (tf.errors.OpError, OSError) as e:
        raise ModuleFileError(f"--module-file {path}: cannot be read "
                              f"({getattr(e, 'message', None) or e})") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise ModuleFileError(f"--module-file {path}: over {MAX_SOURCE_BYTES // 1024} KiB; "
                              "a module file defines a network, not data or weights")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModuleFileError(f"--module-file {path}: not UTF-8 text ({e.reason})") from None


def sha256(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _where(path: str, error: BaseException) -> str:
    """`path, line N` of the deepest frame of `error` in the user's file."""
    if isinstance(error, SyntaxError) and error.filename == path:
        return f"{path}, line {error.lineno}"
    lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
             if frame.filename == path]
    return f"{path}, line {lines[-1]}" if lines else path


def _fail(path: str, error: BaseException, doing: str) -> ModuleFileError:
    return ModuleFileError(f"--module-file {_where(path, error)}: {doing} raised "
                           f"{type(error).__name__}: {error}")


def load(source: str, path: str) -> types.ModuleType:
    """Runs the module text as a module named after nothing of ours; checks build_model."""
    module = types.ModuleType("imagepipe_user_module")
    module.__file__ = path
    try:
        exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 (the user's own code)
    except Exception as e:  # noqa: BLE001  (SyntaxError, ImportError, anything at import)
        raise _fail(path, e, "loading it") from None
    if not callable(getattr(module, "build_model", None)):
        raise ModuleFileError(f"--module-file {path}: defines no build_model(input_shape, "
                              "num_classes, params) function")
    augment = getattr(module, "augment", None)
    if augment is not None and not callable(augment):
        raise ModuleFileError(f"--module-file {path}: `augment` must be a function "
                              "augment(images, params)")
    return module


def _user_network(module, path: str, input_shape, num_classes: int, params) -> keras.Model:
    try:
        network = module.build_model(tuple(int(d) for d in input_shape), num_classes, params)
    except Exception as e:  # noqa: BLE001
        raise _fail(path, e, "build_model") from None
    if not isinstance(network, keras.Model):
        raise ModuleFileError(
            f"--module-file {path}: build_model returned {type(network).__module__}."
            f"{type(network).__name__}, not a tf_keras Model (import tf_keras as keras; "
            "Keras 3 models cannot be saved with TFX 1.16's signatures)")
    return network


def build(module, path: str, input_shape: Sequence[int], num_classes: int,
          params) -> keras.Model:
    """The user's network between imagepipe's summary layers, output checked.

    Raises ModuleFileError if build_model fails, returns something else than
    a Keras model, or a model whose output is not [batch, num_classes].
    """
    network = _user_network(module, path, input_shape, num_classes, params)
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = ImageSummary(name=IMAGE_SUMMARY)(inputs)
    try:
        y = network(x)
    except Exception as e:  # noqa: BLE001
        raise _fail(path, e, f"calling the model on {tuple(x.shape)} images") from None
    if not hasattr(y, "shape") or list(y.shape)[1:] != [num_classes]:
        shape = tuple(y.shape) if hasattr(y, "shape") else type(y).__name__
        raise ModuleFileError(
            f"--module-file {path}: build_model's model outputs {shape}; expected "
            f"(None, {num_classes}): one probability per class of the data's {num_classes}")
    y = keras.layers.Activation("linear", dtype="float32", name="probabilities")(y)
    outputs = HistogramSummary(name=HISTOGRAM_SUMMARY, dtype="float32")(y)
    return keras.Model(inputs, outputs, name="module_model")


def check_probabilities(model: keras.Model, path: str, seed: int = 0) -> None:
    """The outputs are probabilities (softmax): what accuracy, TFMA and serving assume."""
    shape = (2, *model.input_shape[1:])
    out = model(np.random.default_rng(seed).normal(size=shape).astype(np.float32)).numpy()
    sums = out.sum(axis=-1)
    if (out < 0).any() or not np.allclose(sums, 1.0, atol=_SUM_TOLERANCE):
        raise ModuleFileError(
            f"--module-file {path}: build_model's outputs are not probabilities (row sums "
            f"{np.round(sums, 3).tolist()}); end the model with a softmax, e.g. "
            "keras.layers.Dense(num_classes, activation='softmax', dtype='float32')")


def augment_fn(module, params) -> Optional[callable]:
    """The module's augment(images, params) bound to params, or None."""
    augment = getattr(module, "augment", None)
    return None if augment is None else (lambda images: augment(images, params))
