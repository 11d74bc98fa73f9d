"""AuditSettings: the Evaluator's blessing bounds and the audit's gates, with their defaults.

The `evaluation` section of the settings (settings/config.py): each field is also a flag of
`imagepipe run`. Light (no TensorFlow). Each audit gate is off when None (its figure is
still reported in audit.json); the accuracy threshold is planned per model when unset.
"""
import dataclasses
from typing import Any, Dict, Optional

from core.parameters import check_bounds, decode, setting
from components.image_evaluator.accuracy import eval_config_bounds


def _gate(measure: str, example: str, below: bool = False):
    """An optional blessing gate of the audit: a model past it is not blessed."""
    rule = "below" if below else "above"
    return setting(None, f"Do not bless a model with {measure} {rule} this; unset, the "
                         f"figure is only reported. Example: {example}", low=0, high=1)


@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """The blessing's bounds, and gates on the audit's figures (audit/); None: report only."""
    # The blessing's own bounds, as typed (TFMA's eval config holds float32 copies of them,
    # which the audit must not read back: core/limits.py says why).
    accuracy_threshold: Optional[float] = setting(
        None, "Bless the model only if its eval accuracy is at least this. Default: "
        "planned per model. Example: --accuracy-threshold 0.95", planned=True, low=0, high=1)
    baseline_tolerance: Optional[float] = setting(
        0.01, "Bless only if accuracy >= the last blessed model's minus this (absolute).",
        example="--baseline-tolerance 0.005", low=0)
    # accuracy minus accuracy without leaked eval images
    max_leakage_gain: Optional[float] = _gate(
        "accuracy minus accuracy without the eval images that have a copy in train",
        "--max-leakage-gain 0.01")
    # mean accuracy under common corruptions
    min_robust_accuracy: Optional[float] = _gate(
        "the mean accuracy under common corruptions", "--min-robust-accuracy 0.5",
        below=True)
    # overall accuracy minus the worst slice's
    max_slice_gap: Optional[float] = _gate("overall accuracy minus the worst slice's",
                                           "--max-slice-gap 0.1")

    def __post_init__(self):
        check_bounds(self)


# The Evaluator's eval config exec property (tfx standard_component_specs.EVAL_CONFIG_KEY).
EVAL_CONFIG_KEY = "eval_config"


def settings_of(exec_properties: Dict[str, Any]) -> AuditSettings:
    """The audit's settings; a package compiled before they carried the typed thresholds
    gets them from its eval config (accuracy.eval_config_bounds)."""
    settings = decode(AuditSettings, exec_properties)
    if settings.accuracy_threshold is None and settings.baseline_tolerance is None:
        threshold, tolerance = eval_config_bounds(exec_properties.get(EVAL_CONFIG_KEY))
        settings = dataclasses.replace(settings, accuracy_threshold=threshold,
                                       baseline_tolerance=tolerance)
    return settings
