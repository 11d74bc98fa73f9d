"""The report's PNGs: each one renders headless, is a real picture, and marks mistakes in red."""
import numpy as np
import pytest
from PIL import Image

from report import charts

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work


def _pixels(path) -> np.ndarray:
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB")).astype(int)


def red_pixels(path) -> int:
    """Pixels of the 'wrong' colour (#d62728), allowing for anti-aliasing."""
    p = _pixels(path)
    return int(((p[..., 0] > 170) & (p[..., 1] < 100) & (p[..., 2] < 100)).sum())


def assert_real_picture(path, min_colours=20):
    pixels = _pixels(path)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) >= min_colours  # not one colour


def _digits(count, channels=1, seed=0):
    return list(np.random.default_rng(seed).integers(0, 255, (count, 12, 12, channels)))


def _by_epoch(**metrics):
    """{metric: {epoch from 1: value}} from per-epoch lists."""
    return {name: dict(enumerate(values, 1)) for name, values in metrics.items()}


def test_gallery_marks_only_wrong_predictions_in_red(tmp_path):
    images, truth = _digits(6), ["a", "b", "c", "a", "b", "c"]
    right = charts.gallery(images, truth, truth, str(tmp_path / "right.png"))
    assert_real_picture(right)
    assert red_pixels(right) == 0
    guesses = ["a", "a", "a", "a", "a", "a"]  # a model that always says "a": 4 wrong
    wrong = charts.gallery(images, truth, guesses, str(tmp_path / "wrong.png"))
    assert red_pixels(wrong) > 20  # four small red titles


@pytest.mark.parametrize("channels", [1, 3])
def test_samples_show_normalized_images_of_each_class(tmp_path, channels):
    normalized = {"cat": [x / 128.0 - 1 for x in _digits(3, channels)],
                  "dog": [x / 128.0 - 1 for x in _digits(2, channels, seed=1)]}
    assert_real_picture(charts.samples(normalized, str(tmp_path / "s.png")))


def test_confusion_per_class_and_curves_render(tmp_path):
    classes = ["0", "1", "2"]
    assert_real_picture(charts.confusion([[5, 1, 0], [0, 6, 0], [2, 0, 3]], classes,
                                         str(tmp_path / "c.png")))
    bars = charts.per_class({"0": 0.9, "1": 1.0, "2": 0.4, "3": None}, 0.8,
                            str(tmp_path / "p.png"))
    assert_real_picture(bars)
    assert red_pixels(bars) > 100  # class "2" is below the overall line
    above = charts.per_class({"0": 0.9, "1": 1.0}, 0.8, str(tmp_path / "above.png"))
    assert red_pixels(above) == 0  # red marks only the classes below the line
    history = {"train": _by_epoch(loss=[1.0, 0.5, 0.3], accuracy=[0.5, 0.8, 0.9]),
               "validation": _by_epoch(loss=[0.8, 0.6, 0.5], accuracy=[0.6, 0.7, 0.8])}
    assert_real_picture(charts.curves(history, str(tmp_path / "t.png")))


def test_per_class_bars_carry_their_95_percent_intervals(tmp_path):
    accuracy = {"0": 0.5, "1": 0.6, "2": None}
    intervals = {"0": {"examples": 8, "interval": [0.2, 0.8]},
                 "1": {"examples": 10, "interval": [0.3, 0.85]}, "2": None}

    def whiskers(path):  # the error bars' dark grey (#444), which nothing else uses
        p = _pixels(path).astype(int)
        return int(((abs(p - 68) < 20).all(axis=-1)).sum())
    plain = charts.per_class(accuracy, 0.8, str(tmp_path / "plain.png"))
    marked = charts.per_class(accuracy, 0.8, str(tmp_path / "ci.png"), intervals)
    assert_real_picture(marked)
    assert whiskers(marked) > whiskers(plain) + 100


def test_two_phase_curves_mark_where_fine_tuning_starts(tmp_path):
    from report.collect import head_epochs
    training = {"phases": [{"phase": "head", "epoch_seconds": [3.0, 2.0]},
                           {"phase": "fine-tune", "epoch_seconds": [4.0, 4.0, 4.0]}]}
    assert head_epochs(training) == 2
    assert head_epochs({"phases": [{"phase": "train", "epoch_seconds": [1.0]}]}) is None
    assert head_epochs(None) is None
    history = {"train": _by_epoch(loss=[1.0, 0.8, 0.5, 0.4, 0.3], accuracy=[0.5] * 5),
               "validation": _by_epoch(loss=[0.9, 0.7, 0.6, 0.5, 0.5], accuracy=[0.6] * 5)}
    plain = charts.curves(history, str(tmp_path / "plain.png"))
    marked = charts.curves(history, str(tmp_path / "marked.png"), head_epochs(training))
    assert_real_picture(marked)
    assert open(plain, "rb").read() != open(marked, "rb").read()


def test_the_history_keeps_each_value_at_its_epoch_when_validation_skips_some(tmp_path):
    import tensorflow as tf
    from report.collect import training_history
    for split, epochs in (("train", range(6)), ("validation", (0, 3, 5))):
        with tf.summary.create_file_writer(str(tmp_path / split)).as_default():
            for epoch in epochs:  # Keras' TensorBoard writes epoch summaries at step = epoch
                tf.summary.scalar("epoch_loss", 1.0 / (epoch + 1), step=epoch)
                tf.summary.scalar("epoch_accuracy", epoch / 10, step=epoch)
    history = training_history(str(tmp_path))
    assert list(history["train"]["loss"]) == [1, 2, 3, 4, 5, 6]
    assert history["validation"]["accuracy"] == pytest.approx({1: 0.0, 4: 0.3, 6: 0.5})
    sparse = charts.curves(history, str(tmp_path / "sparse.png"))
    packed = {"train": history["train"],
              "validation": {m: dict(enumerate(v.values(), 1))
                             for m, v in history["validation"].items()}}
    assert open(sparse, "rb").read() != open(charts.curves(
        packed, str(tmp_path / "packed.png")), "rb").read()
