"""Training-only augmentation of normalized image batches: crop, flip, brightness, contrast.

Each image gets its own random draw (tf.image's batch ops would share one
per batch). Shapes stay static and nothing leaves the graph (no
py_function), so the same input pipeline feeds a TPU.
"""
import dataclasses

import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Augmentation:
    """crop: pad-and-random-crop margin in pixels; flip: horizontal; color: max change."""

    crop: int = 0
    flip: bool = False
    color: float = 0.0

    @property
    def active(self) -> bool:
        """False when every augmentation is off."""
        return bool(self.crop or self.flip or self.color)


def _augment_one(image: tf.Tensor, aug: Augmentation) -> tf.Tensor:
    height, width, channels = image.shape
    if aug.crop:
        padded = tf.pad(image, [[aug.crop, aug.crop], [aug.crop, aug.crop], [0, 0]])
        image = tf.image.random_crop(padded, [height, width, channels])
    if aug.flip:
        image = tf.image.random_flip_left_right(image)
    if aug.color:
        # Images are normalized (mean 0, std 1 per channel): brightness is a
        # shift in std units, contrast a scale around the image's mean.
        image = tf.image.random_brightness(image, aug.color)
        image = tf.image.random_contrast(image, 1 - aug.color, 1 + aug.color)
    return image


def augment_batch(images: tf.Tensor, aug: Augmentation) -> tf.Tensor:
    """[batch, h, w, c] -> the same shape, each image augmented independently."""
    if not aug.active:
        return images
    return tf.map_fn(lambda image: _augment_one(image, aug), images,
                     fn_output_signature=tf.TensorSpec(images.shape[1:], images.dtype))
