"""What TFMA wrote for a run: accuracies, the confusion matrix, and why it blessed or not."""
from typing import Dict, List, Optional, Tuple

import tensorflow_model_analysis as tfma

from core.contract import LABEL_KEY
from components.image_evaluator.accuracy import ACCURACY_METRIC, CANDIDATE_NAMES, metric_values
from settings.config import PipelineConfig


def accuracies(evaluation_uri: str) -> Tuple[Dict[str, float], Dict[int, float]]:
    """Overall accuracy per model name ('' or 'candidate', and 'baseline'), and the
    candidate's accuracy per label id (the label slices of the EvalConfig)."""
    overall, per_label = {}, {}
    for model, slice_, name, value in metric_values(evaluation_uri):
        if name != ACCURACY_METRIC:
            continue
        if not slice_:
            overall[model] = value
        elif model in CANDIDATE_NAMES and len(slice_) == 1 and slice_[0][0] == LABEL_KEY:
            per_label[int(slice_[0][1])] = value
    return overall, per_label


def confusion_matrix(evaluation_uri: str, num_classes: int) -> Optional[List[List[int]]]:
    """The candidate's overall confusion matrix, counts[actual][predicted], or None.

    From TFMA's MultiClassConfusionMatrixPlot at threshold 0.0, i.e. argmax, the
    same prediction the accuracy metric scores.
    """
    for plots in tfma.load_plots(evaluation_uri):
        if plots.slice_key.single_slice_keys:
            continue
        for item in plots.plot_keys_and_values:
            if item.key.model_name not in CANDIDATE_NAMES:
                continue
            matrices = item.value.multi_class_confusion_matrix_at_thresholds.matrices
            if not matrices:
                continue
            counts = [[0] * num_classes for _ in range(num_classes)]
            for entry in matrices[0].entries:
                if 0 <= entry.actual_class_id < num_classes and \
                        0 <= entry.predicted_class_id < num_classes:
                    counts[entry.actual_class_id][entry.predicted_class_id] = \
                        round(entry.num_weighted_examples)
            return counts
    return None


def _failure_text(failure, config: PipelineConfig) -> str:
    """One TFMA threshold failure, e.g. 'accuracy change vs baseline -0.0300 < -0.01'.

    The bounds are the typed ones: TFMA holds float32 or widened copies of them
    (pipeline/dag.py as_metric_float, change_bound)."""
    value = failure.metric_value.double_value.value
    if failure.metric_key.is_diff:
        tolerance = config.evaluation.baseline_tolerance
        return f"accuracy change vs baseline {value:+.4f} < -{tolerance} allowed"
    return f"accuracy {value:.4f} < threshold {config.evaluation.accuracy_threshold}"


def blessing_reason(validation, config: PipelineConfig, baseline: Optional[float]) -> str:
    """Why TFMA blessed the model or not, in words, from its ValidationResult."""
    if validation.validation_ok:
        reason = f"accuracy >= threshold {config.evaluation.accuracy_threshold}"
        if baseline is None:
            return reason + "; no blessed baseline yet"
        return reason + f" and >= baseline {baseline:.4f} - {config.evaluation.baseline_tolerance}"
    failures = [_failure_text(f, config) for per_slice in validation.metric_validations_per_slice
                for f in per_slice.failures]
    return "; ".join(failures) or "TFMA validation failed: " + str(validation)[:300]
