"""Decode and resize encoded images in TensorFlow: Transform's first step, shared.

Transform (modules/preprocessing.py) runs it inside its graph; the Pusher's
TFLite gate, the report and `imagepipe predict` run it eagerly to get the
very same pixels. It lives here, below both, so the Pusher does not import
the Transform module.
"""
import functools

import tensorflow as tf


def to_channels(image: tf.Tensor, channels: int) -> tf.Tensor:
    """Converts an [h, w, 1..4] image to 1 or 3 channels: alpha dropped, gray repeated.

    Done here rather than by decode_image's `channels` argument, which TF
    refuses for some formats (channels=1 on BMP raises).
    """
    has_color = tf.shape(image)[-1] >= 3
    if channels == 3:
        return tf.cond(has_color, lambda: image[..., :3],
                       lambda: tf.image.grayscale_to_rgb(image[..., :1]))
    return tf.cond(has_color, lambda: tf.image.rgb_to_grayscale(image[..., :3]),
                   lambda: image[..., :1])


# libjpeg can decode straight to 1/2, 1/4 or 1/8 of the size (DCT scaling).
_JPEG_RATIOS = (1, 2, 4, 8)
# Images decoded at once by map_fn: each camera photo that is not a JPEG
# (PNG, BMP) is held full-size while it is resized.
_PARALLEL_DECODES = 4


def _decode_jpeg_near(data: tf.Tensor, size: int) -> tf.Tensor:
    """A JPEG decoded at the smallest DCT scale that keeps both sides >= `size`.

    A 12-megapixel photo resized to 128 px would otherwise be decoded and
    held at full size (36 MB of pixels, 144 MB as floats) before the resize;
    at 1/8 scale it is 64 times less, and decoding is several times faster.
    """
    shape = tf.image.extract_jpeg_shape(data)
    short = tf.minimum(shape[0], shape[1])
    # Nested tf.cond, not tf.switch_case: TFT cannot analyze a graph whose
    # ops carry a list of functions (graph_tools.py: "list.func").
    def largest_fitting(ratios):
        if len(ratios) == 1:
            return tf.io.decode_jpeg(data, ratio=ratios[0])
        return tf.cond(short >= size * ratios[-1],
                       lambda: tf.io.decode_jpeg(data, ratio=ratios[-1]),
                       lambda: largest_fitting(ratios[:-1]))
    return largest_fitting(_JPEG_RATIOS)


def _is_jpeg(data: tf.Tensor) -> tf.Tensor:
    return tf.equal(tf.strings.substr(data, 0, 3), b"\xff\xd8\xff")


def decode_images(encoded: tf.Tensor, size: int, channels: int) -> tf.Tensor:
    """Decodes a [batch] string tensor of JPEG/PNG/BMP/GIF bytes to float images.

    Returns a [batch, size, size, channels] float32 tensor in [0, 1]. The
    shape is static, as TPUs and the exported signatures need.
    """
    def decode_one(data):
        image = tf.cond(_is_jpeg(data), lambda: _decode_jpeg_near(data, size),
                        lambda: tf.io.decode_image(data, expand_animations=False))
        image = tf.image.resize(to_channels(image, channels), [size, size], antialias=True)
        return tf.ensure_shape(image, [size, size, channels])

    images = tf.map_fn(decode_one, encoded, parallel_iterations=_PARALLEL_DECODES,
                       fn_output_signature=tf.TensorSpec([size, size, channels], tf.float32))
    return images / 255.0


@functools.lru_cache(maxsize=None)
def pixel_decoder(size: int, channels: int):
    """decode_images as one graph, to pixels in [0, 255]: called eagerly, its map_fn
    decodes one image at a time, several times slower."""
    return tf.function(lambda encoded: decode_images(encoded, size, channels) * 255.0,
                       input_signature=[tf.TensorSpec([None], tf.string)])
