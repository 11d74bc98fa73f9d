"""Find every pair of perceptual hashes within NEAR_THRESHOLD bits without comparing all pairs.

Multi-index hashing: the 64 bits are cut into NEAR_THRESHOLD + 1 bands. Two
hashes at most NEAR_THRESHOLD bits apart agree exactly on at least one band
(pigeonhole), so only hashes sharing a band's value are compared. Identical
hashes (blank or flat images share one) are kept as one value, so they never
flood a band's bucket.

In NumPy, one sort per band: ingestion runs this in the parent after the last
shard, where a Python query per image took most of the checks' own time.
"""
import collections.abc
from typing import Dict, Iterator, List, Sequence, Tuple

import numpy as np

from components.image_example_gen.data_health.hashing import HASH_BITS

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


def _band_candidates(values: np.ndarray, shift: int, mask: int) -> np.ndarray:
    """[k, 2] index pairs of distinct `values` sharing this band's bits, from buckets of
    at most MAX_BUCKET values."""
    keys = (values >> np.uint64(shift)) & np.uint64(mask)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    lengths = np.diff(np.r_[starts, len(ordered)])
    searched = (lengths >= 2) & (lengths <= MAX_BUCKET)
    if not searched.any():
        return np.empty((0, 2), dtype=np.int64)
    run = np.repeat(np.arange(len(starts)), lengths)
    searched_at = searched[run]
    pairs = [np.empty((0, 2), dtype=np.int64)]
    # Within a bucket (a run of the sorted keys) every position pairs with each later
    # one: offset by offset, on slices.
    for offset in range(1, int(lengths[searched].max())):
        same = np.flatnonzero((run[:-offset] == run[offset:]) & searched_at[:-offset])
        pairs.append(np.stack([order[same], order[same + offset]], axis=1))
    return np.concatenate(pairs)


def _popcount(x: np.ndarray) -> np.ndarray:
    """Bits set in each uint64 (SWAR: NumPy 1.x has no bitwise_count)."""
    m1, m2, m4 = (np.uint64(0x5555555555555555), np.uint64(0x3333333333333333),
                  np.uint64(0x0F0F0F0F0F0F0F0F))
    x = x - ((x >> np.uint64(1)) & m1)
    x = (x & m2) + ((x >> np.uint64(2)) & m2)
    x = (x + (x >> np.uint64(4))) & m4
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


def _close_pairs(values: np.ndarray) -> np.ndarray:
    """[k, 2] index pairs (first < second) of distinct `values` within NEAR_THRESHOLD bits."""
    candidates = np.concatenate([_band_candidates(values, shift, mask)
                                 for shift, mask in _bands()])
    close = candidates[_popcount(values[candidates[:, 0]] ^ values[candidates[:, 1]])
                       <= NEAR_THRESHOLD]
    close.sort(axis=1)
    # A pair found through several bands once: encoded as one int64 each.
    codes = np.unique(close[:, 0] * len(values) + close[:, 1])
    return np.stack([codes // len(values), codes % len(values)], axis=1)


class NearCopies(collections.abc.Sequence):
    """For each position in the hashes, the other positions within NEAR_THRESHOLD bits
    (identical hashes included), in ascending order, each list built when asked.

    Built lazily because N identical hashes (blank or flat images) would otherwise be N
    lists of N - 1, memory quadratic in N (docs/data_health.md). Positions that share a
    hash have the same near copies apart from themselves.
    """

    def __init__(self, which: np.ndarray, members: Dict[int, List[int]],
                 near_values: Dict[int, List[int]]):
        self._which, self._members, self._near = which, members, near_values

    def __len__(self) -> int:
        return len(self._which)

    def __getitem__(self, position: int) -> List[int]:
        value = int(self._which[position])
        if value not in self._members:
            return []
        others = [p for v in self._near[value] for p in self._members[v]]
        return sorted(others + [p for p in self._members[value] if p != position])

    def links(self) -> Iterator[Tuple[int, int]]:
        """Pairs of positions that join every near copy to the others, transitively.

        Linear in the positions: members of one hash form a chain, and two close hashes
        are joined through their first members, never a pair per two copies (N blank
        images would be N^2 pairs).
        """
        for value, positions in self._members.items():
            yield from zip(positions, positions[1:])
            yield from ((positions[0], self._members[other][0])
                        for other in self._near[value] if other > value)


def near_lists(hashes: Sequence[int]) -> NearCopies:
    """For each position in `hashes`, the other positions within NEAR_THRESHOLD bits
    (identical hashes included), in ascending order (see NearCopies)."""
    values, which = np.unique(np.asarray(hashes, dtype=np.uint64), return_inverse=True)
    close = _close_pairs(values)
    counts = np.bincount(which, minlength=len(values))
    linked = np.zeros(len(values), dtype=bool)
    linked[close.ravel()] = True
    linked |= counts > 1
    members: Dict[int, List[int]] = {int(v): [] for v in np.flatnonzero(linked)}
    for position in np.flatnonzero(linked[which]).tolist():
        members[int(which[position])].append(position)
    near_values: Dict[int, List[int]] = {value: [] for value in members}
    for a, b in close.tolist():
        near_values[a].append(b)
        near_values[b].append(a)
    return NearCopies(which, members, near_values)
