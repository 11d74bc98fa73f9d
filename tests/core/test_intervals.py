"""Wilson's interval and Newcombe's paired one, against published values."""
import pytest

from core.intervals import contains, paired_difference, wilson, wilson_of


@pytest.mark.parametrize("right, total, low, high", [
    # Newcombe (1998), Stat Med 17:857-872, Table II, method 3 (Wilson score)
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718)])
def test_wilson_matches_newcombes_published_intervals(right, total, low, high):
    assert wilson(right, total) == pytest.approx((low, high), abs=5e-5)


def test_wilson_stays_inside_zero_one_and_is_never_empty():
    assert wilson(20, 20) == (pytest.approx(0.8389, abs=5e-5), 1.0)  # the Wald one: 1-1
    assert wilson(0, 1)[0] == 0.0 and wilson(1, 1)[1] == 1.0
    low, high = wilson(400, 500)
    assert low < 0.8 < high and high - low < 0.08
    assert wilson(400, 500, 0.99)[0] < low  # a higher level, a wider interval


def test_wilson_of_a_float32_share_recovers_the_count():
    import numpy as np
    share = float(np.float32(163 / 203))  # TFMA's accuracy, read back as a double
    assert wilson_of(share, 203) == wilson(163, 203)


@pytest.mark.parametrize("right, total, confidence", [(3, 2, 0.95), (-1, 4, 0.95),
                                                      (1, 0, 0.95), (1, 2, 1.0)])
def test_wilson_refuses_what_is_not_a_count(right, total, confidence):
    with pytest.raises(ValueError):
        wilson(right, total, confidence)


def test_paired_difference_matches_the_published_cavo_example():
    # Cavo et al. (2012) as Fagerland, Lydersen & Laake analyse it (Stat Med 2014;
    # "Statistical Analysis of Contingency Tables", 2017, ch. 8): the Newcombe
    # square-and-add interval for the difference is -0.0621 (-0.1186 to -0.0046).
    low, high = paired_difference(both=59, first_only=6, second_only=16, neither=80)
    assert (low, high) == pytest.approx((-0.1186, -0.0046), abs=5e-5)


def test_pairing_narrows_the_interval_when_the_models_agree():
    # The same marginal accuracies (0.90 and 0.88 on 500 images), agreeing on all but 10
    # images or disagreeing on 110: agreement is what makes the paired interval narrow.
    agree = paired_difference(both=440, first_only=10, second_only=0, neither=50)
    disagree = paired_difference(both=390, first_only=60, second_only=50, neither=0)
    assert agree[0] > 0 and disagree[0] < 0 < disagree[1]
    assert agree[1] - agree[0] < (disagree[1] - disagree[0]) / 2


def test_identical_models_differ_by_nothing_within_a_narrow_interval():
    low, high = paired_difference(both=180, first_only=0, second_only=0, neither=20)
    # symmetric about 0, and a fraction of one accuracy's own Wilson width (0.08): the
    # continuity correction of the correlation keeps it from collapsing to nothing
    assert low == pytest.approx(-high) and 0 < high < 0.02
    # the same counts the other way round give the mirrored interval
    assert paired_difference(10, 7, 3, 5) == pytest.approx(
        tuple(-x for x in reversed(paired_difference(10, 3, 7, 5))))


def test_paired_difference_refuses_no_images_and_negative_counts():
    for counts in ((0, 0, 0, 0), (1, -1, 0, 0)):
        with pytest.raises(ValueError):
            paired_difference(*counts)


def test_contains_includes_the_bounds():
    assert contains((0.763, 0.833), 0.8) and contains((0.763, 0.833), 0.833)
    assert not contains((0.763, 0.833), 0.85)
