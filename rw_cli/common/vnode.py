"""Virtual nodes: consistent hashing of distribution keys, and stable vectorized hashing.

The vnode of a row is part of its persisted state-store key, so the hash must never change
across processes, platforms or library versions: it is implemented here with numpy only
(no Python `hash`, no pandas internals).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

VNODE_COUNT = 256

_U64 = np.uint64
_NULL_HASH = _U64(0x5BD1E9955BD1E995)
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_STR_P = _U64(0x100000001B3)  # FNV prime; odd, so powers never become zero mod 2**64


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer (wrapping uint64 arithmetic)."""
    x = x.astype(_U64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> _U64(30)
        x *= _U64(0xBF58476D1CE4E5B9)
        x ^= x >> _U64(27)
        x *= _U64(0x94D049BB133111EB)
        x ^= x >> _U64(31)
    return x


# ---------------------------------------------------------------------------------------
# Arrow helpers shared by the store (keys, row codec)
# ---------------------------------------------------------------------------------------

def normalize_array(arr) -> pa.Array:
    """A plain (non-chunked, non-dictionary, non-extension) Arrow array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        if isinstance(arr, pa.ChunkedArray):  # no chunks at all
            arr = pa.array([], type=arr.type)
    if not isinstance(arr, pa.Array):
        arr = pa.array(arr)
    if isinstance(arr.type, pa.BaseExtensionType):  # also the opaque types DuckDB exports
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr


def fixed_width(t: pa.DataType) -> int | None:
    """Byte width of a fixed-width (non-bool) Arrow type, or None."""
    if pa.types.is_boolean(t):
        return None
    if pa.types.is_interval(t) and t == pa.month_day_nano_interval():
        return 16
    if pa.types.is_fixed_size_binary(t) and not pa.types.is_decimal(t):
        return t.byte_width
    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
            or pa.types.is_temporal(t)):
        return t.bit_width // 8
    return None


def null_mask(arr: pa.Array) -> np.ndarray:
    """bool array, True where null."""
    n = len(arr)
    if arr.null_count == 0:
        return np.zeros(n, dtype=bool)
    if pa.types.is_null(arr.type):
        return np.ones(n, dtype=bool)
    return arr.is_null().to_numpy(zero_copy_only=False)


def fixed_values_u8(arr: pa.Array, width: int) -> np.ndarray:
    """(n, width) uint8 matrix of the raw little-endian values; null slots are zeroed."""
    n = len(arr)
    if n == 0:
        return np.zeros((0, width), dtype=np.uint8)
    buf = arr.buffers()[1]
    raw = np.frombuffer(buf, dtype=np.uint8, count=(arr.offset + n) * width, offset=0)
    mat = raw[arr.offset * width:].reshape(n, width)
    if arr.null_count:
        mat = mat.copy()
        mat[null_mask(arr)] = 0
    return mat


def bool_values(arr: pa.Array) -> np.ndarray:
    """uint8 0/1 per row (nulls -> 0)."""
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint8)
    return pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(np.uint8)


def binary_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64 of len n+1 rebased to 0, data uint8) of a string/binary array; nulls empty."""
    if arr.null_count:
        arr = pc.fill_null(arr, pa.scalar(b"" if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type) else "", arr.type))
    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        arr = arr.cast(pa.large_binary())
        t = arr.type
    n = len(arr)
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    odt = np.int64 if large else np.int32
    if n == 0:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=odt, count=arr.offset + n + 1)[arr.offset:].astype(np.int64)
    start, end = int(offs[0]), int(offs[-1])
    data = np.frombuffer(bufs[2], dtype=np.uint8, count=end)[start:end] if bufs[2] is not None and end > start \
        else np.zeros(0, dtype=np.uint8)
    return offs - start, data


# ---------------------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------------------

FIXED_HASH_MAX_LEN = 64  # values up to this long are hashed a byte column at a time


