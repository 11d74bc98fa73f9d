"""`--accelerator tpu:TYPE:TOPOLOGY` or `gpu:TYPE:COUNT`, for the Trainer step on GKE/Vertex.

Plain parsing, no TFX: what the compiled spec must request, on which nodes.
"""
import dataclasses
import math
import re
from typing import Dict, Optional

from core.errors import UsageError

RESOURCES = {"tpu": "google.com/tpu", "gpu": "nvidia.com/gpu"}
# The most chips one TPU VM host has (v5e/v6e: 8; v4/v5p: 4): one pod, one host.
MAX_HOST_CHIPS = 8


@dataclasses.dataclass(frozen=True)
class Accelerator:
    kind: str  # "tpu" or "gpu"
    type: str  # GKE's name: tpu-v5-lite-podslice, nvidia-tesla-t4, ...
    topology: Optional[str]  # TPUs: chips per dimension, e.g. 2x4
    count: int  # chips (TPU) or GPUs the Trainer's pod requests

    @property
    def resource(self) -> str:
        """The Kubernetes extended resource the pod requests."""
        return RESOURCES[self.kind]

    def node_selector(self) -> Dict[str, str]:
        """GKE node labels of a node pool with this accelerator."""
        if self.kind == "tpu":
            return {"cloud.google.com/gke-tpu-accelerator": self.type,
                    "cloud.google.com/gke-tpu-topology": self.topology}
        return {"cloud.google.com/gke-accelerator": self.type}

    def vertex_type(self) -> str:
        """Vertex AI's spelling of the type: nvidia-tesla-t4 -> NVIDIA_TESLA_T4."""
        return self.type.upper().replace("-", "_")


_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_TOPOLOGY = re.compile(r"^[1-9][0-9]*(x[1-9][0-9]*){1,2}$")


def parse_accelerator(text: Optional[str]) -> Optional[Accelerator]:
    """None for None; raises UsageError naming --accelerator for anything malformed."""
    if not text:
        return None
    parts = text.split(":")
    usage = (f"--accelerator {text}: expected tpu:TYPE:TOPOLOGY (e.g. "
             "tpu:tpu-v5-lite-podslice:2x4) or gpu:TYPE:COUNT (e.g. gpu:nvidia-tesla-t4:1)")
    if len(parts) != 3 or parts[0] not in RESOURCES or not _NAME.match(parts[1]):
        raise UsageError(usage)
    kind, kind_type, size = parts
    if kind == "tpu":
        if not _TOPOLOGY.match(size):
            raise UsageError(usage)
        chips = math.prod(int(d) for d in size.split("x"))
        if chips > MAX_HOST_CHIPS:
            raise UsageError(f"--accelerator {text}: {chips} chips span several TPU hosts; "
                             f"one pod takes the whole slice, so at most {MAX_HOST_CHIPS} "
                             "(e.g. tpu-v5-lite-podslice:2x4)")
        return Accelerator(kind, kind_type, size, chips)
    if not size.isdigit() or int(size) < 1:
        raise UsageError(usage)
    return Accelerator(kind, kind_type, None, int(size))
