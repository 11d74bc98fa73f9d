"""Durations as users write them on the command line: 90s, 10m, 1h, 1h30m."""
import re

_PART = re.compile(r"(\d+(?:\.\d+)?)([smh])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}
DURATION_RULE = "must be a duration such as 90s, 10m, 1h or 1h30m"


def parse_duration(text: str) -> float:
    """Seconds in '90s', '10m', '1h' or '1h30m' (units s, m, h, largest first).

    Raises:
      ValueError: not such a duration, or zero.
    """
    compact = (text or "").replace(" ", "").lower()
    parts = _PART.findall(compact)
    units = [unit for _, unit in parts]
    if (not parts or "".join(n + u for n, u in parts) != compact
            or units != sorted(set(units), key="hms".index)):
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
