"""MonitorSettings: the monitor's own thresholds, the one home of their defaults.

The input-drift thresholds are not here: they are PipelineConfig's drift_brightness,
drift_size and drift_grayscale, the same flags (and numbers) as the span drift check.
Each field is also a flag of `imagepipe monitor` (pipeline/cli.py), its help the
field's `help` metadata.
"""
import dataclasses
import math


def _field(default, help_text: str):
    return dataclasses.field(default=default, metadata={"help": help_text})


@dataclasses.dataclass(frozen=True)
class MonitorSettings:
    """What counts as alerting; every share and distance lies in 0..1."""

    prediction_drift: float = _field(
        0.15, "alert when the predicted class shares move this far from the eval split's "
              "(L-infinity: the largest change of one class's share)")
    confidence_drift: float = _field(
        0.1, "alert when the top probability's distribution moves this far from the eval "
             "split's (Jensen-Shannon divergence, base 2)")
    low_confidence: float = _field(
        0.5, "an answer whose top probability is below this is a low-confidence one")
    low_confidence_rise: float = _field(
        0.1, "alert when the window's share of low-confidence answers is over the eval "
             "split's by more than this")
    accuracy_drop: float = _field(
        0.05, "with --labels: alert when the accuracy on the labelled records is under "
              "the eval accuracy by more than this")
    min_labeled: int = _field(
        20, "with --labels: the fewest matched records the accuracy is measured on")

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "min_labeled":
                if not isinstance(value, int) or value < 1:
                    raise ValueError(f"--min-labeled must be an integer >= 1, got {value!r}")
            elif not isinstance(value, (int, float)) or not 0 <= value <= 1 \
                    or math.isnan(value):
                flag = "--" + field.name.replace("_", "-")
                raise ValueError(f"{flag} must be a number in 0..1, got {value!r}")
