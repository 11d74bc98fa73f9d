"""What a window of production traffic is made of, whatever log or folder it came from.

Every reader (monitor/readers/) yields these; the monitor scores the
records that carry no answer, and counts and names the bad ones.
"""
import dataclasses
from typing import Optional, Union

import numpy as np


@dataclasses.dataclass
class Record:
    """One request: the input and, where the log holds it, the served model's answer."""

    id: str  # a path, a request id, or FILE:LINE / FILE#N
    image: Optional[bytes] = None  # the encoded image, when the log holds it or it was read
    probabilities: Optional[np.ndarray] = None  # every class's, when logged
    predicted: Optional[int] = None  # the top class id, when only it is logged
    confidence: Optional[float] = None  # its probability, likewise


@dataclasses.dataclass
class BadRecord:
    """A record that could not be read or scored, and why; counted, never fatal."""

    id: str
    reason: str


Item = Union[Record, BadRecord]
