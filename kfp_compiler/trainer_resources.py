"""The compiled Trainer's own memory: from --trainer-memory, or the Vertex machine type.

The plan for a compiled pipeline sizes the Trainer's decode cache from
this, not from the machine that compiles: the Trainer runs elsewhere.
"""
import re
from typing import Optional

from core.errors import UsageError
from pipeline.planning import rules

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT])(i?B?)$", re.IGNORECASE)
_MIN_MEMORY = 256 << 20  # below this no Trainer runs: a typo (16 for 16G), not a machine
# GiB per vCPU of Compute Engine's predefined machine families (their docs' table).
_PER_VCPU = {"standard": {"n1": 3.75, "n2": 4, "n2d": 4, "e2": 4, "c2": 4, "g2": 4},
             "highmem": {"n1": 6.5, "n2": 8, "n2d": 8, "e2": 8},
             "highcpu": {"n1": 0.9, "n2": 1, "n2d": 1, "e2": 1, "c2": 1}}
# GiB per GPU of the a2 types: a2-highgpu-Ng (A100 40 GB), a2-ultragpu-Ng (A100 80 GB).
_A2_PER_GPU = {"highgpu": 85, "megagpu": 85, "ultragpu": 170}
_A2 = re.compile(r"^a2-(highgpu|megagpu|ultragpu)-(\d+)g$")


def parse_memory(text: str, flag: str = "--trainer-memory") -> int:
    """Bytes from `16G`, `16Gi`, `512M`, `1.5T` (binary units, one required); at least
    256 MiB; UsageError otherwise."""
    match = _SIZE.match(text.strip())
    size = int(float(match.group(1)) * _UNITS[match.group(2).upper()]) if match else 0
    if size < _MIN_MEMORY:
        raise UsageError(f"{flag} {text!r}: give a size of at least 256M, such as 16G")
    return size


def machine_memory(machine_type: str) -> Optional[int]:
    """Bytes of a predefined Compute Engine machine type, or None if not known here."""
    a2 = _A2.match(machine_type)
    if a2:
        return int(a2.group(2)) * _A2_PER_GPU[a2.group(1)] << 30
    parts = machine_type.split("-")
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    per_vcpu = _PER_VCPU.get(parts[1], {}).get(parts[0])
    return None if per_vcpu is None else int(per_vcpu * int(parts[2]) * (1 << 30))


def trainer_memory(flag: Optional[str], target: str, machine_type: Optional[str],
                   custom_job: bool) -> int:
    """The flag's size; else a Vertex custom job's machine type's; else the planner's default."""
    if flag:
        return parse_memory(flag)
    if target == "vertex" and custom_job and machine_type:
        known = machine_memory(machine_type)
        if known:
            return known
    return rules.COMPILED_TRAINER_MEMORY


def kubernetes_quantity(size: int) -> str:
    """`16Gi`, `1536Mi`: what a pod's resources.limits.memory takes."""
    return f"{size >> 30}Gi" if size % (1 << 30) == 0 else f"{size >> 20}Mi"
