"""PushSettings: what ImagePusher is told, one typed ExecutionParameter per field.

Light (no TensorFlow): settings/config.py builds them from its flags.
"""
import dataclasses
from typing import Optional


@dataclasses.dataclass(frozen=True)
class PushSettings:
    """Where the TFLite versions go, and the drift gate; no defaults (settings/config.py)."""

    tflite_dir: Optional[str]  # base folder of the TFLite versions; None: no TFLite
    allow_drift: bool  # push even when the newest span drifted from the one before
