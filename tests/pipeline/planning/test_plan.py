"""The training plan: each choice from the data and hardware, and flags winning over it."""
import pytest

from settings.config import PipelineConfig
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import make_plan, plan_lines

GB = 1 << 30
DIGITS = DataFacts(10, 800, 200, 28, 28, 28, 1)
# Camera photos of mixed sizes: most 500 px on the long side, one 4000x3000.
PHOTOS = DataFacts(2, 960, 240, 500, 400, 4000, 3)


def plan(facts, hardware="cpu", **flags):
    return make_plan(PipelineConfig.from_values(**flags), facts, hardware, 24 * GB)


def test_small_grayscale_images_get_the_cnn_at_their_own_size():
    p = plan(DIGITS)
    assert (
    p.config.model.network,
    p.config.model.image_size,
    p.config.model.channels) == (
        "cnn",
        28,
         1)
    c = p.config
    assert (c.augment.crop, c.augment.flip, c.evaluation.accuracy_threshold) == (2, False, 0.9)


def test_the_cnn_is_half_as_wide_on_a_small_set_only_and_the_flag_wins():
    small, fashion = plan(DIGITS), plan(DataFacts(10, 60_000, 10_000, 28, 28, 28, 1))
    assert (small.config.model.width, fashion.config.model.width) == (0.5, 1.0)
    assert small.config.training.learning_rate == fashion.config.training.learning_rate == 1e-3
    assert "800 train images" in small.reasons["model_width"]
    assert "width 0.5: " in plan_lines(small)[0] and "width" not in plan_lines(fashion)[0]
    assert plan(DIGITS, model_width=1.0).config.model.width == 1.0
    assert plan(PHOTOS).config.model.width == 1.0
    params = small.trainer_params()
    assert params.model_width == 0.5


def test_rgb_photos_get_the_photo_model_at_a_size_for_the_hardware_not_the_largest():
    cpu, gpu = plan(PHOTOS), plan(PHOTOS, "gpu")
    assert (cpu.config.model.network, cpu.config.model.image_size, gpu.config.model.image_size) == (
        "photo", 128, 192)
    assert "largest 4000" in cpu.reasons["image_size"]
    assert (cpu.config.augment.flip, cpu.config.augment.scale) == (True, 0.25)
    assert cpu.config.evaluation.accuracy_threshold == 0.7


def test_small_photos_are_not_upscaled_and_large_grayscale_scans_get_the_photo_model():
    assert plan(DataFacts(10, 5000, 1000, 32, 32, 32, 3)).config.model.image_size == 32
    assert plan(DataFacts(10, 5000, 1000, 100, 100, 100, 3)).config.model.image_size == 96
    scans = plan(DataFacts(3, 500, 100, 1200, 1100, 2000, 1))
    model = scans.config.model
    assert (model.network, model.channels, model.image_size) == ("photo", 1, 128)


def test_epochs_come_from_the_train_split():
    assert plan(DIGITS).config.training.epochs == 40
    assert plan(DataFacts(10, 60_000, 10_000, 28, 28, 28, 1)).config.training.epochs == 15
    tfrecords = plan(DataFacts(None, None, None, 28, 28, 28, 1))
    assert tfrecords.config.training.epochs is None  # sized by the Trainer on the ingested split
    assert tfrecords.trainer_params().epochs is None


def test_flags_always_win_over_the_plan():
    p = plan(PHOTOS, model="resnet", image_size=64, epochs=5, learning_rate=0.01,
             augment_flip=False, accuracy_threshold=0.5, batch_size=16, label_smoothing=0.0)
    c = p.config
    assert (c.model.network, c.model.image_size, c.training.epochs, c.training.learning_rate,
            c.augment.flip, c.evaluation.accuracy_threshold, c.training.batch_size,
            c.training.label_smoothing) == (
        "resnet", 64, 5, 0.01, False, 0.5, 16, 0.0)
    assert p.reasons["image_size"] == "given (--image-size)"
    assert p.reasons["augment_flip"] == "given (--augment-flip)"


def test_train_steps_replace_epochs():
    p = plan(DIGITS, train_steps=100)
    assert p.config.training.epochs is None and p.trainer_params().train_steps == 100
    assert "--train-steps 100" in p.reasons["epochs"]


def test_the_header_says_what_was_chosen_and_why():
    text = "\n".join(plan_lines(plan(PHOTOS)))
    assert "model photo" in text and "image 128x128x3" in text
    assert "40 epochs of 15 steps" in text and "bless at accuracy >= 0.7" in text


