"""Where the Trainer keeps decoded, transformed images after the first epoch.

Every split is decoded and resized once per run instead of once per epoch
(modules/trainer.make_dataset caches after the transform graph). Splits that fit the memory
budget stay in memory; the others go to a tf.data cache file in the
Trainer's working directory, which `remove_caches` deletes afterwards;
splits too large for the free disk stream from the TFRecords every epoch.
"""
import contextlib
import math
import os
import shutil
from typing import Dict, Iterator, Optional, Sequence

from core.storage import files

MEMORY = ""  # tf.data.Dataset.cache's filename for "in memory"
CACHE_DIR = ".decode_cache"


def split_bytes(examples: int, image_shape: Sequence[int]) -> int:
    """Bytes of `examples` decoded float32 images."""
    return examples * math.prod(image_shape) * 4


def free_disk_bytes(path: str) -> Optional[int]:
    """Free bytes on the local filesystem holding `path`; None for remote (gs://) paths."""
    if files.is_remote(path):
        return None
    while not os.path.exists(path):
        path = os.path.dirname(path) or "."
    return shutil.disk_usage(path).free


def plan_caches(examples: Dict[str, int], image_shape: Sequence[int], budget: int,
                cache_dir: str, disk_headroom: int) -> Dict[str, Optional[str]]:
    """Per split: MEMORY, a cache file under `cache_dir`, or None (stream every epoch).

    Splits are placed in memory in the given order while they fit `budget`
    together; the rest get files while the disk keeps `disk_headroom` free
    after them, so a huge dataset cannot fill the disk; the others, and
    splits of unknown size, stream.
    """
    placed, used, disk = {}, 0, free_disk_bytes(cache_dir)
    for split, count in examples.items():
        size = split_bytes(count, image_shape)
        if count <= 0:
            placed[split] = None
        elif used + size <= budget:
            placed[split], used = MEMORY, used + size
        elif disk is None or disk - size >= disk_headroom:
            placed[split] = os.path.join(cache_dir, split)
            disk = None if disk is None else disk - size
        else:
            placed[split] = None
    return placed


def shuffle_buffer(examples: int, image_shape: Sequence[int], cache: str,
                   file_buffer_bytes: int = 256 << 20) -> int:
    """The whole split when cached in memory; from a file, a buffer of bounded bytes."""
    if cache == MEMORY:
        return examples
    return max(1, min(examples, file_buffer_bytes // max(1, split_bytes(1, image_shape))))


@contextlib.contextmanager
def remove_caches(cache_dir: str) -> Iterator[str]:
    """Creates `cache_dir`, yields it, and deletes it, every cache file in it, and its
    parent folder if that is left empty (one subfolder per Trainer execution).

    Local under the state folder, but under the Trainer's artifacts (a gs://
    prefix on Kubeflow) when no state folder is given: hence core/storage.
    """
    files.makedirs(cache_dir)
    try:
        yield cache_dir
    finally:
        files.rmtree(cache_dir)
        parent = os.path.dirname(cache_dir)
        if not files.is_remote(parent):  # an object store has no empty folders to remove
            with contextlib.suppress(OSError):  # other executions' caches are still there
                os.rmdir(parent)