def hash_bytes_parts(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Stable 64-bit hash of each variable-length value given (offsets, data):
    mix(sum over bytes of (byte + 1) * P**position + length * GOLDEN). Values of a few
    distinct short lengths (store keys: one length per table) are hashed a byte column at a
    time, an order of magnitude faster than the general routine, with the same result."""
    n = len(offsets) - 1
    lengths = np.diff(offsets)
    if len(data) <= 8192:  # a few values: the general routine makes the fewest numpy calls
        return _hash_general(offsets, data)
    if n and int(lengths.max()) <= FIXED_HASH_MAX_LEN:
        if int(lengths.min()) == int(lengths[0]) == int(lengths.max()):
            L = int(lengths[0])
            return _hash_fixed(data[:n * L].reshape(n, L))
        cuts = np.flatnonzero(lengths[1:] != lengths[:-1]) + 1
        if len(cuts) < 64:  # a few runs of one length (sorted keys of a few tables): their bytes are a matrix
            out = np.empty(n, dtype=_U64)
            for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), n]):
                L, at = int(lengths[a]), int(offsets[a])
                out[a:b] = _hash_fixed(data[at:at + (b - a) * L].reshape(b - a, L))
            return out
        present = np.flatnonzero(np.bincount(lengths))
        if len(present) <= 8:
            out = np.empty(n, dtype=_U64)
            starts = offsets[:-1]
            for L in present.tolist():
                idx = np.flatnonzero(lengths == L)
                out[idx] = _hash_fixed(data[starts[idx][:, None] + np.arange(L)] if L else
                                       np.zeros((len(idx), 0), dtype=np.uint8))
            return out
    return _hash_general(offsets, data)


def _hash_fixed(mat: np.ndarray) -> np.ndarray:
    """`hash_bytes_parts` of values that all have mat.shape[1] bytes (one per row of mat)."""
    n, L = mat.shape
    with np.errstate(over="ignore"):
        if n * L <= 1 << 16:  # few values: one pass over the matrix (fewer numpy calls)
            pows = np.full(max(L, 1), _STR_P, dtype=_U64)
            pows[0] = 1
            m = mat.astype(_U64)
            m += _U64(1)
            m *= np.cumprod(pows, dtype=_U64)[:L]
            h = m.sum(axis=1, dtype=_U64)
        else:  # many: a byte column at a time (no n x L temporary of 64-bit words)
            h = np.zeros(n, dtype=_U64)
            p = _U64(1)
            for j in range(L):
                h += (mat[:, j].astype(_U64) + _U64(1)) * p
                p = p * _STR_P
        h += _U64(L) * _GOLDEN
    return _mix64(h)


def _hash_general(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    n = len(offsets) - 1
    lengths = np.diff(offsets).astype(_U64)
    if len(data) == 0:
        return _mix64(lengths * _GOLDEN)
    starts = offsets[:-1]
    owner = np.repeat(np.arange(n), np.diff(offsets))
    pos = np.arange(len(data), dtype=np.int64) - starts[owner]
    maxlen = int(pos.max()) + 1
    with np.errstate(over="ignore"):
        pows = np.empty(maxlen, dtype=_U64)
        pows[0] = 1
        if maxlen > 1:
            pows[1:] = _STR_P
            pows = np.cumprod(pows, dtype=_U64)
        contrib = (data.astype(_U64) + _U64(1)) * pows[pos]
        cs = np.concatenate([np.zeros(1, dtype=_U64), np.cumsum(contrib, dtype=_U64)])
        h = cs[offsets[1:]] - cs[offsets[:-1]]
        h = h + lengths * _GOLDEN
    return _mix64(h)


_DAY_NS = 86_400_000_000_000


def hash_interval(arr: pa.Array) -> np.ndarray:
    """Intervals equal in PostgreSQL ('24 hours' = '1 day' = '1 mon' / 30) hash equally:
    hash the normalized (whole days, remaining nanoseconds), a month counting 30 days."""
    raw = fixed_values_u8(arr, 16)
    months = raw[:, 0:4].copy().view("<i4").reshape(-1).astype(np.int64)
    days = raw[:, 4:8].copy().view("<i4").reshape(-1).astype(np.int64)
    nanos = raw[:, 8:16].copy().view("<i8").reshape(-1)
    total_days = months * 30 + days + nanos // _DAY_NS
    rest = nanos % _DAY_NS
    with np.errstate(over="ignore"):
        return _mix64(_mix64(total_days.view(_U64)) * _GOLDEN + rest.view(_U64))


def hash_array(arr) -> np.ndarray:
    """Stable 64-bit hash per row of one Arrow column. Equal values of integer types hash
    equally whatever their width; floats hash by their float64 value (-0.0 == 0.0, one NaN)."""
    arr = normalize_array(arr)
    t = arr.type
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=_U64)
    if pa.types.is_null(t):
        return np.full(n, _NULL_HASH, dtype=_U64)
    if pa.types.is_boolean(t):
        h = _mix64(bool_values(arr).astype(_U64) + _U64(1))
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        h = hash_bytes_parts(*binary_parts(arr))
    elif pa.types.is_floating(t):
        w = t.bit_width // 8
        v = fixed_values_u8(arr, w).view({2: np.float16, 4: np.float32, 8: np.float64}[w]).reshape(n)
        v = v.astype(np.float64) + 0.0  # -0.0 -> 0.0
        v[np.isnan(v)] = np.nan
        h = _mix64(v.view(_U64))
    elif t == pa.month_day_nano_interval():
        h = hash_interval(arr)
    elif pa.types.is_integer(t) or pa.types.is_temporal(t) and fixed_width(t) in (1, 2, 4, 8):
        w = fixed_width(t)
        signed = not pa.types.is_unsigned_integer(t)
        dt = np.dtype(f"<{'i' if signed else 'u'}{w}")
        v = fixed_values_u8(arr, w).view(dt).reshape(n).astype(np.int64 if signed else _U64)
        h = _mix64(v.view(_U64))
    else:
        w = fixed_width(t)
        if w is None or w % 8:
            # nested and other types: hash a canonical text form (slow path)
            strs = pa.array([None if v is None else repr(v) for v in arr.to_pylist()], type=pa.string())
            h = hash_bytes_parts(*binary_parts(strs))
        else:
            words = fixed_values_u8(arr, w).view("<u8").reshape(n, w // 8)
            h = np.full(n, _U64(w), dtype=_U64)
            with np.errstate(over="ignore"):
                for j in range(words.shape[1]):
                    h = _mix64(h * _GOLDEN + words[:, j])
    if arr.null_count:
        h = h.copy()
        h[null_mask(arr)] = _NULL_HASH
    return h


def unique_hashes(h: np.ndarray) -> np.ndarray:
    """The distinct values of a hash array, sorted: np.sort and a neighbour comparison
    (numpy's own `unique` is an order of magnitude slower on 64-bit hashes)."""
    if len(h) < 2:
        return np.array(h, dtype=_U64)
    s = np.sort(h)
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def hash_columns(columns: list, num_rows: int | None = None) -> np.ndarray:
    """Stable 64-bit hash of each row of several columns."""
    if not columns:
        return np.zeros(num_rows or 0, dtype=_U64)
    h = None
    with np.errstate(over="ignore"):
        for col in columns:
            ch = hash_array(col)
            h = ch if h is None else _mix64(h * _GOLDEN + ch)
    return h


def compute_vnodes(columns: list, num_rows: int | None = None) -> np.ndarray:
    """The vnode (0..VNODE_COUNT-1, uint16) of each row of the distribution-key columns.
    With no columns every row maps to vnode 0 (`num_rows` gives the row count then)."""
    if not columns:
        return np.zeros(num_rows or 0, dtype=np.uint16)
    h = hash_columns(columns)
    return (h % _U64(VNODE_COUNT)).astype(np.uint16)
