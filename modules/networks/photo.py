"""The photo model: a MobileNetV2-style network that trains from scratch on a CPU.

A stride-2 stem, inverted-residual blocks (1x1 expand, 3x3 depthwise, 1x1
project, batch norm), global average pooling and dropout: its weights do
not grow with the image (the cnn's Flatten->Dense does), and every shape is
static, as TPUs need. Chosen on flowers_photos against MobileNetV2's deeper
stages (docs/training.md has the measurements).
"""
from typing import Sequence

import tf_keras as keras

from modules.networks.summaries import classifier, image_input, scaled
from modules.networks.space import Architecture

# (expansion, output channels, blocks, stride of the first block): MobileNetV2's
# stage pattern, shallower and narrower: half the weights, and chosen over
# MobileNetV2's own stages by bench/training/photo_candidates on flowers_photos
# (docs/training.md has the figures).
STAGES = ((1, 16, 1, 1), (4, 24, 2, 2), (4, 48, 2, 2), (4, 96, 2, 2), (4, 160, 1, 2))
STEM_CHANNELS, HEAD_CHANNELS, DROPOUT = 32, 512, 0.2
# MobileNetV2's stages without its last 320-channel block:
# bench/training/photo_candidates' "photo_deep".
MOBILENET_V2_STAGES = ((1, 16, 1, 1), (4, 24, 2, 2), (4, 32, 3, 2), (4, 64, 3, 2),
                       (4, 96, 2, 1), (4, 160, 2, 2))
# Keras' default 0.99 left the moving statistics so far behind the weights
# that on a small photo dataset (few steps an epoch) validation predicted one
# class for several epochs while training accuracy rose; at 0.9 they track
# within an epoch or two (measured: docs/performance.md).
BN_MOMENTUM = 0.9


def _bn(x):
    return keras.layers.BatchNormalization(momentum=BN_MOMENTUM)(x)


def _conv_bn(x, filters: int, kernel: int = 1, stride: int = 1, relu: bool = True):
    x = keras.layers.Conv2D(filters, kernel, strides=stride, padding="same", use_bias=False)(x)
    x = _bn(x)
    return keras.layers.ReLU(6.0)(x) if relu else x


def squeeze_excite(x, reduction: int = 4):
    """A channel gate (squeeze-and-excitation) as MobileNetV3 places it: pooled channels
    -> 1x1 (relu) -> 1x1 (Keras' hard sigmoid, clip(0.2x + 0.5), where MobileNetV3's is
    relu6(x + 3) / 6)."""
    channels = x.shape[-1]
    gate = keras.layers.GlobalAveragePooling2D(keepdims=True)(x)
    gate = keras.layers.Conv2D(max(8, channels // reduction), 1, activation="relu")(gate)
    gate = keras.layers.Conv2D(channels, 1, activation="hard_sigmoid")(gate)
    return keras.layers.Multiply()([x, gate])


def inverted_residual(x, expansion: int, filters: int, stride: int, excite: bool = False):
    """1x1 expand -> 3x3 depthwise (-> channel gate) -> 1x1 linear projection; a shortcut
    when shapes match."""
    inputs, channels = x, x.shape[-1]
    if expansion != 1:
        x = _conv_bn(x, channels * expansion)
    x = keras.layers.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(x)
    x = keras.layers.ReLU(6.0)(_bn(x))
    if excite:
        x = squeeze_excite(x)
    x = _conv_bn(x, filters, relu=False)
    if stride == 1 and channels == filters:
        x = keras.layers.Add()([inputs, x])
    return x


def build_photo(input_shape: Sequence[int], num_classes: int,
                arch: Architecture = Architecture(), stages=STAGES,
                head_channels: int = HEAD_CHANNELS, excite: bool = False) -> keras.Model:
    """Stem (3x3, stride 2) -> inverted-residual stages -> 1x1 head -> pooling -> softmax.

    A search (`arch`) scales every width, adds blocks to the stages that have
    more than one, sets the dropout and may resize the input. `stages` and
    `head_channels` exist for bench/training/photo_candidates' candidates, `excite`
    (channel gates in the expanded blocks) for bench/training/recipes'.
    """
    inputs, x = image_input(input_shape, arch.image_size)
    x = _conv_bn(x, scaled(STEM_CHANNELS, arch.width), kernel=3, stride=2)
    for expansion, filters, blocks, stride in stages:
        for block in range(blocks + (arch.depth if blocks > 1 else 0)):
            x = inverted_residual(x, expansion, scaled(filters, arch.width),
                                  stride if block == 0 else 1, excite and expansion != 1)
    x = _conv_bn(x, scaled(head_channels, arch.width))
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(DROPOUT if arch.dropout is None else arch.dropout)(x)
    return keras.Model(inputs, classifier(x, num_classes), name="photo_net")
