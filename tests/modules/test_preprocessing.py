"""decode_images and preprocessing_fn: eager, inside tf.data, and through real TFT."""
import functools

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform.beam as tft_beam
from PIL import Image
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from core.contract import IMAGE_KEY, IMAGE_XF, LABEL_KEY, LABEL_XF
from core.images import decode_images
from modules.params import TransformParams
from modules.preprocessing import preprocessing_fn

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _images(make_image, tmp_path, specs):
    return [make_image(tmp_path / name, size=size, mode=mode, seed=i).read_bytes()
            for i, (name, size, mode) in enumerate(specs)]


SPECS = [("a.png", (12, 12), "L"), ("b.jpg", (20, 10), "RGB"), ("c.png", (7, 9), "RGBA"),
         ("d.bmp", (16, 16), "RGB"), ("e.gif", (12, 12), "L")]


def test_eager_and_tf_data_give_the_same_tensor(make_image, tmp_path):
    encoded = tf.constant(_images(make_image, tmp_path, SPECS))
    eager = decode_images(encoded, 8, 3)
    in_data = next(iter(tf.data.Dataset.from_tensors(encoded).map(
        lambda x: decode_images(x, 8, 3))))
    assert eager.shape == (5, 8, 8, 3)
    np.testing.assert_allclose(eager.numpy(), in_data.numpy(), atol=1e-6)
    assert 0.0 <= eager.numpy().min() and eager.numpy().max() <= 1.0


def test_grayscale_is_repeated_and_alpha_dropped(make_image, tmp_path):
    gray, rgba = _images(make_image, tmp_path, [("g.png", (8, 8), "L"), ("r.png", (8, 8), "RGBA")])
    decoded = decode_images(tf.constant([gray, rgba]), 8, 3).numpy()
    np.testing.assert_array_equal(decoded[0, ..., 0], decoded[0, ..., 2])
    expected = np.asarray(Image.open(tmp_path / "r.png").convert("RGB")) / 255.0
    np.testing.assert_allclose(decoded[1], expected, atol=1e-6)


@pytest.mark.parametrize("channels", [1, 3])
def test_preprocessing_fn_normalizes_per_channel_with_tft(make_image, tmp_path, channels):
    encoded = _images(make_image, tmp_path, SPECS)
    raw = [{IMAGE_KEY: [e], LABEL_KEY: [i]} for i, e in enumerate(encoded)]
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec({
        IMAGE_KEY: tf.io.FixedLenFeature([1], tf.string),
        LABEL_KEY: tf.io.FixedLenFeature([1], tf.int64)}))
    fn = functools.partial(preprocessing_fn,
                           custom_config=TransformParams(6, channels).to_custom_config())
    with tft_beam.Context(temp_dir=str(tmp_path / "tft"), force_tf_compat_v1=False):
        (rows, _), _ = (raw, metadata) | tft_beam.AnalyzeAndTransformDataset(fn)
    images = np.stack([r[IMAGE_XF] for r in rows])
    assert images.shape == (5, 6, 6, channels)
    np.testing.assert_allclose(images.reshape(-1, channels).mean(axis=0), 0, atol=1e-4)
    np.testing.assert_allclose(images.reshape(-1, channels).std(axis=0), 1, atol=1e-3)
    assert [int(r[LABEL_XF]) for r in rows] == list(range(5))


@pytest.mark.parametrize("channels", [1, 3])
def test_every_format_decodes_to_the_requested_channels(make_image, tmp_path, channels):
    encoded = tf.constant(_images(make_image, tmp_path, SPECS))
    assert decode_images(encoded, 5, channels).shape == (5, 5, 5, channels)


def test_grayscale_stays_exact_at_one_channel(make_image, tmp_path):
    gray = make_image(tmp_path / "g.png", size=(6, 6), mode="L").read_bytes()
    decoded = decode_images(tf.constant([gray]), 6, 1).numpy()[0, ..., 0]
    np.testing.assert_allclose(decoded, np.asarray(Image.open(tmp_path / "g.png")) / 255.0,
                               atol=1e-6)


def test_large_jpegs_decode_at_a_reduced_scale_close_to_a_full_decode(make_image, tmp_path):
    # 800x600 to 64 px: decoded at 1/8 (100x75), then resized; a full decode agrees.
    coarse = np.random.default_rng(0).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    Image.fromarray(coarse).resize((800, 600), Image.BILINEAR).save(tmp_path / "big.jpg")
    data = (tmp_path / "big.jpg").read_bytes()
    scaled = decode_images(tf.constant([data]), 64, 3).numpy()[0]
    in_data = next(iter(tf.data.Dataset.from_tensors(tf.constant([data])).map(
        lambda x: decode_images(x, 64, 3)))).numpy()[0]
    np.testing.assert_allclose(scaled, in_data, atol=1e-6)
    full = tf.image.resize(tf.io.decode_jpeg(data), [64, 64], antialias=True).numpy() / 255.0
    assert np.abs(scaled - full).mean() < 0.02
    assert not np.allclose(scaled, full, atol=1e-4)  # it did take the reduced decode
    # A JPEG barely larger than the target is decoded at full scale: identical.
    small = make_image(tmp_path / "small.jpg", size=(70, 70), fmt="JPEG").read_bytes()
    np.testing.assert_allclose(
        decode_images(tf.constant([small]), 64, 3).numpy()[0],
        tf.image.resize(tf.io.decode_jpeg(small), [64, 64], antialias=True).numpy() / 255.0,
        atol=1e-6)
