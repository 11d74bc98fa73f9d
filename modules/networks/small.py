"""The small built-in networks: the Cloud TPU MNIST example's CNN and a CIFAR-style ResNet.

Registered in modules/network_registry.py. Every model opens with a
pass-through layer that writes an image summary of its inputs and ends with
one that writes a histogram of its outputs (summaries.py), as the Cloud TPU
Keras MNIST example does.
"""
from typing import Sequence

import tf_keras as keras

from modules.networks.space import Architecture
from modules.networks.summaries import classifier as _classifier, image_input, scaled


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
