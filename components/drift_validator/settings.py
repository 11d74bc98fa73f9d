"""DriftSettings: the four drift thresholds, one ExecutionParameter each, with their defaults.

The `drift` section of the settings (settings/config.py): each field is also the flag
`--drift-<field>` of `imagepipe run` and `imagepipe monitor`. Light (no TensorFlow). Every
measure lies in 0..1 (TFDV's L-infinity distance between two distributions, its base-2
Jensen-Shannon divergence), and a feature drifts when its measure is over its threshold
(docs/continuous.md, "Drift"); the defaults were measured on photos there.
"""
import dataclasses
from typing import ClassVar

from core.parameters import check_bounds, setting


def _threshold(default: float, measure: str, example: str):
    return setting(default, f"Drift threshold on {measure}; beyond it the model is not "
                            "blessed or pushed.", example=example, low=0, finite=True)


@dataclasses.dataclass(frozen=True)
class DriftSettings:
    """The drift validator's thresholds: one per feature of the newest span against the last."""
    FLAG_PREFIX: ClassVar[str] = "drift-"

    # L-infinity distance between the class shares (image/class/text)
    label: float = _threshold(0.15, "class shares: the largest change of one (L-infinity)",
                              "--drift-label 0.3")
    # Jensen-Shannon divergence of the mean luminances (image/brightness)
    brightness: float = _threshold(0.1, "brightness: Jensen-Shannon divergence, base 2",
                                   "--drift-brightness 0.2")
    # Jensen-Shannon divergence of the heights, and of the widths
    size: float = _threshold(0.3, "image heights and widths: Jensen-Shannon divergence of "
                                  "their quantiles, base 2", "--drift-size 0.4")
    # L-infinity distance of grayscale/colour: the share's change
    grayscale: float = _threshold(0.2, "the share of grayscale images: its change",
                                  "--drift-grayscale 0.5")

    def __post_init__(self):
        check_bounds(self)
