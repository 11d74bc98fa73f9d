"""The rule that keeps the plan's settings unless a trial is significantly better on the same
held-out images: McNemar's exact test, Holm's correction, the decision and its line."""
import dataclasses
from fractions import Fraction

import pytest

from modules.tuning.choice import choose, compare, describe, paired_counts
from modules.tuning.settings import TuningParams, holdout_size, planned_holdout
from modules.tuning.significance import (ALPHA, fewest_gained, holdout_needed, holm,
                                         mcnemar_p, rule_line, significant)

SETTINGS = TuningParams(trials=10, minutes=30.0, epoch_share=0.5, holdout_share=0.2,
                        max_examples=20_000, max_bytes=384 << 20, initial_points=5)


def _results(right: int, total: int = 159, wrong_first: int = 0):
    """Per-image results: `wrong_first` wrong, then `right` right, then wrong."""
    return [False] * wrong_first + [True] * right + [False] * (total - right - wrong_first)


def test_the_exact_p_value_is_the_binomial_tail_of_the_disagreements():
    assert mcnemar_p(0, 0) == 1  # no disagreement: no evidence
    assert mcnemar_p(1, 0) == Fraction(1, 2)
    assert mcnemar_p(3, 0) == Fraction(1, 8)
    assert mcnemar_p(3, 1) == Fraction(4 + 1, 16)  # C(4,3) + C(4,4) of 2^4
    assert mcnemar_p(2, 2) == Fraction(6 + 4 + 1, 16)
    assert mcnemar_p(0, 3) == 1  # one-sided: a worse rival is no evidence at all
    assert mcnemar_p(8, 0) * 9 <= Fraction(1, 20) < mcnemar_p(7, 0) * 9
    with pytest.raises(ValueError, match="cannot be negative"):
        mcnemar_p(-1, 2)


def test_the_p_value_matches_scipys_one_sided_binomial_test():
    stats = pytest.importorskip("scipy.stats")
    for gained in range(0, 30, 3):
        for lost in range(0, 30, 4):
            if gained + lost:
                expected = stats.binomtest(gained, gained + lost, 0.5, "greater").pvalue
                assert float(mcnemar_p(gained, lost)) == pytest.approx(expected, rel=1e-9)


def test_holm_multiplies_the_ith_smallest_by_k_minus_i_plus_1_and_never_decreases():
    p = {"a": Fraction(1, 100), "b": Fraction(4, 100), "c": Fraction(3, 100)}
    assert holm(p) == {"a": Fraction(3, 100), "b": Fraction(6, 100), "c": Fraction(6, 100)}
    assert holm({"a": Fraction(1, 2), "b": Fraction(9, 10)}) == {"a": 1, "b": 1}  # capped
    assert holm({"only": Fraction(1, 7)}) == {"only": Fraction(1, 7)}
    assert holm({}) == {}


def test_a_p_value_equal_to_alpha_is_significant():
    assert significant(Fraction(1, 20)) and ALPHA == 0.05
    assert not significant(Fraction(1, 20) + Fraction(1, 10**12))
    assert significant(Fraction(1, 40) * 2)  # a Holm-adjusted p exactly at alpha


def test_paired_counts_are_the_images_where_the_two_disagree():
    assert paired_counts([1, 1, 0, 0, 1], [1, 0, 1, 1, 1]) == (2, 1)
    with pytest.raises(ValueError, match="different holdouts"):
        paired_counts([1, 0], [1])


def test_one_image_more_of_159_is_not_enough():
    # The bundled digits: the plan 153/159 on the holdout, the best trial 154/159.
    choice = choose({"0": _results(153), "1": _results(143), "2": _results(154)}, "0")
    assert choice["plan_won"] and choice["trained"] == "0" and choice["best_trial"] == "2"
    assert choice["best_score"] == pytest.approx(154 / 159)
    assert choice["p_value"] == 1.0  # Holm: 2 * 1/2
    assert choice["test"] == "mcnemar_exact_holm" and choice["holdout_images"] == 159


def test_a_trial_significantly_better_on_the_same_images_is_trained():
    plan = _results(80, 100)  # right on the first 80
    rival = _results(85, 100, wrong_first=5)  # loses 5 of those, gains 10 more
    choice = choose({"0": plan, "1": rival, "2": _results(60, 100)}, "0")
    assert choice["plan_won"]  # 10 gained, 5 lost: p = 0.15
    rival = _results(95, 100)
    choice = choose({"0": plan, "1": rival, "2": _results(60, 100)}, "0")
    assert not choice["plan_won"] and choice["trained"] == choice["best_trial"] == "1"
    assert choice["p_value"] == pytest.approx(2 / 2 ** 15)  # 15 gained, 0 lost; Holm: x2
    assert [(row["gained"], row["lost"]) for row in choice["rivals"]] == [(15, 0), (0, 20)]


