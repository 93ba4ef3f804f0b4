"""HashIndex: where given 64-bit hashes occur in a sorted array of hashes.

Binary search (np.searchsorted) costs about 20 cache misses a probe over millions of
entries, twice per probe (left and right bound). Hashes are uniform, so a directory on their
top bits sends a probe straight to a bucket of a few distinct hashes, which is then walked
in a few vectorized steps (each over the probes still walking). A probe costs a few memory
reads whatever the size of the array. Runs of equal hashes (a partition of many rows) are
one distinct hash here, so no walk is longer than the bucket.
"""
from __future__ import annotations

import numpy as np


SMALL = 4096  # up to this many hashes binary search is as fast, with no directory to build


class HashIndex:
    __slots__ = ("hashes", "distinct", "starts", "directory", "shift")

    def __init__(self, hashes: np.ndarray):
        """`hashes`: sorted uint64."""
        n = len(hashes)
        self.hashes = hashes
        if n <= SMALL:
            self.distinct = self.starts = self.directory = None
            return
        if n and bool((hashes[1:] != hashes[:-1]).all()):
            self.distinct, self.starts = hashes, None  # all distinct: entry i is hash i
        else:
            first = np.ones(n, dtype=bool)
            first[1:] = hashes[1:] != hashes[:-1]
            self.starts = np.append(np.flatnonzero(first), n)
            self.distinct = hashes[first]
        # about two distinct hashes a bucket
        bits = max(1, int(len(self.distinct)).bit_length() - 1)
        self.shift = np.uint64(64 - bits)
        counts = np.bincount((self.distinct >> self.shift).astype(np.int64), minlength=1 << bits)
        self.directory = np.concatenate([[0], np.cumsum(counts)])

    def lookup(self, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(probe numbers, first entry, end entry) of the probes found: entries
        [first, end) of the sorted array hold that probe's hash."""
        if self.directory is None:
            first = np.searchsorted(self.hashes, probes, "left")
            end = np.searchsorted(self.hashes, probes, "right")
            hit = np.flatnonzero(end > first)
            return hit, first[hit], end[hit]
        d = self.distinct
        bucket = (probes >> self.shift).astype(np.int64)
        j = self.directory[bucket]
        end = self.directory[bucket + 1]
        found = np.zeros(len(probes), dtype=bool)
        walking = np.flatnonzero(j < end)
        while len(walking):
            v = d[j[walking]]
            p = probes[walking]
            found[walking[v == p]] = True
            walking = walking[v < p]
            j[walking] += 1
            walking = walking[j[walking] < end[walking]]
        hit = np.flatnonzero(found)
        k = j[hit]
        if self.starts is None:
            return hit, k, k + 1
        return hit, self.starts[k], self.starts[k + 1]


def expand_ranges(first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Every position in the ranges [first, end), range after range."""
    lengths = end - first
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(first - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(total)
