"""PushSettings: what ImagePusher is told, one typed ExecutionParameter per field.

Light (no TensorFlow): pipeline/config.py imports it for the quantize
choices and builds the settings from its flags and defaults.
"""
import dataclasses
from typing import Optional, Tuple

# TFLite conversions: none (float32), dynamic (dynamic-range int8 weights),
# float16, int8 (full integer, calibrated on the train split).
QUANTIZATIONS = ("none", "dynamic", "float16", "int8")


def check_quantize(quantize: str) -> None:
    """Refuses a conversion that is not one of QUANTIZATIONS, naming the flag."""
    if quantize not in QUANTIZATIONS:
        raise ValueError(f"--quantize must be one of {', '.join(QUANTIZATIONS)}, "
                         f"got {quantize!r}")


@dataclasses.dataclass(frozen=True)
class PushSettings:
    """The TFLite push, the serving check and the drift gate; no defaults
    (pipeline/config.py has them)."""

    tflite_dir: Optional[str]  # base folder of the TFLite versions; None: no TFLite
    quantize: str  # one of QUANTIZATIONS
    parity_tolerance: float  # TFLite eval accuracy may be this much below the SavedModel's
    warmup_records: int  # eval images in the warmup file, one request each
    warmup_max_bytes: int  # the warmup file's size bound
    warmup_batch_sizes: Tuple[int, ...]  # batched requests added to the warmup file
    rest_requests: int  # timed single-image REST requests of the serving check
    atol: float  # REST answers vs the Evaluator's signature, per probability
    timeout_s: int  # a serving check that takes longer fails
    allow_drift: bool  # push even when the newest span drifted from the one before

    def __post_init__(self):
        check_quantize(self.quantize)