def test_the_decode_cache_budget_shrinks_with_memory():
    assert make_plan(PipelineConfig.from_values(), DIGITS, "cpu", 24 * GB).cache_bytes == GB
    assert make_plan(PipelineConfig.from_values(), DIGITS, "cpu", 4 * GB).cache_bytes == GB // 2


@pytest.mark.parametrize("name", ["image_size", "model", "epochs", "accuracy_threshold"])
def test_the_plan_json_has_every_value_and_a_reason(name):
    data = plan(PHOTOS).to_json()
    assert name in data["values"] and data["reasons"][name]


def test_a_few_hundred_images_get_a_smaller_batch_for_enough_steps_an_epoch():
    assert plan(DIGITS).config.training.batch_size == 64  # 800 // 64 = 12 steps
    small = plan(DataFacts(2, 300, 75, 500, 500, 500, 3))
    assert small.config.training.batch_size == 16
    assert "300 train images" in small.reasons["batch_size"]
    assert plan(DataFacts(2, 40, 10, 500, 500, 500, 3)).config.training.batch_size == 8
    assert plan(DataFacts(2, 40, 10, 500, 500, 500, 3),
                batch_size=64).config.training.batch_size == 64
    assert plan(DataFacts(None, None, None, 28, 28, 28, 1)).config.training.batch_size == 64
    assert plan(DataFacts(2, 40, 10, 500, 500, 500, 3),
                train_steps=30).config.training.batch_size == 64


def test_the_cnn_pads_and_crops_small_sets_only_and_trains_its_whole_schedule():
    fashion = DataFacts(10, 60_000, 10_000, 28, 28, 28, 1)
    small, large = plan(DIGITS).config, plan(fashion)
    assert small.augment.crop == 2 and large.config.augment.crop == 0
    assert small.augment.rotate == 15 and large.config.augment.rotate == 0
    assert "underfit" in large.reasons["augment_crop"]
    assert plan(fashion, augment_crop=2).config.augment.crop == 2  # a flag wins
    assert plan(fashion, augment_rotate=5.0).config.augment.rotate == 5
    assert plan(PHOTOS).config.augment.rotate == 0
    assert small.training.early_stopping_patience == 0


@pytest.mark.parametrize("flags", [{}, {"model": "resnet"},
                                   {"model": "mobilenet_v2", "weights": "imagenet"}])
def test_no_plan_lets_the_eval_split_choose_the_epoch_and_the_flag_says_when_it_does(flags):
    for facts in (DIGITS, PHOTOS):
        planned = plan(facts, **flags)
        assert planned.config.training.early_stopping_patience == 0
        assert "eval split's val_loss would choose" in planned.reasons[
            "early_stopping_patience"]
        assert any("no early stopping, so the eval split does not choose the epoch" in line
                   for line in plan_lines(planned))
    asked = plan(PHOTOS, early_stopping_patience=8, **flags)
    assert asked.config.training.early_stopping_patience == 8
    assert any("best weights kept: the eval accuracy is of an epoch chosen on the eval images"
               in line for line in plan_lines(asked))


def test_photos_are_served_with_their_mirror_images_averaged_and_digits_are_not():
    from pipeline.planning.model_source import MODULE, ModelSource
    photos, digits = plan(PHOTOS), plan(DIGITS)
    assert (photos.config.model.test_flip, digits.config.model.test_flip) == (True, False)
    assert any("test-time flip: the served model averages" in line
               for line in plan_lines(photos))
    assert "test-time flip: off: digits and text" in "\n".join(plan_lines(digits))
    assert plan(PHOTOS, test_flip=False).config.model.test_flip is False
    # Data said not to be mirror-symmetric in training is not served mirrored either.
    unflipped = plan(PHOTOS, augment_flip=False)
    assert unflipped.config.model.test_flip is False
    assert "training has no flips" in unflipped.reasons["test_flip"]
    assert plan(DIGITS, test_flip=True).config.model.test_flip is True
    # A module file's own network keeps its serving cost unless the flag asks.
    module = ModelSource("module_file", MODULE, path="net.py")
    mine = make_plan(PipelineConfig.from_values(module_file="net.py"), PHOTOS, "cpu", 24 * GB,
                     module)
    assert mine.config.model.test_flip is False and "module file" in mine.reasons["test_flip"]
    given = make_plan(PipelineConfig.from_values(module_file="net.py", test_flip=True), PHOTOS,
                      "cpu", 24 * GB, module)
    assert given.config.model.test_flip is True
