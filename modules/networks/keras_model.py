"""Build and compile the network `--model` names; Keras 2 (tf_keras), as TFX 1.16 expects.

Which networks exist, and where each is built: modules/network_registry.py.
"""
from typing import Callable, Optional, Sequence, Tuple

import numpy as np
import tf_keras as keras

from modules import network_registry
from modules.network_registry import BACKBONE_NAMES, MODULE
from modules.networks.space import architecture
from modules.params import TrainerParams


def build_model(params: TrainerParams, input_shape: Sequence[int], num_classes: int,
                normalization: Optional[Tuple[np.ndarray, np.ndarray]] = None,
                module=None) -> keras.Model:
    """The network `params.model` names: built in, a backbone, or the user's module file.

    `normalization` is Transform's (mean, std), which a backbone undoes; None
    (shape-only builds, such as the memory estimate) uses 0 and 1. `module`
    is the loaded module file, if already loaded. Tuned values in `params`
    change the built-in models' shape (modules/networks/space.py).
    """
    from modules.networks import backbones, user_module  # Keras Applications: only when needed
    if params.model == MODULE:
        module = module or user_module.load(params.module_source, params.module_file)
        return user_module.build(module, params.module_file, input_shape, num_classes, params)
    if params.model in BACKBONE_NAMES:
        mean, std = normalization or (np.zeros(input_shape[-1]), np.ones(input_shape[-1]))
        return backbones.build_backbone_model(params.model, input_shape, num_classes,
                                              params.weights, mean, std, architecture(params))
    return network_registry.builder(params.model)(input_shape, num_classes,
                                                  architecture(params))


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
