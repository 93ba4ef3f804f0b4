"""HashIndex finds exactly what binary search finds: first and end entry of each probe's hash."""
from __future__ import annotations

import numpy as np
import pytest

from rw_cli.common.hash_index import HashIndex, expand_ranges


@pytest.mark.parametrize("n,dup", [(0, 1), (1, 1), (7, 3), (1000, 1), (5000, 1), (5000, 40), (20000, 2), (60000, 300)])
def test_lookup_matches_searchsorted(n, dup):
    rng = np.random.default_rng(n + dup)
    base = rng.integers(0, 2**64 - 1, max(1, n // dup), dtype=np.uint64)
    base[:3] = [0, 2**64 - 1, 2**63][: len(base[:3])]  # the extremes of the hash space
    hashes = np.sort(np.repeat(base, rng.integers(1, 2 * dup, len(base)))[:n])
    probes = np.unique(np.concatenate([rng.choice(base, 300), rng.integers(0, 2**64 - 1, 300, dtype=np.uint64),
                                       np.array([0, 2**64 - 1], dtype=np.uint64)]))
    hit, first, end = HashIndex(hashes).lookup(probes)
    lo = np.searchsorted(hashes, probes, "left")
    hi = np.searchsorted(hashes, probes, "right")
    found = hi > lo
    assert hit.tolist() == np.flatnonzero(found).tolist()
    assert first.tolist() == lo[found].tolist() and end.tolist() == hi[found].tolist()
    assert expand_ranges(first, end).tolist() == [i for a, b in zip(lo[found], hi[found]) for i in range(a, b)]
