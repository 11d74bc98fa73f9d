"""Durations as written on the command line."""
import pytest

from core.durations import is_duration, parse_duration


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("10m", 600), ("1h", 3600),
                                           ("1h30m", 5400), ("1.5h", 5400),
                                           ("2h5m10s", 7510), (" 10M ", 600), ("7d", 604800),
                                           ("2w", 1209600), ("1d12h", 129600)])
def test_a_duration_is_seconds_in_its_units(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "0s", "0m0s", "abc", "10", "30m1h", "1h1h", "1h1d", "5y", "",
                                  "-5m", "1h 30"])
def test_anything_else_is_refused(text):
    assert not is_duration(text)
    with pytest.raises(ValueError):
        parse_duration(text)
