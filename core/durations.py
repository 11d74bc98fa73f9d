"""Durations as users write them on the command line: 90s, 10m, 1h, 1h30m, 7d, 2w.

The one parser for every duration flag (--time-budget, monitor's --since).
"""
import re

_UNITS = "wdhms"  # largest first, the order they are written in
_PART = re.compile(r"(\d+(?:\.\d+)?)([%s])" % _UNITS)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
DURATION_EXAMPLES = "90s, 10m, 1h, 1h30m or 7d (units: s, m, h, d, w)"
DURATION_RULE = f"must be a duration such as {DURATION_EXAMPLES}"


def parse_duration(text: str) -> float:
    """Seconds in '90s', '10m', '1h', '1h30m', '7d' or '2w' (units w, d, h, m, s, largest
    first).

    Raises:
      ValueError: not such a duration, or zero.
    """
    compact = (text or "").replace(" ", "").lower()
    parts = _PART.findall(compact)
    units = [unit for _, unit in parts]
    if (not parts or "".join(n + u for n, u in parts) != compact
            or units != sorted(set(units), key=_UNITS.index)):
        raise ValueError(f"{text!r} {DURATION_RULE}")
    seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"{text!r} must be more than 0")
    return seconds


def is_duration(text: str) -> bool:
    """Whether parse_duration accepts `text`."""
    try:
        parse_duration(text)
    except ValueError:
        return False
    return True
