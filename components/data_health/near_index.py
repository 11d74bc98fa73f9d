"""Find perceptual hashes within NEAR_THRESHOLD bits of a query without comparing all pairs.

Multi-index hashing: the 64 bits are cut into NEAR_THRESHOLD + 1 bands. Two
hashes at most NEAR_THRESHOLD bits apart agree exactly on at least one band
(pigeonhole), so only hashes sharing a band's value with the query are
compared. Identical hashes (blank or flat images share one) are kept as one
entry, so they never flood a band's bucket.
"""
import collections
from typing import Dict, Iterable, List, Tuple

from components.data_health.hashing import HASH_BITS

# Bits two perceptual hashes may differ by and still be near copies. Measured
# (docs/data_health.md): JPEG re-encoding at quality 60-80 and resizing to
# 0.5-0.8x move a 64-bit dHash by 0-4 bits; unrelated photos differ by ~32.
# 4 keeps the bands 12-13 bits wide, so buckets stay small at 100k images.
NEAR_THRESHOLD = 4
# A band bucket with more distinct hashes than this is not searched: such a
# value (a near-flat band) says little, and comparing against all of it would
# make the search quadratic. Matches through other bands are still found.
MAX_BUCKET = 256


def _bands(bits: int = HASH_BITS, count: int = NEAR_THRESHOLD + 1) -> List[Tuple[int, int]]:
    """(shift, mask) of each band: `count` bands, as even as `bits` allows."""
    edges = [round(i * bits / count) for i in range(count + 1)]
    return [(lo, (1 << (hi - lo)) - 1) for lo, hi in zip(edges, edges[1:])]


class NearIndex:
    """Ids by perceptual hash; `near(hash)` gives every id within NEAR_THRESHOLD bits."""

    def __init__(self, entries: Iterable[Tuple[int, int]]):
        """`entries` are (id, hash) pairs."""
        self._ids: Dict[int, List[int]] = collections.defaultdict(list)
        for ident, value in entries:
            self._ids[value].append(ident)
        self._bands = _bands()
        self._buckets = [collections.defaultdict(list) for _ in self._bands]
        for value in self._ids:
            for bucket, (shift, mask) in zip(self._buckets, self._bands):
                bucket[(value >> shift) & mask].append(value)

    def near(self, value: int) -> List[int]:
        """Ids whose hash is within NEAR_THRESHOLD bits of `value` (identical ones included)."""
        seen = {value}
        for bucket, (shift, mask) in zip(self._buckets, self._bands):
            found = bucket.get((value >> shift) & mask)
            if found and len(found) <= MAX_BUCKET:
                seen.update(found)
        ids = self._ids
        return [ident for other in seen if (value ^ other).bit_count() <= NEAR_THRESHOLD
                and other in ids for ident in ids[other]]
