"""Rows of fixed-width fields as one byte matrix, written a field at a time.

Store keys and encoded values are mostly fixed-width fields laid side by side. Writing each
field through a strided, typed view of its columns of an (n, width) uint8 matrix copies one
value per row (numpy converts the byte order on the way), where stacking (n, 1) and (n, 8)
byte matrices copies byte by byte; and the matrix becomes an Arrow binary array without
another copy of its bytes.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

UINT_WIDTHS = (1, 2, 4, 8)


def field_view(mat: np.ndarray, at: int, dtype: str) -> np.ndarray:
    """Bytes at..at+itemsize of every row of a C-contiguous (n, width) uint8 matrix, as one
    (possibly unaligned) value of `dtype` per row; writes go to the matrix."""
    n, width = mat.shape
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.ndarray((n,), dtype=dtype, buffer=mat, offset=at, strides=(width,))


def uint_values(arr: pa.Array, width: int) -> np.ndarray:
    """The values of a fixed-width Arrow array of 1, 2, 4 or 8 bytes as unsigned integers
    (a view of its buffer; the slots of NULLs hold whatever the buffer has)."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=f"<u{width}")
    raw = np.frombuffer(arr.buffers()[1], dtype=f"<u{width}", count=arr.offset + n)
    return raw[arr.offset:]


def matrix_to_binary(mat: np.ndarray, large: bool = True) -> pa.Array:
    """The rows of a byte matrix as a large_binary (or, with large=False and under 2 GiB,
    binary) array, sharing the matrix's memory."""
    n, width = mat.shape
    large = large or mat.size >= 1 << 31
    offsets = np.arange(n + 1, dtype=np.int64 if large else np.int32) * width
    data = pa.py_buffer(np.ascontiguousarray(mat))
    return pa.Array.from_buffers(pa.large_binary() if large else pa.binary(), n, [None, pa.py_buffer(offsets), data])
