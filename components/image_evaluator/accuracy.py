"""The candidate's overall accuracy, as TFMA wrote it, for the blessing and the Pusher.

Light at import: TFMA loads inside the function.
"""
from typing import Optional

_METRIC = "sparse_categorical_accuracy"  # SparseCategoricalAccuracy (pipeline/dag.py)


def overall_accuracy(evaluation_uri: str) -> Optional[float]:
    """The candidate's accuracy on the overall slice, or None if TFMA wrote none.

    With a baseline TFMA names the models "candidate" and "baseline"; alone,
    the model's name is "".
    """
    import tensorflow_model_analysis as tfma
    for metrics in tfma.load_metrics(evaluation_uri):
        if metrics.slice_key.single_slice_keys:
            continue
        for item in metrics.metric_keys_and_values:
            key = item.key
            if key.name == _METRIC and not key.is_diff and key.model_name in ("", "candidate"):
                return item.value.double_value.value
    return None
