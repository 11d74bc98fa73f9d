"""Shards: the unit of Beam work, and a manifest file that carries them to the workers.

Why a manifest: `beam.Create(shards)` puts the whole listing inside the
pipeline, which Beam pickles and bz2-compresses about ten times while it
builds and runs it; for a large listing that was a large share of the
ingestion (measured: docs/performance.md). The manifest is JSON lines (no
pickle: file names are the dataset's), written once beside the output and read
by the first stage.
"""
import dataclasses
import hashlib
import json
from typing import Iterator, List, Optional, Tuple

from components.image_example_gen.readers.arrays import ArrayChunk
from components.image_example_gen.readers.folder_tree import ImageFile
from components.image_example_gen.readers.hub_datasets.hf_rows import HfRows
from components.image_example_gen.readers.hub_datasets.tfds_folders import TfdsShard
from components.image_example_gen.readers.tfrecords import RecordFile
from core.storage import files

# Image files per shard, at most: one Beam element, and one output file per split.
SHARD_FILES = 512
# Row units (Hugging Face rows, TFDS shards, TFRecord files) per shard, at most: each
# output file interleaves its units' rows, taken from evenly spaced places of the dataset.
SHARD_ROW_UNITS = 8
MANIFEST_FILE = ".ingest_manifest.jsonl"
_UNIT_TYPES = {cls.__name__: cls for cls in (ImageFile, ArrayChunk, RecordFile, HfRows,
                                             TfdsShard)}

Shard = Tuple[int, int, list]  # (index, count, units)


def plan_shards(units: list, processes: int = 1) -> List[Shard]:
    """Groups listed units into shards: (index, count, units).

    Image files are taken in the order of a hash of their paths, so every
    shard (and every output file) mixes the classes, as the shuffle in TFX's
    WriteSplit did, and the Trainer's shuffle buffer need not span a class.
    They are cut into equal shards of at most SHARD_FILES, as many as a
    multiple of `processes` (the local encoding workers), so that no worker
    is left encoding a shard after the others are done (7 shards for 2
    workers would leave one with 4).
    Rows of a dataset (Hugging Face, TFDS, TFRecords) come in the order they were
    stored, often class by class, and their units cannot be split into single rows
    without reading each unit many times. So shard i takes units i, i + n, i + 2n, ...
    (n shards), from evenly spaced places of the dataset, and its output interleaves
    their rows (ingest.py), up to SHARD_ROW_UNITS places a file.
    Array chunks are a shard each: a chunk is read into memory whole.
    """
    if units and isinstance(units[0], ImageFile):
        units = sorted(units, key=lambda u: hashlib.sha256(u.relpath.encode("utf-8")).digest())
        count = _shard_count(len(units), SHARD_FILES, processes)
        groups = [units[i * len(units) // count:(i + 1) * len(units) // count]
                  for i in range(count)]
    elif units and not isinstance(units[0], ArrayChunk):
        count = _shard_count(len(units), SHARD_ROW_UNITS, processes)
        groups = [units[i::count] for i in range(count)]
    else:
        groups = [[unit] for unit in units]
    return [(index, len(groups), group) for index, group in enumerate(groups)]


def _shard_count(units: int, per_shard: int, processes: int) -> int:
    """Shards of at most `per_shard` units, as many as a multiple of `processes`."""
    count = -(-units // per_shard)
    return min(units, -(-count // processes) * processes)


def _unit_to_json(unit) -> list:
    """[type name, field values...]; not dataclasses.asdict, which deep-copies (slow)."""
    return [type(unit).__name__, *(getattr(unit, f.name) for f in dataclasses.fields(unit))]


def _unit_from_json(row: list):
    cls, values = _UNIT_TYPES[row[0]], row[1:]
    if cls is ArrayChunk:  # JSON has no tuples
        values[-1] = tuple(values[-1])
    return cls(*values)


def write_manifest(path: str, shards: List[Shard]) -> None:
    """One JSON line per shard."""
    with files.open_file(path, "w") as f:
        for index, count, units in shards:
            f.write(json.dumps([index, count, [_unit_to_json(u) for u in units]],
                               ensure_ascii=False) + "\n")


def manifest_lines(path: str) -> Iterator[str]:
    """The manifest's lines, one per shard: Beam moves strings far faster than objects.

    Shards of dataclasses went through Beam's pickle fallback unit by unit,
    many calls per file, before the first shard could start (measured:
    docs/performance.md).
    """
    with files.open_file(path, "r") as f:
        yield from f


def shard_rows(line: str) -> Tuple[int, int, List[list]]:
    """(index, count, [[unit type, *fields], ...]) of a manifest line: a shard as it goes
    to an encoding worker, without building objects."""
    index, count, rows = json.loads(line)
    return index, count, rows


def units_of(rows: List[list]) -> list:
    """A shard's units, from its rows."""
    return [_unit_from_json(row) for row in rows]


def parse_shard(line: str) -> Shard:
    """One shard from its manifest line."""
    index, count, rows = shard_rows(line)
    return index, count, units_of(rows)


# Row units a worker process reads (encode_worker): not array chunks, read into memory
# whole (10,000 images each), which on every core at once could exhaust the memory.
POOLED_UNITS = ("HfRows", "TfdsShard", "RecordFile")


def worker_kind(rows: List[list]) -> Optional[str]:
    """"files" (image files) or "units" (row units) for a shard an encoding worker can
    take (encode_worker's two requests); None for array chunks."""
    kind = rows[0][0]
    return "files" if kind == ImageFile.__name__ else "units" if kind in POOLED_UNITS \
        else None
