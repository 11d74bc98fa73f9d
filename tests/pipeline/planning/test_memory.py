"""The memory check: what training needs, and the refusal before anything heavy runs."""
import os

import pytest

from settings.config import PipelineConfig
from core.errors import UsageError
from pipeline.planning.memory import check_fits, estimate, memory_limit, memory_line
from pipeline.planning.data_facts import DataFacts
from pipeline.planning.plan import make_plan
from tests.support.cli import imagepipe

pytestmark = pytest.mark.integration  # real TensorFlow, Keras, Beam or TFT work

GB = 1 << 30
PHOTOS = DataFacts(2, 960, 240, 500, 400, 4000, 3)


def test_the_limit_is_positive_and_at_most_physical_memory():
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < memory_limit() <= physical


def test_the_cnn_grows_with_the_square_of_the_side_and_the_photo_model_does_not():
    def weights(model, size):
        plan = make_plan(PipelineConfig.from_values(model=model, image_size=size), PHOTOS,
                         "cpu", 24 * GB)
        return estimate(plan, 2, 24 * GB).params
    assert weights("cnn", 256) > 3.5 * weights("cnn", 128)
    assert weights("photo", 256) == weights("photo", 128)


def test_the_planned_default_fits_and_a_huge_image_size_is_refused_naming_the_flags():
    fits = make_plan(PipelineConfig.from_values(), PHOTOS, "cpu", 24 * GB)
    check_fits(estimate(fits, 2, 24 * GB), fits)
    huge = make_plan(PipelineConfig.from_values(model="cnn", image_size=1000), PHOTOS, "cpu",
                     24 * GB)
    found = estimate(huge, 2, 24 * GB)
    assert found.total_bytes > found.allowed_bytes
    with pytest.raises(UsageError) as refused:
        check_fits(found, huge)
    for words in ("--image-size (now 1000)", "--batch-size (now 64)", "--model (now cnn"):
        assert words in str(refused.value)


def test_run_with_a_huge_image_size_exits_2_and_trains_nothing(tmp_path, mnist_subset):
    output = tmp_path / "out"
    result = imagepipe("run", "--data", str(mnist_subset), "--output", str(output),
                       "--image-size", "3000", timeout=180)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "--image-size (now 3000)" in result.stderr.strip().splitlines()[-1]
    assert not (output / "tfx").exists()  # no component ran


def test_plan_prints_the_choices_and_trains_nothing(tmp_path, mnist_subset):
    result = imagepipe("plan", "--data", str(mnist_subset), "--output", str(tmp_path / "o"),
                       timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "model cnn" in result.stdout and "image 28x28x1" in result.stdout
    assert "bless at accuracy >= 0.9" in result.stdout and "memory: about" in result.stdout
    assert not (tmp_path / "o").exists()


def test_a_search_is_sized_for_the_widest_model_it_may_try():
    planned = make_plan(PipelineConfig.from_values(), PHOTOS, "cpu", 24 * GB)
    tuned = make_plan(PipelineConfig.from_values(tune=True), PHOTOS, "cpu", 24 * GB)
    alone, searched = estimate(planned, 2, 24 * GB), estimate(tuned, 2, 24 * GB)
    assert searched.widest_trial and not alone.widest_trial
    assert searched.params > 1.5 * alone.params
    assert searched.activation_bytes > alone.activation_bytes
    assert "the widest model the search may try" in memory_line(searched)
    small = estimate(tuned, 2, int(searched.total_bytes))  # allowed is a share of it
    with pytest.raises(UsageError, match="leave out --tune"):
        check_fits(small, tuned)
