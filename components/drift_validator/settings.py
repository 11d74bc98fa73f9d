"""DriftSettings: the four drift thresholds, one ExecutionParameter each.

Light (no TensorFlow): pipeline/config.py builds them from its `--drift-*` flags, whose
defaults live there. Every measure lies in 0..1 (TFDV's L-infinity distance between
two distributions, its base-2 Jensen-Shannon divergence), and a feature drifts when
its measure is over its threshold (docs/continuous.md, "Drift").
"""
import dataclasses
import math


@dataclasses.dataclass(frozen=True)
class DriftSettings:
    """A threshold per feature; no defaults (pipeline/config.py has them)."""

    label: float  # L-infinity distance between the class shares (image/class/text)
    brightness: float  # Jensen-Shannon divergence of the mean luminances (image/brightness)
    size: float  # Jensen-Shannon divergence of the heights, and of the widths
    grayscale: float  # L-infinity distance of grayscale/colour: the share's change

    def __post_init__(self):
        for name, value in dataclasses.asdict(self).items():
            if not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"drift threshold {name} must be a number >= 0, got {value!r}")
