"""ServingCheckSettings: what ImageInfraValidator is told, one ExecutionParameter per field.

Light (no TensorFlow): settings/config.py builds them from its SERVING_CHECK defaults.
"""
import dataclasses
from typing import Optional, Tuple


@dataclasses.dataclass(frozen=True)
class ServingCheckSettings:
    """The warmup records and the serving check; no defaults (settings/config.py has them)."""

    model_name: str  # the served model's name, in the warmup requests' model_spec
    warmup_records: int  # eval images in the warmup file, one request each
    warmup_max_bytes: int  # the warmup file's size bound
    warmup_batch_sizes: Tuple[int, ...]  # batched requests added to the warmup file
    rest_requests: int  # timed single-image REST requests of the serving check
    atol: float  # REST answers vs the Evaluator's signature, per probability
    timeout_s: int  # a serving check that takes longer fails
    # A tensorflow_model_server binary that loads the model and answers the REST
    # requests (model_server.py); None: the TensorFlow-only process answers them.
    model_server: Optional[str]
