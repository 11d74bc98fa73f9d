"""The TFLite file's own antialiased reduction: a client resizes a little, the file the rest.

Why: on-device classifiers (the TFLite Task Library's ImageClassifier, MediaPipe
Tasks, TFLite Support's ResizeOp) stretch a photo to the model's input with plain
bilinear sampling, no antialiasing, which aliases once it shrinks an image by more
than 2x; Transform resized every training image with antialiasing
(core/images.py). So the file takes `factor` times the model's side,
chosen from the train images' sizes so that a client mostly enlarges or shrinks by
less than 2x, and shrinks it to the model's side inside, with the very filter
Transform used: tf.image.resize(antialias=True)'s triangle of scale 1/factor,
renormalized at the borders as TensorFlow does (reduce_pixels is exact to float
rounding). On flowers this took the Task Library's pixels from 3.0 to 1.1 levels of
255 from Transform's (docs/results/2026-11-29-tflite-client.md).

Built from TFLite builtins (PAD, DEPTHWISE_CONV_2D, MUL) that every quantization
keeps: the antialiased resize op (ScaleAndTranslate) has no TFLite kernel.
"""
import math
from typing import Sequence, Tuple

import numpy as np
import tensorflow as tf

# At most 16x the model's pixels in the input tensor (a 128-px model takes 512 px, 3 MB
# as float32): past 4x, a client's bilinear shrink of a camera photo aliases all the same.
MAX_FACTOR = 4


def reduction_factor(long_sides: Sequence[int], size: int, cap: int = MAX_FACTOR) -> int:
    """ceil(median long side / `size`) within [1, `cap`]: the input side factor x size is
    then at least the typical image's long side, so a client enlarges typical images."""
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    if not len(long_sides):
        return 1
    return int(min(cap, max(1, math.ceil(float(np.median(long_sides)) / size))))


def triangle_taps(factor: int) -> Tuple[np.ndarray, int]:
    """(weights, padding) of the 1-D triangle filter that shrinks by `factor`: output i is
    centred on input (i + 0.5) x factor - 0.5, its taps start at i x factor - padding."""
    padding = factor // 2
    taps = 2 * factor - factor % 2  # the taps with nonzero weight, |distance| < factor
    distance = np.arange(taps) - padding + 0.5 - 0.5 * factor
    return np.maximum(0.0, 1.0 - np.abs(distance) / factor), padding


def _border_scale(side: int, factor: int) -> np.ndarray:
    """1 / the sum of each output's in-image tap weights (TensorFlow renormalizes there)."""
    weights, padding = triangle_taps(factor)
    sums = np.zeros(side // factor)
    for i in range(len(sums)):
        first = i * factor - padding
        sums[i] = sum(w for t, w in enumerate(weights) if 0 <= first + t < side)
    return 1.0 / sums


def reduce_pixels(pixels: tf.Tensor, factor: int) -> tf.Tensor:
    """[n, s, s, c] pixels shrunk to [n, s / factor, s / factor, c] as
    tf.image.resize(..., antialias=True) does; `s` static and a multiple of `factor`."""
    side, channels = int(pixels.shape[1]), int(pixels.shape[3])
    if factor == 1:
        return pixels
    if side % factor or int(pixels.shape[2]) != side:
        raise ValueError(f"reduce_pixels needs a square side that {factor} divides, got "
                         f"{pixels.shape[1:3]}")
    weights, padding = triangle_taps(factor)
    kernel = np.outer(weights, weights)[:, :, None, None] * np.ones([1, 1, channels, 1])
    padded = tf.pad(pixels, [[0, 0], [padding, padding], [padding, padding], [0, 0]])
    summed = tf.nn.depthwise_conv2d(padded, tf.constant(kernel, tf.float32),
                                    [1, factor, factor, 1], "VALID")
    scale = _border_scale(side, factor)
    return summed * tf.constant(np.outer(scale, scale)[None, :, :, None], tf.float32)
