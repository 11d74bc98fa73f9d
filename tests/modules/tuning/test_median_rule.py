"""The median stopping rule that ends bad trials early."""
from modules.tuning.search import MEDIAN_FROM_EPOCH, _below_median, median_from


def test_a_trial_below_the_median_of_the_others_at_the_same_epoch_stops():
    others = [[0.5, 0.7, 0.8], [0.4, 0.6, 0.9], [0.3, 0.65, 0.7]]
    assert _below_median([0.2, 0.5], others)  # median best at epoch 2: 0.65
    assert not _below_median([0.2, 0.66], others)


def test_no_verdict_before_enough_epochs_or_trials():
    others = [[0.9, 0.9], [0.9, 0.9]]
    assert not _below_median([0.1] * (MEDIAN_FROM_EPOCH - 1), others)
    assert not _below_median([0.1, 0.1], others[:1])  # one trial is no median
    assert not _below_median([0.1, 0.1, 0.1], others)  # no other trial got that far


def test_a_trial_is_judged_on_its_best_so_far():
    others = [[0.5, 0.6], [0.5, 0.6]]
    assert not _below_median([0.7, 0.5], others)  # its first epoch already beat them


def test_a_long_trial_is_judged_only_after_a_quarter_of_its_epochs():
    assert median_from(4) == MEDIAN_FROM_EPOCH and median_from(20) == 5
    others = [[0.9] * 20, [0.9] * 20]
    assert not _below_median([0.2] * 4, others, median_from(20))  # a slow start
    assert _below_median([0.2] * 5, others, median_from(20))
