"""Write one shard's examples as gzipped TFRecord files, one per split.

Ingestion writes its own files instead of handing every example to Beam's
WriteToTFRecord: on DirectRunner, moving many small examples through more Beam
stages (TFX's WriteSplit adds a Reshuffle of every record) cost more than
encoding them did (measured: docs/performance.md). Each file is written under
a temporary name and renamed once the whole shard is written, so a failed or
retried shard never leaves a partial file under a final name. Files go
through core/storage, which writes local ones with the standard
library, so encoding workers need not import Beam or TensorFlow (slow).
"""
import collections
import gzip
import os
import struct
import uuid
from typing import Dict, Iterable, List, Optional, Tuple

import google_crc32c

from components.image_example_gen.encoding.encode import Encoded, Fact
from core.storage import files


def _masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC-32C (tensorflow/core/lib/hash/crc32c.h: Mask)."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, the data, masked CRC of the data."""
    length = struct.pack("<Q", len(record))
    return b"".join((length, struct.pack("<I", _masked_crc(length)), record,
                     struct.pack("<I", _masked_crc(record))))


def shard_name(index: int, count: int) -> str:
    """File name of shard `index` of `count`; `.gz` tells TFX's readers it is gzipped."""
    return f"data-{index:05d}-of-{count:05d}.tfrecord.gz"



class _Gzip:
    """A gzip stream with no name and no time in its header over a raw file, closing both.

    No name (it would be the temporary one) and no time: the same examples
    give byte-identical files. Level 1: image bytes are compressed already, so
    level 6 saved almost no space on JPEG records and took longer (measured:
    docs/performance.md).
    """

    def __init__(self, raw):
        self._raw = raw
        self._gzip = gzip.GzipFile(filename="", mode="wb", compresslevel=1, fileobj=raw,
                                   mtime=0)
        self.write = self._gzip.write

    def close(self) -> None:
        self._gzip.close()
        self._raw.close()


def _create(path: str) -> _Gzip:
    """A gzipped file at `path`, through core/storage; a local folder is made first.

    Remote files are written with TensorFlow's file client, whose uploads retry on HTTP 503
    and reset connections (Beam's FileSystems, over google-cloud-storage, does
    not retry an upload without a generation precondition), and committed by
    renaming each object, retried by core/storage.
    """
    if not files.is_remote(path):  # an object store has no folders to make
        os.makedirs(os.path.dirname(path), exist_ok=True)
    return _Gzip(files.open_file(path, "wb"))


def write_shard(items: Iterable[Encoded], split_dirs: Dict[str, str], name: str,
                health: Optional[list] = None) -> Tuple[Dict[Fact, int], List[dict]]:
    """Writes every encoded example to `<split_dirs[split]>/<name>`; returns (facts, skipped).

    `facts` counts examples by their encode.Fact (split, label, class text,
    shape, pixel statistics); `skipped` lists the skipped records. A split
    with no example gets no file. The files appear under their final names
    only if every item was written. `health`, if given, gets a row
    [relpath, content hash, perceptual hash, *fact] per hashed example.
    """
    facts, skipped, open_files = collections.Counter(), [], {}
    try:
        for item in items:
            if isinstance(item, dict):
                skipped.append(item)
                continue
            split, record, fact, hashes = item
            if health is not None and hashes is not None:
                health.append([*hashes, *fact])
            if split not in open_files:
                temp = os.path.join(split_dirs[split], f".{name}.{uuid.uuid4().hex}.tmp")
                open_files[split] = (_create(temp), temp)
            open_files[split][0].write(frame(record))
            facts[fact] += 1
    except BaseException:
        for file, _ in open_files.values():
            file.close()
        for _, temp in open_files.values():
            files.remove(temp)
        raise
    for file, _ in open_files.values():
        file.close()
    for split, (_, temp) in open_files.items():
        files.rename(temp, os.path.join(split_dirs[split], name))
    return dict(facts), skipped
