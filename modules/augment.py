"""Training-only augmentation of normalized image batches: crops, warps, flip, brightness,
contrast.

Each image gets its own random draw (tf.image's batch ops would share one
per batch), keyed by (seed, batch index) so a seeded run repeats. Shapes
stay static and nothing leaves the graph (no py_function), so the same input
pipeline feeds a TPU.
"""
import dataclasses
from typing import Iterator, Optional, Tuple, Union

import numpy as np
import tensorflow as tf

from modules.params import WARP_ZOOM


@dataclasses.dataclass(frozen=True)
class Augmentation:
    """crop: pad-and-random-crop margin in pixels; scale: random resized crop's
    smallest area share (0 is off); flip: horizontal; color: max change; rotate:
    max rotation in degrees of a random warp that also zooms (WARP_ZOOM) and
    shifts by up to `crop` pixels in place of the crop."""

    crop: int = 0
    flip: bool = False
    color: float = 0.0
    scale: float = 0.0
    rotate: float = 0.0

    @classmethod
    def of(cls, params) -> "Augmentation":
        """The augmentation a TrainerParams asks for."""
        return cls(params.augment_crop, params.augment_flip, params.augment_color,
                   params.augment_scale, params.augment_rotate)

    @property
    def active(self) -> bool:
        """False when every augmentation is off."""
        return bool(self.crop or self.flip or self.color or self.scale or self.rotate)


# Stateless draws per augment_batch call: a resized crop's five, a warp's four
# (or the crop's two), a flip's one, color's two (an upper bound; unused keys
# cost nothing). stateless_split's first keys do not depend on the count, so
# raising it left every earlier setting's draws as they were.
_DRAWS = 12


def _uniform(keys: Iterator[tf.Tensor], shape, low=0.0, high=1.0, dtype=tf.float32):
    """A stateless uniform draw with the next key."""
    return tf.random.stateless_uniform(shape, next(keys), low, high, dtype)


def _crop(images: tf.Tensor, margin: int, keys: Iterator[tf.Tensor]) -> tf.Tensor:
    """Pads by `margin` and crops back at a random offset per image: two batched gathers."""
    batch, height, width, _ = images.shape
    padded = tf.pad(images, [[0, 0], [margin, margin], [margin, margin], [0, 0]])
    dy, dx = (_uniform(keys, [batch, 1], 0, 2 * margin + 1, tf.int32) for _ in range(2))
    rows = tf.gather(padded, dy + tf.range(height), axis=1, batch_dims=1)
    return tf.gather(rows, dx + tf.range(width), axis=2, batch_dims=1)


def _warp(images: tf.Tensor, degrees: float, shift: float,
          keys: Iterator[tf.Tensor]) -> tf.Tensor:
    """Rotates by up to `degrees` about the centre, zooms by up to WARP_ZOOM and shifts
    by up to `shift` pixels (sub-pixel), per image, in one bilinear projective
    transform; pixels from outside repeat the nearest edge, the background on
    digits and scans whatever its colour."""
    batch, height, width, _ = images.shape
    angle = _uniform(keys, [batch], -degrees, degrees) * (np.pi / 180)
    zoom = _uniform(keys, [batch], 1 - WARP_ZOOM, 1 + WARP_ZOOM)
    dx, dy = (_uniform(keys, [batch], -shift, shift) for _ in range(2))
    cos, sin = tf.cos(angle) / zoom, tf.sin(angle) / zoom
    cx, cy = (width - 1) / 2, (height - 1) / 2
    # Output pixel (x, y) reads input (cos x - sin y + tx, sin x + cos y + ty).
    tx = cx - cos * cx + sin * cy + dx
    ty = cy - sin * cx - cos * cy + dy
    zeros = tf.zeros([batch])
    transforms = tf.stack([cos, -sin, tx, sin, cos, ty, zeros, zeros], axis=1)
    return tf.raw_ops.ImageProjectiveTransformV3(
        images=images, transforms=transforms, output_shape=[height, width],
        fill_value=0.0, interpolation="BILINEAR", fill_mode="NEAREST")


