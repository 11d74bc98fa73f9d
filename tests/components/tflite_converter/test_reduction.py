"""The file's own antialiased reduction and the client's decode: exact where they must be."""
import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from core.images import pixel_decoder
from components.tflite_converter.client_inputs import client_decoder
from components.tflite_converter.reduction import (MAX_FACTOR, reduce_pixels,
                                                   reduction_factor, triangle_taps)


def test_the_factor_makes_the_input_at_least_the_typical_long_side():
    assert reduction_factor([224] * 5, 128) == 2  # flowers: 224 px photos, a 128-px model
    assert reduction_factor([640, 640, 2000, 96, 1280], 128) == MAX_FACTOR  # capped: 5 -> 4
    assert reduction_factor([8, 8, 8], 8) == 1 and reduction_factor([6], 8) == 1
    assert reduction_factor([], 128) == 1  # nothing to go by: the model's own side
    assert reduction_factor([300], 100) == 3 and reduction_factor([301], 100) == 4
    with pytest.raises(ValueError, match="size"):
        reduction_factor([10], 0)


@pytest.mark.parametrize("factor", [1, 2, 3, 4, 5])
def test_the_triangle_has_one_tap_per_nonzero_weight_and_sums_to_the_factor(factor):
    weights, padding = triangle_taps(factor)
    assert len(weights) == 2 * factor - factor % 2 and padding == factor // 2
    assert np.all(weights > 0) and np.allclose(weights, weights[::-1])
    assert np.isclose(weights.sum(), factor)


def _reduce_in_dataset(pixels, factor):
    dataset = tf.data.Dataset.from_tensor_slices(pixels).batch(len(pixels))
    return next(iter(dataset.map(lambda x: reduce_pixels(
        tf.ensure_shape(x, [None, *pixels.shape[1:]]), factor)))).numpy()


@pytest.mark.integration
@pytest.mark.parametrize("factor, channels", [(1, 3), (2, 3), (3, 1), (4, 3)])
def test_the_reduction_is_tensorflows_antialiased_resize(factor, channels):
    pixels = np.random.default_rng(factor).uniform(0, 255, (3, 8 * factor, 8 * factor,
                                                            channels)).astype(np.float32)
    want = tf.image.resize(pixels, [8, 8], antialias=True).numpy()
    # Eagerly and inside tf.data, where graph-mode shapes differ.
    np.testing.assert_allclose(reduce_pixels(tf.constant(pixels), factor), want, atol=1e-3)
    np.testing.assert_allclose(_reduce_in_dataset(pixels, factor), want, atol=1e-3)


def test_a_side_the_factor_does_not_divide_is_refused():
    with pytest.raises(ValueError, match="that 3 divides"):
        reduce_pixels(tf.zeros([1, 10, 10, 3]), 3)


def _photo(width, height, seed=0):
    """A JPEG with detail finer than a 16-px model can hold, as a camera photo has."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (height // 4, width // 4, 3)).astype(np.uint8)
    image = Image.fromarray(coarse).resize((width, height), Image.NEAREST)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


@pytest.mark.integration
def test_the_client_decodes_whole_and_resizes_bilinearly_without_antialiasing():
    photo = _photo(96, 64)
    decoded = tf.io.decode_jpeg(photo, channels=3)
    want = np.round(tf.image.resize(decoded, [16, 16], antialias=False).numpy())
    encoded = tf.constant([photo, photo])
    np.testing.assert_array_equal(client_decoder(16, 3)(encoded).numpy()[1], want)
    in_dataset = tf.data.Dataset.from_tensors(encoded).map(client_decoder(16, 3))
    np.testing.assert_array_equal(next(iter(in_dataset)).numpy()[0], want)
    assert client_decoder(16, 1)(encoded).shape == (2, 16, 16, 1)


@pytest.mark.integration
def test_a_client_resizing_for_the_reducing_file_sees_what_training_saw():
    # What the file's reduction is for: a bilinear shrink aliases, Transform's does not.
    photos = tf.constant([_photo(96, 96, seed) for seed in range(4)])
    transform = pixel_decoder(16, 3)(photos).numpy()
    plain = client_decoder(16, 3)(photos).numpy()
    reduced = reduce_pixels(client_decoder(16 * 4, 3)(photos), 4).numpy()
    plain_error, reduced_error = (np.abs(p - transform).mean() for p in (plain, reduced))
    assert reduced_error < plain_error / 3, (reduced_error, plain_error)
