"""The statistics of a search's choice: McNemar's exact test on paired holdout results,
Holm's correction over the rivals, and how large a holdout a rival needs to win.

Every trial is scored on the same held-out images, so the plan's trial and a
rival are compared image by image. Only the images where they disagree say
which is better: `gained`, those the rival gets right and the plan wrong, and
`lost`, the other way round. If the two are equally good, each disagreement
goes either way with probability 1/2 (McNemar, Psychometrika 1947; the exact
form is the binomial test on the disagreements). A search compares the plan
with every rival, so Holm's step-down correction (Scand. J. Statistics, 1979)
keeps the chance that any equally good rival replaces the plan at ALPHA or
below.

Exact rationals throughout (math.comb, fractions.Fraction), so a p-value equal
to ALPHA is recognised as equal. Pure Python on purpose: the planner reads it.
"""
import math
from fractions import Fraction
from typing import Dict, Optional

from core.limits import exact, meets

# The chance, at most, that a search whose rivals are no better than the plan replaces it.
ALPHA = 0.05
TEST = "mcnemar_exact_holm"
# What `holdout_needed` asks of a holdout: that a rival this much more accurate than the
# plan can win, where the two disagree on DISAGREEMENT_PER_GAIN times that share of the
# images (2: on 4% of them for a 2-point gain, 3 of every 4 disagreements going the
# rival's way). Models of one family mostly fail on the same hard images; where they
# disagree more (less accurate models), a holdout needs more images than this.
DETECTABLE_GAIN = 0.02
DISAGREEMENT_PER_GAIN = 2


def mcnemar_p(gained: int, lost: int) -> Fraction:
    """McNemar's exact one-sided p-value that a rival is better than the plan.

    One-sided, in the rival's favour: a rival worse than the plan and one as good
    lead to the same decision (keep the plan), so a two-sided test would spend half
    of ALPHA on a direction that cannot change it. The p-value is the chance of
    `gained` or more of the `gained + lost` disagreements going the rival's way
    when each goes either way with probability 1/2; 1 where they never disagree.

    Args:
        gained: held-out images the rival gets right and the plan gets wrong.
        lost: held-out images the plan gets right and the rival gets wrong.
    """
    if gained < 0 or lost < 0:
        raise ValueError(f"counts of images cannot be negative: gained {gained}, lost {lost}")
    n = gained + lost
    return Fraction(sum(math.comb(n, i) for i in range(gained, n + 1)), 2 ** n)


def holm(p_values: Dict[str, Fraction]) -> Dict[str, Fraction]:
    """Holm's adjusted p-values, by the same keys: the i-th smallest of k is multiplied
    by k - i + 1 (i from 1), never below an earlier one's, at most 1. A hypothesis is
    rejected at level alpha exactly where its adjusted p-value is at most alpha. Equal
    p-values are taken in the order given (which changes none of the adjusted ones)."""
    ranked = sorted(p_values, key=p_values.get)
    adjusted, running = {}, Fraction(0)
    for index, key in enumerate(ranked):
        running = max(running, min(Fraction(1), (len(ranked) - index) * p_values[key]))
        adjusted[key] = running
    return {key: adjusted[key] for key in p_values}


def significant(p_value: Fraction, alpha: float = ALPHA) -> bool:
    """core/limits.py's rule: significant where p <= alpha exactly (a
    p-value equal to alpha counts)."""
    return meets(alpha, p_value)


def fewest_gained(rivals: int, alpha: float = ALPHA) -> int:
    """The fewest images a rival must get right that the plan gets wrong, losing none,
    to win against `rivals` rivals: Holm's first step needs rivals * p <= alpha."""
    gained = 0
    while not significant(rivals * mcnemar_p(gained, 0), alpha):
        gained += 1
    return gained


def holdout_needed(rivals: int, gain: float = DETECTABLE_GAIN,
                   per_gain: int = DISAGREEMENT_PER_GAIN, alpha: float = ALPHA) -> int:
    """The smallest holdout on which a rival `gain` more accurate than the plan wins
    against `rivals` rivals, where the two disagree on `per_gain * gain` of the images.

    The disagreements come in whole steps of `2 per_gain` images, `per_gain + 1` gained
    and `per_gain - 1` lost (3 and 1 for per_gain 2): 2 images net a step, so j steps
    need j * 2 / gain images. The answer is the holdout of the fewest steps for which
    Holm's first step, rivals * p <= alpha, holds; with whole steps the p-value only
    falls as the holdout grows (rounding each count on its own would not: 650 images
    would pass, 651 to 679 not).
    """
    if rivals < 1 or not 0 < gain < 1 or per_gain < 1:
        raise ValueError(f"needs a rival, a gain in (0, 1) and per_gain >= 1: got {rivals}, "
                         f"{gain}, {per_gain}")
    steps = 1
    while not significant(rivals * mcnemar_p((per_gain + 1) * steps, (per_gain - 1) * steps),
                          alpha):
        steps += 1
    return math.ceil(2 * steps / exact(gain))  # exact: in floats 2 / 0.02 > 100


def rule_line(holdout_images: Optional[int], rivals: int) -> Optional[str]:
    """What a search's choice can tell apart, said before it runs: the fewest images a
    rival must gain on `holdout_images` (None: not known yet) and the holdout a rival
    DETECTABLE_GAIN better needs. None where there is no rival (a single trial)."""
    if rivals < 1:
        return None
    needed = holdout_needed(rivals)
    line = (f"choice: a trial replaces the plan's settings only if McNemar's exact test, "
            f"Holm-corrected over {rivals} rivals, gives p <= {ALPHA:g}")
    gain = (f"a trial {DETECTABLE_GAIN * 100:g} points better needs about {needed:,} "
            f"held-out images (if the two disagree on "
            f"{DISAGREEMENT_PER_GAIN * DETECTABLE_GAIN:.0%} of them)")
    if holdout_images is None:
        return f"{line}; {gain}"
    fewest = fewest_gained(rivals)
    kept = (f"a plan right on more than {holdout_images - fewest} ("
            f"{(holdout_images - fewest) / holdout_images:.1%}) is kept whatever the trials "
            "score" if fewest <= holdout_images else "no trial can win")
    return (f"{line}: on {holdout_images:,} held-out images a trial must be right on at least "
            f"{fewest} more than the plan, so {kept}; {gain}"
            + (": too few here" if holdout_images < needed else ""))
