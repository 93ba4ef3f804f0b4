"""take_parts: a gather from parts taken as one equals the gather from their concatenation."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common.chunked_take import part_starts, take_parts


@pytest.mark.parametrize("seed", range(4))
def test_take_parts_matches_the_concatenation(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 50, rng.integers(1, 7))  # empty parts included
    parts = [pa.array([None if v % 7 == 0 else f"v{v}" for v in rng.integers(0, 1000, n)], pa.string())
             for n in sizes]
    whole = pa.concat_arrays(parts)
    starts = part_starts(parts)
    assert starts[-1] == len(whole)
    for positions in (rng.integers(0, max(1, len(whole)), 30) if len(whole) else np.zeros(0, np.int64),
                      np.arange(len(whole)), np.zeros(0, np.int64)):
        positions = np.asarray(positions, np.int64)
        assert take_parts(parts, starts, positions).equals(whole.take(pa.array(positions, pa.int64())))


def test_take_parts_of_tables():
    parts = [pa.table({"a": [1, 2]}), pa.table({"a": [3]}), pa.table({"a": [4, 5, 6]})]
    got = take_parts(parts, part_starts(parts), np.array([5, 0, 2, 2, 3]))
    assert got.column("a").to_pylist() == [6, 1, 3, 3, 4]
