"""The Trainer's pure helpers: epoch plan and the label vocabulary location."""
import pytest

from modules.trainer import epoch_plan, read_labels


@pytest.mark.parametrize("steps, plan", [(400, (10, 40)), (30, (10, 3)), (25, (5, 5)),
                                         (23, (1, 23)), (1, (1, 1))])
def test_epoch_plan_trains_exactly_the_requested_steps(steps, plan):
    assert epoch_plan(steps) == plan


def test_epoch_plan_rejects_zero_steps():
    with pytest.raises(ValueError, match="train_steps"):
        epoch_plan(0)


def test_labels_are_read_from_beside_the_splits(tmp_path):
    (tmp_path / "Split-train").mkdir()
    (tmp_path / "labels.txt").write_text("cat\ndog\némeu\n")
    assert read_labels(str(tmp_path / "Split-train" / "*")) == ["cat", "dog", "émeu"]
