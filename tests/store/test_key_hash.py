"""The byte-column hashing of short keys gives exactly the general routine's hashes: SST
Bloom filters written before it must still answer the same."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from rw_cli.common.vnode import _hash_general, binary_parts, hash_bytes_parts
from rw_cli.store.sst import key_hashes


def test_grouped_and_fixed_hashes_equal_the_general_routine():
    rng = np.random.default_rng(11)
    cases = [
        [bytes(rng.integers(0, 256, 22, dtype=np.uint8)) for _ in range(500)],  # one length
        [bytes(rng.integers(0, 256, rng.choice([0, 6, 14, 22, 30]), dtype=np.uint8)) for _ in range(2000)],
        [bytes(rng.integers(0, 256, rng.integers(0, 80), dtype=np.uint8)) for _ in range(300)],  # many lengths
        [b""] * 5,
        [bytes([255] * 64), bytes([0] * 64), b"x" * 65],
        # sorted keys of a few tables (a table id byte, then keys of one length per table):
        # runs of one length whose bytes lie side by side
        sorted(bytes([t]) + bytes(rng.integers(0, 256, L, dtype=np.uint8))
               for t, L, k in [(1, 0, 1), (2, 8, 40), (3, 16, 3000), (4, 32, 7), (5, 8, 20)] for _ in range(k)),
    ]
    for values in cases:
        arr = pa.array(values, pa.binary())
        offs, data = binary_parts(arr)
        want = _hash_general(offs, data)
        assert np.array_equal(hash_bytes_parts(offs, data), want)
        assert np.array_equal(key_hashes(arr), want)
        # a slice (offsets not starting at 0) hashes the same values the same way
        sl = arr.slice(1)
        assert np.array_equal(key_hashes(sl), want[1:])
