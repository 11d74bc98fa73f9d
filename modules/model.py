"""Keras models the Trainer can build; Keras 2 (tf_keras), as TFX 1.16 expects.

Every model opens with a pass-through layer that writes an image summary of
its inputs and ends with one that writes a histogram of its outputs
(modules/summaries.py), as the Cloud TPU Keras MNIST example does.
"""
from typing import Callable, Dict, Optional, Sequence, Tuple

import numpy as np
import tf_keras as keras

from modules.summaries import classifier as _classifier, image_input, scaled
from modules.summaries import (HISTOGRAM_SUMMARY, IMAGE_SUMMARY,  # noqa: F401 (re-exported)
                               HistogramSummary, ImageSummary)
from modules.params import BACKBONE_NAMES, MODULE, TrainerParams
from modules.photo_model import build_photo
from modules.tuning.space import Architecture, architecture


def build_cnn(input_shape: Sequence[int], num_classes: int,
              arch: Architecture = Architecture()) -> keras.Model:
    """The CNN of the Cloud TPU Keras MNIST example.

    Conv2D 32 -> Conv2D 64 -> MaxPool -> Dropout 0.25 -> Flatten -> Dense 128
    -> Dropout 0.5 -> Dense num_classes (softmax, kept in float32). A search
    (`arch`) scales the widths, adds 3x3 convolutions of 64 before the pooling,
    sets the last dropout and may resize the input.
    """
    inputs, x = image_input(input_shape, arch.image_size)
    x = keras.layers.Conv2D(scaled(32, arch.width), 3, activation="relu")(x)
    for _ in range(1 + arch.depth):
        x = keras.layers.Conv2D(scaled(64, arch.width), 3, activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Dropout(0.25)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(scaled(128, arch.width), activation="relu")(x)
    x = keras.layers.Dropout(0.5 if arch.dropout is None else arch.dropout)(x)
    return keras.Model(inputs, _classifier(x, num_classes), name="mnist_cnn")


def _residual_block(x, filters: int, stride: int):
    shortcut = x
    y = keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.ReLU()(y)
    y = keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    if stride != 1 or shortcut.shape[-1] != filters:
        shortcut = keras.layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
        shortcut = keras.layers.BatchNormalization()(shortcut)
    return keras.layers.ReLU()(keras.layers.Add()([y, shortcut]))


def build_resnet(input_shape: Sequence[int], num_classes: int,
                 arch: Architecture = Architecture()) -> keras.Model:
    """A small ResNet (CIFAR-style, 3 stages of 2 basic blocks, 16/32/64 filters), for RGB
    data; a search scales the filters, adds blocks, a dropout, and may resize the input."""
    inputs, x = image_input(input_shape, arch.image_size)
    x = keras.layers.Conv2D(scaled(16, arch.width), 3, padding="same", use_bias=False)(x)
    x = keras.layers.ReLU()(keras.layers.BatchNormalization()(x))
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(2 + arch.depth):
            x = _residual_block(x, scaled(filters, arch.width), 2 if stage and not block else 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    if arch.dropout:
        x = keras.layers.Dropout(arch.dropout)(x)
    return keras.Model(inputs, _classifier(x, num_classes), name="small_resnet")


MODELS: Dict[str, Callable[..., keras.Model]] = {
    "cnn": build_cnn, "resnet": build_resnet, "photo": build_photo}


def build_model(params: TrainerParams, input_shape: Sequence[int], num_classes: int,
                normalization: Optional[Tuple[np.ndarray, np.ndarray]] = None,
                module=None) -> keras.Model:
    """The network `params.model` names: built in, a backbone, or the user's module file.

    `normalization` is Transform's (mean, std), which a backbone undoes; None
    (shape-only builds, such as the memory estimate) uses 0 and 1. `module`
    is the loaded module file, if already loaded. Tuned values in `params`
    change the built-in models' shape (modules/tuning/space.py).
    """
    from modules import backbones, user_module  # Keras Applications: only when needed
    if params.model == MODULE:
        module = module or user_module.load(params.module_source, params.module_file)
        return user_module.build(module, params.module_file, input_shape, num_classes, params)
    if params.model in BACKBONE_NAMES:
        mean, std = normalization or (np.zeros(input_shape[-1]), np.ones(input_shape[-1]))
        return backbones.build_backbone_model(params.model, input_shape, num_classes,
                                              params.weights, mean, std, architecture(params))
    return MODELS[params.model](input_shape, num_classes, architecture(params))


OPTIMIZERS = {"adam": keras.optimizers.Adam, "sgd": keras.optimizers.SGD}


def compile_model(model: keras.Model, optimizer: str, learning_rate,
                  steps_per_execution: int, label_smoothing: float = 0.0) -> keras.Model:
    """Compiles with cross-entropy on one-hot labels (so it can smooth them) and accuracy.

    `learning_rate` is a float or a LearningRateSchedule (modules/schedule.py).
    """
    model.compile(optimizer=OPTIMIZERS[optimizer](learning_rate),
                  loss=keras.losses.CategoricalCrossentropy(label_smoothing=label_smoothing),
                  metrics=[keras.metrics.CategoricalAccuracy(name="accuracy")],
                  steps_per_execution=steps_per_execution)
    return model


def float32_copy(model: keras.Model, build: Callable[[], keras.Model]) -> keras.Model:
    """`model` if it computes in float32; else `build()` under float32, with its weights.

    For export. Under mixed precision the graph casts weights and activations
    to float16 or bfloat16, and TFLite converts neither (a float16 Conv2D "is
    neither a custom op nor a flex op"; "Failed to convert element type
    'bf16'"): a model trained on a GPU or TPU would get no TFLite file. The
    variables are float32 under every policy. They are copied in memory, in
    layer order (tf_keras lists a model's weights layer by layer, whatever is
    trainable), and set_weights refuses a different count or shape. In memory,
    not through a checkpoint: under parameter servers or a remote TPU a
    checkpoint is written by the hosts that hold the variables.
    """
    if model.compute_dtype == "float32":
        return model
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy("float32")
    try:
        copy = build()
    finally:
        keras.mixed_precision.set_global_policy(previous)
    copy.set_weights(model.get_weights())
    return copy
