"""What moved between two spans, in words, from StatisticsGen's statistics of their splits.

TFDV's Anomalies carry each measure but not where it came from (which class,
which sizes); users read that here: the class whose share moved most, the grayscale
share, the mean brightness and the median size, all read from the same statistics
that TFDV compared (rank histograms, means, medians), never from ingest reports.
"""
from typing import Dict, Optional

from tensorflow_metadata.proto.v0 import statistics_pb2

from core.contract import (BRIGHTNESS_KEY, CLASS_TEXT_KEY, COLOR_SLICE_KEY,
                           HEIGHT_KEY, WIDTH_KEY)

Stats = statistics_pb2.DatasetFeatureStatistics
GRAYSCALE = "grayscale"  # the value of COLOR_SLICE_KEY for a grayscale image


def _feature(stats: Stats, key: str) -> Optional[statistics_pb2.FeatureNameStatistics]:
    return next((f for f in stats.features
                 if (".".join(f.path.step) if f.HasField("path") else f.name) == key), None)


def shares(stats: Stats, key: str) -> Dict[str, float]:
    """Each value's share of a bytes feature, from its rank histogram, normalized over
    the histogram as TFDV's L-infinity distance does; {} without one."""
    feature = _feature(stats, key)
    buckets = feature.string_stats.rank_histogram.buckets if feature else []
    total = sum(b.sample_count for b in buckets)
    return {b.label: b.sample_count / total for b in buckets} if total else {}


def _numeric(stats: Stats, key: str, field: str) -> Optional[float]:
    feature = _feature(stats, key)
    return getattr(feature.num_stats, field) if feature and feature.HasField("num_stats") \
        else None


def _class_detail(previous: Stats, newest: Stats) -> str:
    before, after = shares(previous, CLASS_TEXT_KEY), shares(newest, CLASS_TEXT_KEY)
    name, most = None, -1.0
    for key in sorted({*before, *after}):  # a tie goes to the later name, as in TFDV
        change = abs(after.get(key, 0.0) - before.get(key, 0.0))
        if change >= most:
            name, most = key, change
    if name is None:
        return "class shares not profiled"
    return f"class {name!r} {before.get(name, 0.0):.2f} -> {after.get(name, 0.0):.2f}"


def _grayscale_detail(previous: Stats, newest: Stats) -> str:
    before, after = shares(previous, COLOR_SLICE_KEY), shares(newest, COLOR_SLICE_KEY)
    if not before or not after:
        return "grayscale share not profiled"
    return f"grayscale share {before.get(GRAYSCALE, 0.0):.2f} -> {after.get(GRAYSCALE, 0.0):.2f}"


def _brightness_detail(previous: Stats, newest: Stats) -> str:
    before, after = (_numeric(s, BRIGHTNESS_KEY, "mean") for s in (previous, newest))
    if before is None or after is None:
        return "brightness not profiled: the examples have no image/brightness"
    return f"mean brightness {before:.0f} -> {after:.0f} of 255"


def _size_detail(previous: Stats, newest: Stats) -> str:
    sides = [(_numeric(s, HEIGHT_KEY, "median"), _numeric(s, WIDTH_KEY, "median"))
             for s in (previous, newest)]
    if None in sides[0] + sides[1]:
        return "median size not profiled"
    (h0, w0), (h1, w1) = sides
    return f"median size {h0:.0f}x{w0:.0f} -> {h1:.0f}x{w1:.0f}"


_DETAILS = {"label": _class_detail, "brightness": _brightness_detail, "size": _size_detail,
            "grayscale": _grayscale_detail}


def detail(feature: str, previous: Stats, newest: Stats) -> str:
    """What moved in one drift feature between the previous span and the newest."""
    return _DETAILS[feature](previous, newest)
