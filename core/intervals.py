"""Confidence intervals for accuracies: k of n images right, and two models on the same images.

An accuracy measured on a few hundred images is a sample: 0.80 on 50 images is
anything from about 0.67 to 0.89, and that range decides whether a threshold,
a slice gap or a change from the last model means anything. Every accuracy
imagepipe shows therefore carries its count and a 95% interval from here.

Pure Python (the standard library's NormalDist): the audit, the report, the
model card and the monitor all read it.
"""
import math
from statistics import NormalDist
from typing import Tuple

CONFIDENCE = 0.95  # the level every interval imagepipe shows is at

Interval = Tuple[float, float]


def _z(confidence: float) -> float:
    """The two-sided normal quantile of `confidence` (1.959964 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf((1 + confidence) / 2)


def _checked(right: int, total: int) -> None:
    if total <= 0 or not 0 <= right <= total:
        raise ValueError(f"an interval needs 0 <= right <= total and total > 0, "
                         f"got {right} of {total}")


def wilson(right: int, total: int, confidence: float = CONFIDENCE) -> Interval:
    """The Wilson score interval (low, high) for `right` of `total`.

    Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; method 3 in Newcombe (1998), "Two-sided
    confidence intervals for the single proportion: comparison of seven methods",
    Stat Med 17:857-872. Why Wilson and not the textbook p ± z·sqrt(p(1-p)/n): an
    accuracy near 1 on a small set is this project's common case, where the Wald
    interval collapses to zero width (20 of 20 gives 1.0-1.0) and undercovers;
    Wilson's stays inside [0, 1], is never empty, and keeps close to 95% coverage
    down to a few dozen images. It needs no iteration, unlike Clopper-Pearson's
    exact interval, which is also wider than needed.
    """
    _checked(right, total)
    z = _z(confidence)
    z2 = z * z
    centre = (right + z2 / 2) / (total + z2)
    half = z / (total + z2) * math.sqrt(right * (total - right) / total + z2 / 4)
    # k = 0 and k = n make a bound exactly 0 or 1 in exact arithmetic; say so in floats.
    low = 0.0 if right == 0 else max(0.0, centre - half)
    high = 1.0 if right == total else min(1.0, centre + half)
    return low, high


def wilson_of(accuracy: float, examples: int, confidence: float = CONFIDENCE) -> Interval:
    """`wilson` of an accuracy given as a share of `examples` (TFMA's float32 accuracy and
    its example count): the count right is round(accuracy * examples), exact up to 2**24
    examples."""
    return wilson(round(accuracy * examples), examples, confidence)


def _phi(both: int, first_only: int, second_only: int, neither: int) -> float:
    """Newcombe's continuity-corrected estimate of the correlation of the two accuracies."""
    total = both + first_only + second_only + neither
    margins = ((both + first_only) * (second_only + neither)
               * (both + second_only) * (first_only + neither))
    if margins == 0:
        return 0.0
    cross = both * neither - first_only * second_only
    if cross > total / 2:
        return (cross - total / 2) / math.sqrt(margins)
    return 0.0 if cross >= 0 else cross / math.sqrt(margins)


def paired_difference(both: int, first_only: int, second_only: int, neither: int,
                      confidence: float = CONFIDENCE) -> Interval:
    """The interval (low, high) of accuracy(first) - accuracy(second), two models scored on
    the same images: `both` right, only the first right, only the second, `neither`.

    Newcombe's hybrid score interval for paired proportions, method 10 of Newcombe
    (1998), "Improved confidence intervals for the difference between binomial
    proportions based on paired data", Stat Med 17:2635-2650 (the "square-and-add"
    interval of Fagerland, Lydersen & Laake (2014), Stat Med 33:2850-2875, who
    recommend it). Each model's accuracy gets its Wilson interval, and the two are
    combined with the correlation of the two models' answers on the same images.

    Why paired: two models scored on the same images agree on most of them, so the
    difference is far more precise than two independent samples would give; an
    unpaired interval would call most real changes noise. Why this method: closed
    form, no iteration, inside [-1, 1], and good coverage where a Wald interval on the
    discordant pairs is not (few disagreements, accuracies near 1).
    """
    counts = (both, first_only, second_only, neither)
    if min(counts) < 0 or sum(counts) <= 0:
        raise ValueError(f"paired counts must be >= 0 with a positive total, got {counts}")
    total = sum(counts)
    first, second = (both + first_only) / total, (both + second_only) / total
    low1, high1 = wilson(both + first_only, total, confidence)
    low2, high2 = wilson(both + second_only, total, confidence)
    phi = _phi(*counts)
    difference = first - second
    below = math.sqrt(max(0.0, (first - low1) ** 2 + (high2 - second) ** 2
                          - 2 * phi * (first - low1) * (high2 - second)))
    above = math.sqrt(max(0.0, (second - low2) ** 2 + (high1 - first) ** 2
                          - 2 * phi * (second - low2) * (high1 - first)))
    return max(-1.0, difference - below), min(1.0, difference + above)


def contains(interval: Interval, value: float) -> bool:
    """Whether `value` lies inside `interval`, bounds included: within chance of it."""
    return interval[0] <= value <= interval[1]
