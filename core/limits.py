"""The one rule by which a figure meets a limit, for every gate and alert in imagepipe.

A limit is the decimal the user typed: `--accuracy-threshold 0.8` means 8/10,
not the binary float nearest it (0.8000000000000000444) nor float32's
(0.800000011920929). A figure that is a count ratio (400 of 500 right) is the
exact fraction k/n. Both are compared as exact rationals (`fractions.Fraction`),
so 400/500 meets 0.8, 49/51 does not meet 0.9607843137254902 (which is larger),
and a change of 485/500 -> 475/500 is exactly -0.02.

Floats compared directly get these edges wrong in both directions: float32
rounds 0.8 up and 0.7 down, and float64 subtraction makes 0.8 - 0.6 larger than
0.2. Every gate therefore calls `meets` (a lower bound: a figure equal to its
limit passes) or `exceeds` (an upper bound: a figure equal to its limit does not
alert, nor fail), with figures built by `ratio` or `difference` where counts exist.

Pure Python on purpose: the planner, the Pusher, the monitor and the tuner read it.
"""
import math
from decimal import Decimal
from fractions import Fraction
from numbers import Integral, Rational
from typing import Union

Exact = Union[int, float, str, Decimal, Fraction]


def exact(x: Exact) -> Fraction:
    """`x` as the exact rational a person reads in it.

    A float is the decimal its repr prints (the shortest that round-trips: what the user
    typed, or a planned default, a `--config` value or a KFP parameter as written); a
    numpy float32 is the shortest decimal of float32 (what Keras's accuracy prints);
    a Fraction, an int or a Decimal is itself; a string is parsed as a decimal.
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, bool):
        raise TypeError(f"a limit or figure must be a number, got {x!r}")
    if isinstance(x, (Integral, Rational)):
        return Fraction(x)
    if isinstance(x, (Decimal, str)):
        value = Decimal(x)
    else:
        value = _shortest_decimal(x)
    if not value.is_finite():
        raise ValueError(f"a limit or figure must be finite, got {x!r}")
    return Fraction(value)


def _shortest_decimal(x) -> Decimal:
    """The shortest decimal that reads back as `x` at `x`'s own precision."""
    kind = type(x).__name__
    if kind == "float32":  # numpy's float32 prints its own shortest form ('0.8')
        return Decimal(str(x))
    value = float(x)
    if not math.isfinite(value):
        raise ValueError(f"a limit or figure must be finite, got {x!r}")
    return Decimal(repr(value))


def ratio(right: int, total: int) -> Fraction:
    """k of n as the exact fraction k/n (n > 0)."""
    if total <= 0:
        raise ValueError(f"a ratio needs a positive count, got {right}/{total}")
    return Fraction(int(right), int(total))


def difference(after: Exact, before: Exact) -> Fraction:
    """after - before, exactly: a change between two figures."""
    return exact(after) - exact(before)


def meets(figure: Exact, limit: Exact) -> bool:
    """A lower bound: True where `figure` >= `limit` exactly (equal passes)."""
    return exact(figure) >= exact(limit)


def exceeds(figure: Exact, limit: Exact) -> bool:
    """An upper bound: True where `figure` > `limit` exactly (equal neither alerts nor fails)."""
    return exact(figure) > exact(limit)


def as_float(figure: Exact) -> float:
    """The nearest float, for JSON and printing (never for comparing)."""
    return float(exact(figure))
