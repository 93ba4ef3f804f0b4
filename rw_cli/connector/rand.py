"""Counter-based randomness: every random value is a pure function of (seed, row index, field).

Generators draw all of a chunk's values at once from `uniform64(seed, index, field)`, so a
row's values do not depend on how the stream is cut into chunks or splits — reading events
[a, b) always yields the same rows, which is what makes recovery from an offset exact.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def _mix64_inplace(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer of z - GOLDEN, in place: one scratch array, no temporaries
    per step (the generators' cost is these passes over memory)."""
    t = np.empty_like(z)
    with np.errstate(over="ignore"):
        np.right_shift(z, _S30, out=t)
        z ^= t
        z *= _M1
        np.right_shift(z, _S27, out=t)
        z ^= t
        z *= _M2
        np.right_shift(z, _S31, out=t)
        z ^= t
    return z


def uniform64(seed: int, index: np.ndarray, field: int) -> np.ndarray:
    key = np.uint64((seed * 0x1000193 + field * 0x9E37 + 1) & 0xFFFFFFFFFFFFFFFF)
    z = index.astype(np.uint64)  # a copy: mixed in place below
    with np.errstate(over="ignore"):
        z ^= key
        z += _GOLDEN
        _mix64_inplace(z)
        z += key
        z += _GOLDEN
        return _mix64_inplace(z)


def rand_int(seed: int, index: np.ndarray, field: int, n) -> np.ndarray:
    """Uniform integers in [0, n) (n a scalar or an array of positive bounds). One bound for
    all (the usual case, also as an array): r - (r // n) * n, since numpy divides by a
    constant with a multiplication (libdivide) but computes `%` by dividing: 3.7x faster."""
    r = uniform64(seed, index, field) >> np.uint64(11)
    bound = np.asarray(n, dtype=np.uint64)
    if bound.ndim and len(bound) and bound.min() == bound.max():
        bound = bound[0]
    if np.ndim(bound):
        r %= bound
    else:
        q = r // bound
        q *= bound
        r -= q
    return r.view(np.int64)  # (values below 2**53: the same bits)


def rand_float(seed: int, index: np.ndarray, field: int) -> np.ndarray:
    """Uniform doubles in [0, 1)."""
    return (uniform64(seed, index, field) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


_POOL_SIZE = 1 << 20
_POOL: np.ndarray | None = None
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def _pool() -> np.ndarray:
    global _POOL
    if _POOL is None:
        idx = np.arange(_POOL_SIZE, dtype=np.uint64)
        _POOL = _LETTERS[rand_int(7, idx, 0, 26)]
    return _POOL


def rand_strings(seed: int, index: np.ndarray, field: int, lengths: np.ndarray) -> pa.Array:
    """Random lowercase strings of the given lengths, cut from a fixed random pool."""
    pool = _pool()
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    start = rand_int(seed, index, field, _POOL_SIZE - int(lengths.max(initial=0)) - 1)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    pos = np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1] - start, lengths)
    data = pool[pos]
    if total >= 2 ** 31:
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data)).cast(pa.string())
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))


def pick(values: list[str], idx: np.ndarray) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(idx))
