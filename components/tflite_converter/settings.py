"""TFLiteSettings: what TFLiteConverter is told, one typed ExecutionParameter per field.

Light (no TensorFlow): settings/config.py imports it for the quantize choices
and builds the settings from its flags and defaults.
"""
import dataclasses

# TFLite conversions: none (float32), dynamic (dynamic-range int8 weights),
# float16, int8 (full integer, calibrated on the train split).
QUANTIZATIONS = ("none", "dynamic", "float16", "int8")


def check_quantize(quantize: str) -> None:
    """Refuses a conversion that is not one of QUANTIZATIONS, naming the flag."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"--quantize must be one of {', '.join(QUANTIZATIONS)}, "
                         f"got {quantize!r}")


@dataclasses.dataclass(frozen=True)
class TFLiteSettings:
    """The conversion and its parity gate; no defaults (settings/config.py has them)."""

    model_name: str  # the model's name in the TFLite metadata (the served model's)
    quantize: str  # one of QUANTIZATIONS
    parity_tolerance: float  # the file's client-path eval accuracy may be this much lower

    def __post_init__(self):
        check_quantize(self.quantize)
