"""bench.training.recipes: each recipe trains within its budget and is scored on the eval images."""
import numpy as np
import pytest
import tf_keras as keras

from bench.training.recipes import run_recipe

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("recipe", ["mixup", "progressive"])  # their own data paths
def test_a_recipe_trains_for_its_epochs_and_reports_eval_accuracy(recipe):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 32, 32, 3)).astype(np.float32)
    y, train = np.arange(40) % 2, np.arange(40) < 32
    try:
        row = run_recipe(recipe, x, y, train, budget_s=0.01, seed=0, batch=8)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert row["epochs"] == 2 and len(row["val_accuracy"]) == 2  # at least 2 epochs
    assert row["side"] == 32 and row["steps_per_s"] > 0
    assert 0 <= row["final_acc"] <= 1 and row["best_acc"] in row["val_accuracy"]


def test_gated_sharp_crops_train_from_the_larger_photos_and_score_the_smaller():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(40, 32, 32, 3)).astype(np.float32)
    larger = rng.normal(size=(40, 48, 48, 3)).astype(np.float32)
    y, train = np.arange(40) % 2, np.arange(40) < 32
    row = run_recipe("gated_sharp", x, y, train, budget_s=0.01, seed=0, batch=8, epochs=2,
                     test={32: x[~train]}, train_x=larger)
    assert row["side"] == 32 and len(row["val_accuracy"]) == 2
    # Scored on x at 32 px, by a gated model holding the trained weights.
    assert row["at_sides"][32][0] == round(row["final_acc"], 4)
    from bench.training.recipes import _batches  # the 48 px photos, cropped to 32 px batches
    onehot = np.eye(2, dtype=np.float32)[y]
    assert _batches(larger, onehot, "gated_sharp", 32, 0, 8).element_spec[0].shape == \
        (8, 32, 32, 3)


@pytest.mark.parametrize("recipe", ["sharp_crops", "gated_sharp"])
def test_sharp_recipes_refuse_to_run_without_larger_photos(recipe):
    x = np.zeros((8, 32, 32, 3), np.float32)
    y, train = np.arange(8) % 2, np.arange(8) < 6
    for train_x in (None, x):
        with pytest.raises(ValueError, match="train_x"):
            run_recipe(recipe, x, y, train, budget_s=0.01, seed=0, batch=4, train_x=train_x)


def test_cutmix_mixes_each_label_by_the_share_of_its_pixels_kept():
    import tensorflow as tf
    from bench.training.recipes import _cutmix
    images = np.stack([np.full((16, 16, 1), i, np.float32) for i in range(6)])
    mixed, labels = _cutmix(tf.constant(images), tf.constant(np.eye(6, dtype=np.float32)),
                            tf.constant([0, 7], tf.int64))
    for i, (image, label) in enumerate(zip(mixed.numpy(), labels.numpy())):
        other = 5 - i  # the reversed batch
        pasted = np.mean(image == other)
        assert np.all((image == i) | (image == other))  # one box of the other image
        assert label[i] == pytest.approx(1 - pasted) and label[other] == pytest.approx(pasted)
        assert label.sum() == pytest.approx(1)
    assert 0 < np.mean(mixed.numpy() != images) < 1  # some pixels pasted, not all


def test_fixed_epochs_and_scores_at_other_sides():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 32, 32, 3)).astype(np.float32)
    y, train = np.arange(40) % 2, np.arange(40) < 32
    larger = rng.normal(size=(8, 48, 48, 3)).astype(np.float32)
    row = run_recipe("sgd", x, y, train, budget_s=0.01, seed=0, batch=8, epochs=3,
                     test={32: x[~train], 48: larger, "crop": x[~train][:, 4:28, 4:28]})
    assert row["epochs"] == 3 and len(row["val_accuracy"]) == 3
    assert row["at_sides"][32][0] == round(row["final_acc"], 4)  # the same weights
    assert set(row["at_sides"]) == {32, 48, "crop"}
    assert all(0 <= a <= 1 for pair in row["at_sides"].values() for a in pair)


def test_center_crops_keep_the_side_and_the_models_normalization(tmp_path):
    from PIL import Image
    from bench.training.photo_candidates import channel_stats, load_folder, normalized
    from bench.training.recipes import center_crops
    rng = np.random.default_rng(2)
    for label in ("a", "b"):
        (tmp_path / label).mkdir()
        for i in range(12):
            pixels = rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / label / f"{i}.png")
    images, _, train = load_folder(str(tmp_path), 16)
    crops = center_crops(str(tmp_path), 16, [0.5, 1.0], channel_stats(images, train))
    plain = crops["crop 1"]
    assert set(crops) == {"crop 0.5", "crop 1"} and crops["crop 0.5"].shape[1:] == (16, 16, 3)
    assert 0 < len(plain) < 24 and plain.shape == crops["crop 0.5"].shape  # the eval split
    # At a fraction of 1 the crop is the whole photo at the trained side, normalized as
    # training normalizes its images.
    np.testing.assert_allclose(plain, normalized(images, train)[~train], atol=1e-6)
    assert not np.allclose(plain, crops["crop 0.5"])


@pytest.mark.parametrize("fraction", ["0", "1.2", "-0.5"])
def test_a_crop_outside_the_image_is_refused_naming_the_flag(fraction, capsys):
    from bench.training.recipes import main
    with pytest.raises(SystemExit) as exit_:
        main(["--data", "unused", "--test-crops", fraction])
    assert exit_.value.code == 2 and "--test-crops" in capsys.readouterr().err
