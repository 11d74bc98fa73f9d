"""Transform's `preprocessing_fn`: decode, resize, scale and normalize images.

Decoding and resizing are core/images.py's, shared with the Pusher.

TFX runs it once over the train split to compute the per-channel mean and
standard deviation; the resulting transform graph is then applied on the fly
in the Trainer's input pipeline and inside every serving signature, so
training and serving share one implementation of preprocessing.
"""
from typing import Any, Dict

import tensorflow as tf
import tensorflow_transform as tft

from core.contract import IMAGE_KEY, IMAGE_XF, LABEL_KEY, LABEL_XF
from core.images import decode_images
from modules import autograph_rules
from modules.params import TransformParams

autograph_rules.install()

# Floor for the per-channel std: a constant channel must not divide by zero.
_MIN_STD = 1e-3


def _dense_1d(x) -> tf.Tensor:
    """A [batch] tensor from a [batch, 1] dense or a sparse single-value feature."""
    if isinstance(x, tf.SparseTensor):
        x = tf.sparse.to_dense(x)
    return tf.reshape(x, [-1])


def preprocessing_fn(inputs: Dict[str, Any], custom_config: Dict[str, Any]) -> Dict[str, Any]:
    """TFT entry point; `custom_config` carries TransformParams (modules/params.py)."""
    params = TransformParams.from_custom_config(custom_config)
    images = decode_images(_dense_1d(inputs[IMAGE_KEY]), params.image_size, params.channels)
    # Statistics per channel, over every pixel of the analyzed split: reduce
    # over a [pixels, channels] view, since analyzers reduce over axis 0.
    pixels = tf.reshape(images, [-1, params.channels])
    # Accumulated in float64, rounded to float32: Beam sizes its batches by
    # timing, so float32 partial sums merged in a different grouping changed
    # the statistics' last bit from run to run, and with it the whole training.
    mean = tf.cast(tft.mean(pixels, reduce_instance_dims=False, output_dtype=tf.float64),
                   tf.float32)
    var = tf.cast(tft.var(pixels, reduce_instance_dims=False, output_dtype=tf.float64),
                  tf.float32)
    std = tf.maximum(tf.sqrt(var), _MIN_STD)
    return {
        IMAGE_XF: (images - mean) / std,
        LABEL_XF: _dense_1d(inputs[LABEL_KEY]),
    }
