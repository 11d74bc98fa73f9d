"""IngestOptions: how to read a dataset; travels to the executor as one JSON exec property.

Also the split rule, which encoding workers apply too, so this module imports
nothing heavy.
"""
import bisect
import dataclasses
import hashlib
import json
from typing import Optional, Sequence

SPLITS = ("train", "eval")

FORMATS = ("auto", "folder", "idx", "npz", "tfrecord")
# Over this, an image is refused before decoding (decompression bombs).
DEFAULT_MAX_PIXELS = 100_000_000


@dataclasses.dataclass(frozen=True)
class IngestOptions:
    """Reader settings shared by `imagepipe run` and `imagepipe ingest`."""

    format: str = "auto"
    strict: bool = False
    max_pixels: int = DEFAULT_MAX_PIXELS
    image_key: str = "image/encoded"
    label_key: str = "image/class/label"
    eval_percent: int = 20

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if not 0 < self.eval_percent < 100:
            raise ValueError(f"eval_percent must be in 1..99, got {self.eval_percent}")
        if self.max_pixels < 1:
            raise ValueError(f"max_pixels must be >= 1, got {self.max_pixels}")

    @property
    def buckets(self):
        """Cumulative hash buckets of the train/eval split, e.g. [80, 100]."""
        return [100 - self.eval_percent, 100]

    def to_json(self) -> str:
        """Serialized for a TFX exec property."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: Optional[str]) -> "IngestOptions":
        """The inverse of to_json; None gives the defaults."""
        return cls(**json.loads(text)) if text else cls()


def split_index(relpath: str, buckets: Sequence[int]) -> int:
    """Which split a file goes to, from a hash of its relative path alone.

    `buckets` are cumulative hash-bucket counts, e.g. [80, 100] for 80/20.
    The same path lands in the same split on every run, machine and listing
    order; adding files never moves existing ones between splits.
    """
    bucket = int(hashlib.sha256(relpath.encode("utf-8")).hexdigest(), 16) % buckets[-1]
    return bisect.bisect(buckets, bucket)
