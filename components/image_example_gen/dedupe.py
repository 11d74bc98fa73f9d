"""--dedupe: drop the examples data health marks, from the written shards.

A file's split is a hash of its own path (options.split_index), so dropping
examples after the shards are written gives the same splits as never
reading the files. Each shard with a dropped example is rewritten under a
temporary name and renamed over the original; the ingest report, written
after this, is what marks the output complete.
"""
import os
from typing import Dict, List, Set, Tuple

import tensorflow as tf

from components.common.contract import FILENAME_KEY
from components.image_example_gen.encoding.encode import Fact
from components.common.storage import files

_GZIP = tf.io.TFRecordOptions(compression_type="GZIP")


def _filename(record: bytes) -> str:
    feature = tf.train.Example.FromString(record).features.feature[FILENAME_KEY]
    return feature.bytes_list.value[0].decode("utf-8")


def _filter_shard(path: str, dropped: Set[str]) -> None:
    """Rewrites one shard without the dropped examples (removes it if none is left)."""
    records = list(tf.compat.v1.io.tf_record_iterator(path, options=_GZIP))
    kept = [r for r in records if _filename(r) not in dropped]
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


def drop_examples(split_dirs: Dict[str, str], dropped: Set[str]) -> None:
    """Removes the examples whose image/filename is in `dropped` from every shard."""
    if not dropped:
        return
    for split_dir in split_dirs.values():
        for path in files.glob(os.path.join(split_dir, "data-*")):
            _filter_shard(path, dropped)


def facts_without(facts: List[Tuple[Fact, int]], health: List[list],
                  dropped: Set[str]) -> List[Tuple[Fact, int]]:
    """The fact counts less the dropped examples' (health rows carry each one's fact)."""
    counts = dict(facts)
    for row in health:
        if row[0] in dropped:
            fact = tuple(row[3:])
            counts[fact] -= 1
    return [(fact, count) for fact, count in counts.items() if count > 0]
