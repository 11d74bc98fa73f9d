"""The candidate's accuracy, overall and per slice, as TFMA wrote it.

Light at import: TFMA loads inside the functions, so the Pusher can import
this module for nothing heavier.
"""
from typing import Dict, Iterator, Optional, Sequence, Tuple

ACCURACY_METRIC = "sparse_categorical_accuracy"  # SparseCategoricalAccuracy (pipeline/dag.py)
_ACCURACY_CLASS = "SparseCategoricalAccuracy"  # ACCURACY_METRIC's Keras class
_COUNT = "example_count"  # ExampleCount (pipeline/dag.py)
CANDIDATE_NAMES = ("", "candidate")  # the model evaluated, alone or beside a baseline


def metric_values(evaluation_uri: str) -> Iterator[Tuple[str, tuple, str, float]]:
    """(model name, slice, metric name, value) of every metric but the diffs: a slice is
    ((feature, value), ...).

    With a baseline TFMA names the models "candidate" and "baseline"; alone,
    the model's name is "". Values of a bytes feature come back as text.
    """
    import tensorflow_model_analysis as tfma
    for metrics in tfma.load_metrics(evaluation_uri):
        slice_ = tuple((key.column, _slice_value(key))
                       for key in metrics.slice_key.single_slice_keys)
        for item in metrics.metric_keys_and_values:
            if not item.key.is_diff:
                yield item.key.model_name, slice_, item.key.name, item.value.double_value.value


def _candidate_metrics(evaluation_uri: str) -> Iterator[Tuple[tuple, str, float]]:
    """(slice, metric name, value) of the candidate."""
    for model, slice_, name, value in metric_values(evaluation_uri):
        if model in CANDIDATE_NAMES:
            yield slice_, name, value


def _slice_value(key) -> str:
    kind = key.WhichOneof("kind")
    value = getattr(key, kind) if kind else ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def overall_accuracy(evaluation_uri: str) -> Optional[float]:
    """The candidate's accuracy on the overall slice, or None if TFMA wrote none."""
    return next((value for slice_, name, value in _candidate_metrics(evaluation_uri)
                 if not slice_ and name == ACCURACY_METRIC), None)


def slice_accuracies(evaluation_uri: str, features: Sequence[str]
                     ) -> Dict[str, Dict[str, dict]]:
    """{feature: {value: {"accuracy", "examples"}}} for the single-feature slices of `features`.

    A feature absent from the examples has no slices, hence no entry.
    """
    found: Dict[tuple, dict] = {}
    for slice_, name, value in _candidate_metrics(evaluation_uri):
        if len(slice_) == 1 and slice_[0][0] in features and name in (ACCURACY_METRIC, _COUNT):
            found.setdefault(slice_[0], {})[name] = value
    by_feature: Dict[str, Dict[str, dict]] = {}
    for (feature, value), metrics in sorted(found.items()):
        by_feature.setdefault(feature, {})[value] = {
            "accuracy": metrics.get(ACCURACY_METRIC), "examples": int(metrics.get(_COUNT, 0))}
    return by_feature


def overall_figures(evaluation_uri: str) -> Dict[str, Tuple[float, int]]:
    """{"candidate": (accuracy, examples)} on the overall slice, and "baseline" beside it
    when TFMA evaluated one; a model without both figures is left out."""
    found: Dict[str, dict] = {}
    for model, slice_, name, value in metric_values(evaluation_uri):
        if not slice_ and name in (ACCURACY_METRIC, _COUNT):
            role = "candidate" if model in CANDIDATE_NAMES else model
            found.setdefault(role, {})[name] = value
    return {role: (figures[ACCURACY_METRIC], int(figures[_COUNT]))
            for role, figures in found.items()
            if ACCURACY_METRIC in figures and _COUNT in figures}


def eval_config_bounds(eval_config_json: Optional[str]
                       ) -> Tuple[Optional[float], Optional[float]]:
    """(accuracy threshold, baseline tolerance) as typed, recovered from an EvalConfig's
    bounds on ACCURACY_METRIC's class in the overall slice (the Evaluator's exec property,
    JSON); None for a bound it does not set.

    For packages compiled before the Evaluator got the typed values as parameters: their
    bounds are float32 roundings (pipeline/dag.py as_metric_float), whose shortest float32
    decimal is what was typed ('0.8' for 0.800000011920929).
    """
    if not eval_config_json:
        return None, None
    import numpy as np
    import tensorflow_model_analysis as tfma
    from google.protobuf import json_format
    config = json_format.Parse(eval_config_json, tfma.EvalConfig())
    typed = lambda value: float(str(np.float32(value)))  # noqa: E731
    for spec in config.metrics_specs:
        for metric in spec.metrics:
            for per_slice in metric.per_slice_thresholds:
                overall = any(s == tfma.SlicingSpec() for s in per_slice.slicing_specs)
                if metric.class_name != _ACCURACY_CLASS or not overall:
                    continue
                value, change = (per_slice.threshold.value_threshold,
                                 per_slice.threshold.change_threshold)
                return (typed(value.lower_bound.value) if value.HasField("lower_bound")
                        else None,
                        -typed(change.absolute.value) if change.HasField("absolute") else None)
    return None, None
