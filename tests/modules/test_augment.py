"""augment_batch: static shapes, off means identity, each image its own draw, the seed decides."""
import numpy as np
import pytest
import tensorflow as tf

from modules.augment import Augmentation, augment_batch, augment_batches


def _batch():
    return tf.constant(np.random.default_rng(0).normal(size=(16, 10, 10, 3)), tf.float32)


def test_off_is_the_identity():
    images = _batch()
    assert augment_batch(images, Augmentation(), (0, 0)) is images


def test_crop_keeps_the_shape_and_shifts_each_image_independently():
    images = tf.ones([16, 10, 10, 1])
    out = augment_batch(images, Augmentation(crop=3), (1, 0))
    assert out.shape == images.shape
    # Zero padding that came into view marks where each crop landed: its rows and columns.
    zero = out[..., 0].numpy() == 0
    offsets = {(tuple(zero[i].all(axis=1)), tuple(zero[i].all(axis=0))) for i in range(16)}
    assert len(offsets) > 4  # 49 possible offsets, 16 images
    # Every crop is a shifted copy: the ones (10x10 of them) all stay in view or are cut.
    assert (out.numpy().reshape(16, -1).sum(axis=1) <= 100).all()


def _blob(batch=16, side=21):
    """A centred Gaussian spot on black, as a digit sits in its frame."""
    grid = np.arange(side) - (side - 1) / 2
    spot = np.exp(-(grid[:, None] ** 2 + grid[None, :] ** 2) / 8.0)
    return tf.constant(np.broadcast_to(spot[None, :, :, None], (batch, side, side, 1)),
                       tf.float32)


def _centres(images):
    mass = images[..., 0]
    grid = np.arange(mass.shape[1])
    total = mass.sum(axis=(1, 2))
    return (mass.sum(axis=2) @ grid / total, mass.sum(axis=1) @ grid / total)


def test_the_warp_turns_about_the_centre_and_shifts_by_at_most_the_crop():
    images = _blob()
    turned = augment_batch(images, Augmentation(rotate=30), (5, 0)).numpy()
    rows, cols = _centres(turned)
    assert np.abs(rows - 10).max() < 0.05 and np.abs(cols - 10).max() < 0.05
    assert len({round(float(v), 3) for v in turned[:, 10, 13, 0]}) > 8  # own zoom each
    shifted = augment_batch(images, Augmentation(rotate=30, crop=2), (5, 0)).numpy()
    rows, cols = _centres(shifted)
    moved = np.hypot(rows - 10, cols - 10)
    assert moved.max() <= 2 * np.sqrt(2) + 0.05 and moved.max() > 0.5


def test_the_warp_fills_from_the_edges_and_stays_in_graph():
    # A grey image (a scan's paper) stays grey: no black corners come into view.
    grey = tf.fill([16, 12, 12, 1], 0.7)
    aug = Augmentation(rotate=45, crop=3)
    out = next(iter(tf.data.Dataset.from_tensors(grey).map(
        lambda b: augment_batch(b, aug, (6, 0)))))
    assert out.shape == grey.shape and np.allclose(out.numpy(), 0.7)
    again = augment_batch(_blob(), aug, (6, 1)).numpy()
    assert np.array_equal(again, augment_batch(_blob(), aug, (6, 1)).numpy())


def test_flip_and_color_keep_shape_and_stay_in_graph():
    images = _batch()
    aug = Augmentation(crop=2, flip=True, color=0.2)
    dataset = tf.data.Dataset.from_tensors(images).map(lambda b: augment_batch(b, aug, (0, 0)))
    out = next(iter(dataset))
    assert out.shape == images.shape
    assert not np.allclose(out.numpy(), images.numpy())


def test_flip_mirrors_some_images_and_keeps_the_others():
    images = _batch()
    out = augment_batch(images, Augmentation(flip=True), (2, 0)).numpy()
    flipped = [np.allclose(out[i], images.numpy()[i, :, ::-1]) for i in range(16)]
    kept = [np.allclose(out[i], images.numpy()[i]) for i in range(16)]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)


def test_color_shifts_and_scales_each_image_by_its_own_amount():
    images = _batch()
    out = augment_batch(images, Augmentation(color=0.2), (3, 0)).numpy()
    ratios = out.std(axis=(1, 2, 3)) / images.numpy().std(axis=(1, 2, 3))
    assert ((ratios > 0.79) & (ratios < 1.21)).all() and len(set(ratios.round(4))) == 16


def _dark_left_bright_right():
    return tf.concat([tf.zeros([16, 12, 6, 3]), tf.ones([16, 12, 6, 3])], axis=2)


def test_resized_crop_gives_each_image_its_own_box_and_keeps_the_shape():
    images = tf.constant(np.random.default_rng(1).normal(size=(16, 12, 12, 3)), tf.float32)
    out = augment_batch(images, Augmentation(scale=0.25), (4, 0))
    in_data = next(iter(tf.data.Dataset.from_tensors(images).map(
        lambda b: augment_batch(b, Augmentation(scale=0.25), (4, 0)))))
    assert out.shape == images.shape == in_data.shape
    assert len({float(v) for v in out.numpy().std(axis=(1, 2, 3)).round(4)}) == 16


def test_resized_crops_come_out_at_the_side_asked_and_need_crops_to_change_it():
    images = _batch()  # 10 px
    aug = Augmentation(scale=0.25, flip=True, color=0.2)
    out = augment_batch(images, aug, (4, 0), size=6)
    mapped = augment_batches(tf.data.Dataset.from_tensors((images, 0)), aug, 4, size=6)
    assert out.shape == mapped.element_spec[0].shape == (16, 6, 6, 3)  # static in a map
    assert len({float(v) for v in out.numpy().std(axis=(1, 2, 3)).round(4)}) == 16
    with pytest.raises(ValueError, match="resized crops"):
        augment_batch(images, Augmentation(flip=True), (4, 0), size=6)
    with pytest.raises(ValueError, match="resized crops"):  # before any map, even when off
        augment_batches(tf.data.Dataset.from_tensors((images, 0)), Augmentation(), 4, size=6)


def test_a_resized_crop_flips_half_the_images_only_when_flips_are_on():
    def brighter_on_the_right(aug):
        out = augment_batch(_dark_left_bright_right(), aug, (5, 0)).numpy()
        return out[:, :, 9:].mean(axis=(1, 2, 3)) > out[:, :, :3].mean(axis=(1, 2, 3))
    assert brighter_on_the_right(Augmentation(scale=0.95)).all()
    flipped = ~brighter_on_the_right(Augmentation(scale=0.95, flip=True))
    assert 0 < flipped.sum() < 16


def test_the_seed_alone_decides_the_draws_eagerly_and_in_a_parallel_map():
    aug = Augmentation(crop=2, flip=True, color=0.2, scale=0.5)
    images = _batch()
    eager = augment_batch(images, aug, (7, 3)).numpy()
    batches = tf.data.Dataset.from_tensors((images, 0)).repeat(8)
    for _ in range(2):  # two pipelines, eight batches each, four calls at a time
        out = [b.numpy() for b, _ in augment_batches(batches, aug, 7, num_parallel_calls=4)]
        np.testing.assert_array_equal(out[3], eager)  # batch 3's key is (7, 3) in any run
        assert len({o.tobytes() for o in out}) == 8  # ...and every batch has its own draws
    assert not np.allclose(augment_batch(images, aug, (8, 3)).numpy(), eager)
