"""Which TFDV comparator measures each drift feature, and what TFDV found.

`validator_config` builds TFX's DistributionValidatorConfig: TFDV's L-infinity
distance (`infinity_norm`) for the categorical features, its Jensen-Shannon
divergence for the numeric ones. `measured` reads the Anomalies TFX wrote back
into one result per drift feature (components/drift_validator/verdict.py).

What TFDV computes, checked on real statistics (tests/components/drift_validator/):
- infinity_norm, on a bytes feature's rank histogram (StatisticsGen's
  sketch-based top-k gives one, exact while a feature has fewer distinct values
  than the sketch holds): the largest change of one value's share, each side
  normalized over its own histogram. On the grayscale slice, two values: the
  change of the grayscale share.
- jensen_shannon_divergence, on a numeric feature's histogram: base 2, 0..1,
  the two histograms rebucketed onto the union of their boundaries (values
  spread evenly within a bucket). The STANDARD histogram keeps a constant
  feature as a point bucket, and a point never overlaps a range: one image of
  another size in a span of one size gives 1.0. The size therefore compares
  QUANTILES histograms, where point buckets stay points on both sides.
"""
from typing import Dict, Iterable, Set, Tuple

from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2
from tfx.proto import distribution_validator_pb2

from core.contract import (BRIGHTNESS_KEY, CLASS_TEXT_KEY, COLOR_SLICE_KEY,
                           HEIGHT_KEY, WIDTH_KEY)
from components.drift_validator.settings import DriftSettings

# The example features each drift feature is measured on; size drifts when either does.
PATHS = {"label": (CLASS_TEXT_KEY,), "brightness": (BRIGHTNESS_KEY,),
         "size": (HEIGHT_KEY, WIDTH_KEY), "grayscale": (COLOR_SLICE_KEY,)}
_CATEGORICAL = {"label", "grayscale"}
_QUANTILES = {"size"}  # see the module's docstring
# The reasons TFDV gives for a measure over its threshold.
_OVER = {anomalies_pb2.AnomalyInfo.COMPARATOR_L_INFTY_HIGH,
         anomalies_pb2.AnomalyInfo.COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH}
# (TFDV's measure, whether it is over its threshold)
Measure = Tuple[float, bool]


def stats_options():
    """The options StatisticsGen profiles with, and the monitor too: the histograms that
    the comparators read (sketch-based top-k for class shares, 100 quantile buckets for
    sizes) must be built alike on both sides of a comparison."""
    import tensorflow_data_validation as tfdv  # heavy: only where statistics are made
    return tfdv.StatsOptions(use_sketch_based_topk_uniques=True,
                             num_quantiles_histogram_buckets=100)


def comparator(feature: str, threshold: float) -> schema_pb2.FeatureComparator:
    """TFDV's comparator for one drift feature."""
    found = schema_pb2.FeatureComparator()
    if feature in _CATEGORICAL:
        found.infinity_norm.threshold = threshold
        return found
    found.jensen_shannon_divergence.threshold = threshold
    if feature in _QUANTILES:
        found.jensen_shannon_divergence.source.type = schema_pb2.HistogramSelection.QUANTILES
    return found


def validator_config(settings: DriftSettings, present: Set[str]
                     ) -> distribution_validator_pb2.DistributionValidatorConfig:
    """The config for the example features in `present` (both splits have statistics
    for them): TFX flags a configured feature it could not compare as an anomaly."""
    config = distribution_validator_pb2.DistributionValidatorConfig()
    for feature, keys in PATHS.items():
        for key in keys:
            if key in present:
                entry = config.default_slice_config.feature.add()
                entry.path.step.append(key)
                entry.distribution_comparator.CopyFrom(
                    comparator(feature, getattr(settings, feature)))
    return config


def feature_names(statistics: statistics_pb2.DatasetFeatureStatistics) -> Set[str]:
    """The example features one split's statistics describe."""
    return {".".join(f.path.step) if f.HasField("path") else f.name
            for f in statistics.features if f.WhichOneof("stats")}


def _path(info) -> str:
    return ".".join(info.path.step)


def measures(anomalies: anomalies_pb2.Anomalies) -> Dict[str, Measure]:
    """{example feature: (TFDV's drift measure, whether it is over)} from TFX's Anomalies."""
    over = {_path(info) for info in anomalies.anomaly_info.values()
            if any(reason.type in _OVER for reason in info.reason)}
    return {_path(info): (max(m.value for m in info.drift_measurements), _path(info) in over)
            for info in anomalies.drift_skew_info if info.drift_measurements}


def combined(found: Dict[str, Measure], keys: Iterable[str]):
    """(the largest measure of `keys`, whether any is over), or None if none was measured."""
    taken = [found[key] for key in keys if key in found]
    if not taken:
        return None
    return max(value for value, _ in taken), any(over for _, over in taken)
