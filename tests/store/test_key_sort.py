"""argsort_sortable: the order of byte keys (as Python sorts bytes), stable, from integer sorts."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.store.keys import KeyForm, argsort_sortable, sortable_keys
from rw_cli.store.run import key_lengths


@pytest.mark.parametrize("seed", range(4))
def test_argsort_matches_bytes_order_and_is_stable(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 300))
        w = int(rng.integers(1, 30))
        mat = rng.integers(0, 3, (n, w)).astype(np.uint8)  # few values: many equal keys and ties
        mat[:, rng.random(w) < 0.5] = 7  # bytes equal in every key
        sk = mat.view(f"S{w}").reshape(n) if n else np.zeros(0, f"S{w}")
        want = sorted(range(n), key=lambda i: bytes(mat[i]))  # Python's sort is stable
        assert argsort_sortable(sk).tolist() == want


def test_argsort_of_variable_length_keys():
    rng = np.random.default_rng(9)
    keys = [bytes(rng.integers(0, 3, int(rng.integers(0, 12))).astype(np.uint8)) for _ in range(2000)]
    arr = pa.array(keys, pa.binary())
    sk, _ = sortable_keys(arr, KeyForm.of_lengths(key_lengths(arr)))
    order = argsort_sortable(sk)
    assert [keys[i] for i in order] == sorted(keys)
    assert order.tolist() == sorted(range(len(keys)), key=lambda i: keys[i])
