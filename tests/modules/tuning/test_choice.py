"""The rule that keeps the plan's settings unless a trial beats them by a meaningful margin."""
import pytest

from modules.tuning.choice import MARGIN_STANDARD_ERRORS, choose, describe, required_margin


def test_one_image_more_of_159_is_not_enough():
    # The bundled digits: the plan 153/159 on the holdout, the best trial 154/159.
    choice = choose({"0": 153 / 159, "1": 0.90, "2": 154 / 159}, "0", 159)
    assert choice["plan_won"] and choice["trained"] == "0" and choice["best_trial"] == "2"
    assert choice["margin"] == pytest.approx(1 / 159)
    assert choice["margin_required"] == pytest.approx(0.0219, abs=1e-4)  # 3.5 images


def test_a_trial_that_beats_the_plan_by_more_than_the_margin_is_trained():
    choice = choose({"0": 0.60, "1": 0.77, "2": 0.70}, "0", 410)
    assert not choice["plan_won"] and choice["trained"] == "1"
    assert choice["margin"] == pytest.approx(0.17) and choice["margin"] > choice["margin_required"]


def test_the_margin_shrinks_as_the_holdout_grows():
    small, large = required_margin(0.9, 0.9, 100), required_margin(0.9, 0.9, 10_000)
    assert small == pytest.approx(10 * large, rel=0.03)
    # one standard error of the difference of two independent accuracies
    assert large == pytest.approx(MARGIN_STANDARD_ERRORS * (2 * 0.09 / 10_000) ** 0.5, rel=0.01)


def test_a_perfect_plan_still_has_a_margin():
    assert required_margin(1.0, 1.0, 20) > 0.04  # one right and one wrong answer added
    assert choose({"0": 1.0, "1": 1.0}, "0", 20)["trained"] == "0"  # a tie keeps the plan


def test_the_plan_alone_or_without_a_score():
    alone = choose({"0": 0.5}, "0", 10)
    assert alone["trained"] == "0" and alone["margin"] is None
    assert describe(alone) == "kept the plan's settings (trial 0): no other trial completed"
    failed = choose({"1": 0.4, "2": 0.5}, "0", 10)  # the plan's trial did not complete
    assert failed["trained"] == "2" and not failed["plan_won"]


def test_the_verdict_reads_as_one_line():
    kept = choose({"0": 0.9623, "1": 0.9686}, "0", 159)
    assert describe(kept) == ("kept the plan's settings (trial 0, holdout 0.9623): the best "
                              "other, trial 1 (0.9686), is +0.0063 from it, where 159 "
                              "held-out images require more than +0.0219")
    won = choose({"0": 0.60, "1": 0.77}, "0", 410)
    assert describe(won) == ("trained trial 1 (holdout 0.7700): +0.1700 over the plan's "
                             "0.6000 (trial 0), where 410 held-out images require more than "
                             "+0.0318")
