"""AuditSettings: the Evaluator's blessing gates beyond TFMA's thresholds.

Light (no TensorFlow): pipeline/config.py builds them from its flags, whose
defaults live there; each gate is off when None (its figure is still
reported in audit.json).
"""
import dataclasses
from typing import Any, Dict, Optional

from components.common.parameters import decode
from components.image_evaluator.accuracy import eval_config_bounds


@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """Gates on the audit's figures (components/image_evaluator/audit/); None: report only."""

    max_leakage_gain: Optional[float]  # accuracy minus accuracy without leaked eval images
    min_robust_accuracy: Optional[float]  # mean accuracy under common corruptions
    max_slice_gap: Optional[float]  # overall accuracy minus the worst slice's
    # The blessing's own bounds, as typed (TFMA's eval config holds float32 copies of them,
    # which the audit must not read back: components/common/limits.py says why).
    accuracy_threshold: Optional[float] = None  # --accuracy-threshold, planned when unset
    baseline_tolerance: Optional[float] = None  # --baseline-tolerance


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