def _resized_crop(images: tf.Tensor, min_area: float, flip: bool,
                  keys: Iterator[tf.Tensor], size: Optional[int] = None) -> tf.Tensor:
    """Inception-style random resized crop: a box of area [min_area, 1] and aspect
    3/4..4/3 per image, resized to `size` (None: the input's) in one batched op.

    With `flip`, half the boxes have their left and right edges swapped, which
    crop_and_resize samples as a mirror image: the flip costs no extra pass.
    """
    batch, height, width, _ = images.shape
    area = _uniform(keys, [batch], min_area, 1.0)
    aspect = tf.exp(_uniform(keys, [batch], np.log(3 / 4), np.log(4 / 3)))
    box_h = tf.minimum(tf.sqrt(area / aspect), 1.0)
    box_w = tf.minimum(tf.sqrt(area * aspect), 1.0)
    top = _uniform(keys, [batch]) * (1.0 - box_h)
    left = _uniform(keys, [batch]) * (1.0 - box_w)
    right = left + box_w
    if flip:
        mirrored = _uniform(keys, [batch]) < 0.5
        left, right = tf.where(mirrored, right, left), tf.where(mirrored, left, right)
    boxes = tf.stack([top, left, top + box_h, right], axis=1)
    return tf.image.crop_and_resize(images, boxes, tf.range(batch),
                                    [size or height, size or width])


def _per_image(keys: Iterator[tf.Tensor], shape0: int, low: float, high: float) -> tf.Tensor:
    """One uniform draw per image, shaped to broadcast over [h, w, c]."""
    return _uniform(keys, [shape0, 1, 1, 1], low, high)


def _check_size(aug: Augmentation, size: Optional[int]) -> None:
    if size and not aug.scale:
        raise ValueError(f"an output side ({size}) needs random resized crops (scale > 0)")


def augment_batch(images: tf.Tensor, aug: Augmentation,
                  seed: Union[tf.Tensor, Tuple[int, int]], size: Optional[int] = None
                  ) -> tf.Tensor:
    """[batch, h, w, c] -> [batch, size or h, size or w, c], each image augmented
    independently.

    `size`: the side the random resized crops come out at (None: the input's);
    bench/training/recipes crops photos decoded larger than the model's side with it.

    `seed` (two integers, e.g. (run seed, batch index)) alone decides every
    draw: stateless ops, because stateful ones (tf.random.uniform) in a
    parallel map share one generator across calls, so which batch gets which
    draw depended on thread timing and a seeded run did not repeat.
    Vectorized over the batch (a map_fn of per-image tf.image ops cost
    much more CPU, which on a small machine the model shares; measured:
    docs/performance.md).
    """
    _check_size(aug, size)
    if not aug.active:
        return images
    batch = images.shape[0]
    keys = iter(tf.unstack(tf.random.experimental.stateless_split(
        tf.cast(seed, tf.int64), _DRAWS)))
    if aug.scale:
        images = _resized_crop(images, aug.scale, aug.flip, keys, size)
    if aug.rotate:
        images = _warp(images, aug.rotate, aug.crop, keys)
    elif aug.crop:
        images = _crop(images, aug.crop, keys)
    if aug.flip and not aug.scale:
        images = tf.where(_per_image(keys, batch, 0, 1) < 0.5, tf.reverse(images, axis=[2]),
                          images)
    if aug.color:
        # Images are normalized (mean 0, std 1 per channel): brightness b is a
        # shift in std units, contrast k a scale around each image's channel
        # means m (as tf.image.adjust_contrast does). (x + b - (m + b)) * k +
        # m + b, folded into one multiply-add: k * x + ((1 - k) * m + b).
        brightness = _per_image(keys, batch, -aug.color, aug.color)
        contrast = _per_image(keys, batch, 1 - aug.color, 1 + aug.color)
        means = tf.reduce_mean(images, axis=[1, 2], keepdims=True)
        images = images * contrast + ((1 - contrast) * means + brightness)
    return images


def augment_batches(batches: tf.data.Dataset, aug: Augmentation, seed: int,
                    num_parallel_calls: Optional[int] = None,
                    size: Optional[int] = None) -> tf.data.Dataset:
    """(images, labels) batches -> the same, images augmented with key (seed, batch index).

    Keyed by position in the stream, each batch's draws are the same in every
    run with `seed`, however many calls run in parallel, and differ from
    epoch to epoch of a repeated stream.
    """
    _check_size(aug, size)
    if not aug.active:
        return batches
    return batches.enumerate().map(
        lambda step, batch: (augment_batch(batch[0], aug, tf.stack([np.int64(seed), step]),
                                           size), batch[1]),
        num_parallel_calls=num_parallel_calls)
