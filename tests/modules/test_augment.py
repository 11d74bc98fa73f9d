"""augment_batch: static shapes, off means identity, each image its own draw."""
import numpy as np
import tensorflow as tf

from modules.augment import Augmentation, augment_batch


def _batch():
    return tf.constant(np.random.default_rng(0).normal(size=(16, 10, 10, 3)), tf.float32)


def test_off_is_the_identity():
    images = _batch()
    assert augment_batch(images, Augmentation()) is images


def test_crop_keeps_the_shape_and_shifts_each_image_independently():
    tf.random.set_seed(1)
    images = tf.ones([16, 10, 10, 1])
    out = augment_batch(images, Augmentation(crop=3))
    assert out.shape == images.shape
    # Zero padding that came into view marks where each crop landed.
    masks = {tuple((out[i, :, :, 0].numpy() == 0).any(axis=1)) for i in range(16)}
    assert len(masks) > 1


def test_flip_and_color_keep_shape_and_stay_in_graph():
    images = _batch()
    aug = Augmentation(crop=2, flip=True, color=0.2)
    dataset = tf.data.Dataset.from_tensors(images).map(lambda b: augment_batch(b, aug))
    out = next(iter(dataset))
    assert out.shape == images.shape
    assert not np.allclose(out.numpy(), images.numpy())