def test_of_several_significant_rivals_the_most_accurate_wins():
    plan = _results(70, 100)
    rows = compare({"0": plan, "1": _results(90, 100), "2": _results(95, 100)}, "0")
    assert all(row["p_holm"] <= Fraction(1, 20) for row in rows)
    assert choose({"0": plan, "1": _results(90, 100), "2": _results(95, 100)}, "0")[
        "trained"] == "2"
    # Equally accurate: the one with fewer losses (a smaller p-value) wins.
    scattered = _results(95, 100, wrong_first=5)  # 30 gained, 5 lost
    assert choose({"0": plan, "1": scattered, "2": _results(95, 100)}, "0")["trained"] == "2"
    assert choose({"0": plan, "1": _results(95, 100), "2": _results(95, 100)}, "0")[
        "trained"] == "1"  # a tie throughout: the earliest


def test_the_most_accurate_rival_may_lose_where_a_consistent_one_wins():
    plan = _results(80, 100)
    noisy = _results(88, 100, wrong_first=10)  # 18 gained, 10 lost: not significant
    steady = _results(87, 100)  # 7 gained, none lost: p = 1/128, Holm 1/64
    choice = choose({"0": plan, "1": noisy, "2": steady}, "0")
    assert not choice["plan_won"] and choice["trained"] == choice["best_trial"] == "2"


def test_the_plan_alone_or_without_results():
    alone = choose({"0": [True, False]}, "0")
    assert alone["trained"] == "0" and alone["plan_won"] and alone["p_value"] is None
    assert describe(alone) == "kept the plan's settings (trial 0): no other trial completed"
    failed = choose({"1": [1, 0, 0], "2": [1, 1, 0]}, "0")  # the plan's trial did not complete
    assert failed["trained"] == "2" and not failed["plan_won"] and failed["p_value"] is None
    assert describe(failed) == "trained trial 2: the plan's own trial did not complete"
    with pytest.raises(ValueError, match="no trial"):
        choose({}, "0")


def test_the_verdict_reads_as_one_line_with_the_test_p_value_and_alpha():
    kept = choose({"0": _results(153), "1": _results(154)}, "0")
    assert describe(kept) == (
        "kept the plan's settings (trial 0, holdout 0.9623): the best other, trial 1 "
        "(0.9686), is right on 1 held-out images the plan got wrong and wrong on 0 it got "
        "right (of 159); McNemar's exact test, Holm-adjusted over 1 rival: p = 0.5 > alpha "
        "0.05")
    won = choose({"0": _results(60, 100), "1": _results(77, 100), "2": _results(50, 100)}, "0")
    assert describe(won) == (
        "trained trial 1 (holdout 0.7700): against the plan's trial 0 (0.6000) it is right on "
        "17 held-out images the plan got wrong and wrong on 0 it got right (of 100); "
        "McNemar's exact test, Holm-adjusted over 2 rivals: p = 1.526e-05 <= alpha 0.05")


def test_a_choice_from_before_the_paired_test_still_reads():
    old = {"trained": "0", "plan_won": True, "plan_trial": "0", "plan_score": 0.62,
           "best_trial": "1", "best_score": 0.91, "margin": 0.29, "margin_required": 0.3,
           "holdout_images": 10}
    assert describe(old).endswith("where 10 held-out images require more than +0.3000")


def test_the_fewest_images_a_rival_must_gain_grows_with_the_rivals():
    assert [fewest_gained(k) for k in (1, 2, 5, 9, 19)] == [5, 6, 7, 8, 9]


def test_the_holdout_needed_for_a_two_point_gain():
    # 9 rivals (10 trials): 8 steps of 3 gained and 1 lost, 2 images net each, 100 images.
    assert holdout_needed(9) == 800 and holdout_needed(5) == 700 and holdout_needed(1) == 400
    assert 9 * mcnemar_p(24, 8) <= Fraction(1, 20) < 9 * mcnemar_p(21, 7)
    assert holdout_needed(9, gain=0.05) < holdout_needed(9) < holdout_needed(9, per_gain=3)
    with pytest.raises(ValueError, match="needs a rival"):
        holdout_needed(0)


def test_the_rule_line_says_before_the_search_what_the_holdout_can_tell_apart():
    line = rule_line(159, 9)
    assert "McNemar's exact test, Holm-corrected over 9 rivals, gives p <= 0.05" in line
    assert "at least 8 more than the plan, so a plan right on more than 151 (95.0%)" in line
    assert line.endswith("a trial 2 points better needs about 800 held-out images (if the two "
                         "disagree on 4% of them): too few here")
    assert not rule_line(4000, 9).endswith("too few here")
    assert "no trial can win" in rule_line(5, 9)
    assert "on " not in rule_line(None, 9).split("p <= 0.05")[1][:4]  # no holdout known
    assert rule_line(159, 0) is None  # the plan's trial alone


def test_the_planned_holdout_is_the_searchs():
    assert holdout_size(797, 0.2) == 159 and holdout_size(2, 0.2) == 1
    assert holdout_size(10, 0.99) == 9  # one image left to train on
    assert planned_holdout(797, (28, 28, 1), SETTINGS) == 159  # the bundled digits
    assert planned_holdout(None, (28, 28, 1), SETTINGS) is None  # TFRecords
    capped = dataclasses.replace(SETTINGS, max_examples=1000)
    assert planned_holdout(60_000, (28, 28, 1), capped) == 200
