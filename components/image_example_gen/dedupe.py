"""Edits to the written shards after data health: --dedupe's drops, the group split's moves.

Workers split by a hash of each path (options.split_index) before any copy is
known; data health then names the copies to move to their group's split
(data_health/together.py) and, with --dedupe, the examples to drop. Each shard
holding such an example is rewritten once under a temporary name and renamed
over the original; moved examples go to one new shard per split
(MOVED_SHARD). The ingest report, written after this, is what marks the
output complete.
"""
import os
from typing import Dict, List, Set, Tuple

import tensorflow as tf

from core.contract import FILENAME_KEY
from components.image_example_gen.encoding.encode import Fact
from core.storage import files

_GZIP = tf.io.TFRecordOptions(compression_type="GZIP")
# Matches the shards' "data-*" (shard_writer.shard_name), so readers and a later pass
# see it as one more shard.
MOVED_SHARD = "data-moved.tfrecord.gz"


def _filename(record: bytes) -> str:
    feature = tf.train.Example.FromString(record).features.feature[FILENAME_KEY]
    return feature.bytes_list.value[0].decode("utf-8")


def _rewrite_shard(path: str, dropped: Set[str], moves: Dict[str, str], movers: dict) -> None:
    """Rewrites one shard without the dropped and moved examples (removes it if none is
    left); a moved one goes to `movers[split]`, a TFRecordWriter opened when first needed."""
    records = list(tf.compat.v1.io.tf_record_iterator(path, options=_GZIP))
    kept = []
    for record in records:
        name = _filename(record)
        if name in dropped:
            continue
        if name in moves:
            movers[moves[name]].write(record)
        else:
            kept.append(record)
    if len(kept) == len(records):
        return
    if not kept:
        files.remove(path)
        return
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.dedupe.tmp")
    with tf.io.TFRecordWriter(temp, _GZIP) as writer:
        for record in kept:
            writer.write(record)
    files.rename(temp, path)


class _Movers(dict):
    """{split: writer of its MOVED_SHARD}, each opened on its first record, under a
    temporary name until `close`."""

    def __init__(self, split_dirs: Dict[str, str]):
        super().__init__()
        self._dirs = split_dirs

    def __missing__(self, split: str):
        self[split] = tf.io.TFRecordWriter(self._temp(split), _GZIP)
        return self[split]

    def _temp(self, split: str) -> str:
        return os.path.join(self._dirs[split], f".{MOVED_SHARD}.tmp")

    def close(self) -> None:
        for split, writer in self.items():
            writer.close()
            files.rename(self._temp(split), os.path.join(self._dirs[split], MOVED_SHARD))


def edit_shards(split_dirs: Dict[str, str], dropped: Set[str], moves: Dict[str, str]) -> None:
    """Removes the examples whose image/filename is in `dropped` from every shard, and
    moves those in `moves` to the split it names (a dropped one is not moved)."""
    if not dropped and not moves:
        return
    movers = _Movers(split_dirs)
    for split_dir in split_dirs.values():
        for path in files.glob(os.path.join(split_dir, "data-*")):
            _rewrite_shard(path, dropped, moves, movers)
    movers.close()


def facts_after(facts: List[Tuple[Fact, int]], health: List[list], dropped: Set[str],
                moves: Dict[str, str]) -> List[Tuple[Fact, int]]:
    """The fact counts less the dropped examples', with the moved ones' split changed
    (health rows carry each one's fact; a fact's first field is its split)."""
    counts = dict(facts)
    for row in health:
        if row[0] in dropped or row[0] in moves:
            fact = tuple(row[3:])
            counts[fact] -= 1
            if row[0] not in dropped:
                moved = (moves[row[0]], *fact[1:])
                counts[moved] = counts.get(moved, 0) + 1
    return [(fact, count) for fact, count in counts.items() if count > 0]
