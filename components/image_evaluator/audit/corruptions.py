"""Common corruptions at three severities, after ImageNet-C (Hendrycks & Dietterich, ICLR 2019).

Each takes [N, S, S, C] float32 pixels in [0, 255] at the model's size and
returns them corrupted, clipped to [0, 255]. The severities are ImageNet-C's
first three, except where noted: the audit asks "does the model survive
everyday degradations", not "where does it break".
"""
from typing import Callable, Dict

import numpy as np
import tensorflow as tf

SEVERITIES = (1, 2, 3)
# Gaussian noise: its standard deviation as a share of the pixel range (ImageNet-C: .08-.38).
NOISE_STD = {1: 0.08, 2: 0.12, 3: 0.18}
# Gaussian blur: ImageNet-C's sigma (1, 2, 3 px) at 224 px, scaled to the model's
# size, but at least 0.5, 1, 1.5 px: at 28 px a sigma of 0.25 would change nothing.
BLUR_SIGMA = {1: 1.0, 2: 2.0, 3: 3.0}
# Brightness: added, as a share of the pixel range, to every channel (ImageNet-C adds
# .1-.5 to HSV value).
BRIGHTNESS = {1: 0.1, 2: 0.2, 3: 0.3}
# Contrast: each image's deviation from its mean pixel scaled by this (ImageNet-C: .4-.05).
CONTRAST = {1: 0.4, 2: 0.3, 3: 0.2}
# JPEG: re-encoded at this quality (ImageNet-C: 25-7).
JPEG_QUALITY = {1: 25, 2: 18, 3: 15}
_SEED = 0  # the noise is the same in every run, so runs compare


def gaussian_noise(pixels: np.ndarray, severity: int) -> np.ndarray:
    """Adds zero-mean Gaussian noise (the same draw for the same shape)."""
    noise = np.random.default_rng(_SEED).normal(0.0, NOISE_STD[severity] * 255.0, pixels.shape)
    return np.clip(pixels + noise, 0.0, 255.0).astype(np.float32)


def blur_sigma(size: int, severity: int) -> float:
    """The blur's sigma in pixels at the model's size (see BLUR_SIGMA)."""
    return max(BLUR_SIGMA[severity] * size / 224.0, BLUR_SIGMA[severity] / 2.0)


def gaussian_blur(pixels: np.ndarray, severity: int) -> np.ndarray:
    """A separable Gaussian filter, reflecting at the borders.

    Both passes filter columns: the second on the transposed image. TensorFlow
    2.16's oneDNN depthwise convolution dies of SIGFPE or SIGSEGV on a 1 x W
    filter of 15 taps or more (a radius of 7 px, reached from 150 px images
    up), killing the Evaluator; W x 1 filters of any length run.
    """
    sigma = blur_sigma(pixels.shape[1], severity)
    radius = max(1, min(int(np.ceil(3 * sigma)), pixels.shape[1] - 1))
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps = (taps / taps.sum()).astype(np.float32)
    column = np.tile(taps.reshape(-1, 1, 1, 1), [1, 1, pixels.shape[-1], 1])
    x = tf.pad(tf.constant(pixels, tf.float32),
               [[0, 0], [radius, radius], [radius, radius], [0, 0]], mode="REFLECT")
    for _ in range(2):
        x = tf.nn.depthwise_conv2d(x, column, [1, 1, 1, 1], "VALID")
        x = tf.transpose(x, [0, 2, 1, 3])
    return np.clip(x.numpy(), 0.0, 255.0)


def brightness(pixels: np.ndarray, severity: int) -> np.ndarray:
    """Every pixel brighter by a share of the range."""
    return np.clip(pixels + BRIGHTNESS[severity] * 255.0, 0.0, 255.0).astype(np.float32)


def contrast(pixels: np.ndarray, severity: int) -> np.ndarray:
    """Each image pulled towards its mean pixel."""
    mean = pixels.mean(axis=(1, 2, 3), keepdims=True)
    return np.clip((pixels - mean) * CONTRAST[severity] + mean, 0.0, 255.0).astype(np.float32)


def jpeg(pixels: np.ndarray, severity: int) -> np.ndarray:
    """Each image through a JPEG encoder and decoder at a low quality."""
    quality = JPEG_QUALITY[severity]
    out = [tf.io.decode_jpeg(tf.io.encode_jpeg(
        tf.constant(np.round(image).astype(np.uint8)), quality=quality),
        channels=pixels.shape[-1]) for image in pixels]
    return np.stack([image.numpy() for image in out]).astype(np.float32) if out else pixels


CORRUPTIONS: Dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "gaussian_noise": gaussian_noise, "gaussian_blur": gaussian_blur,
    "brightness": brightness, "contrast": contrast, "jpeg": jpeg}
