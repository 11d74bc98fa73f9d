"""The order a shard's row units are written in: one example from each in turn.

A shard of row units (shards.plan_shards) holds pieces from evenly spaced places of a
dataset; reading them in turn puts those places side by side in the output file. Its own
module, free of TensorFlow and pyarrow, since encode_worker imports it at start.
"""
from typing import Iterator, List

_SPENT = object()


def round_robin(streams: List[Iterator]) -> Iterator:
    """One item from each stream in turn, until all are spent."""
    active = list(streams)
    while active:
        for stream in list(active):
            item = next(stream, _SPENT)
            if item is _SPENT:
                active.remove(stream)
            else:
                yield item
