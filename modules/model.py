"""Keras models the Trainer can build; Keras 2 (tf_keras), as TFX 1.16 expects."""
from typing import Sequence

import tf_keras as keras


def build_cnn(input_shape: Sequence[int], num_classes: int, learning_rate: float) -> keras.Model:
    """The CNN of the Cloud TPU Keras MNIST example, compiled with Adam.

    Conv2D 32 -> Conv2D 64 -> MaxPool -> Dropout 0.25 -> Flatten -> Dense 128
    -> Dropout 0.5 -> Dense num_classes (softmax, kept in float32).
    """
    inputs = keras.Input(shape=tuple(input_shape), name="image")
    x = keras.layers.Conv2D(32, 3, activation="relu")(inputs)
    x = keras.layers.Conv2D(64, 3, activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Dropout(0.25)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(128, activation="relu")(x)
    x = keras.layers.Dropout(0.5)(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax", dtype="float32",
                                 name="probabilities")(x)
    model = keras.Model(inputs, outputs, name="mnist_cnn")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    return model
