"""Key encoding: memcomparable pk bytes, user keys and full keys.

user key = table_id (4 bytes BE) | vnode (2 bytes BE) | memcomparable(pk columns)
full key = user key | (2**64 - 1 - epoch) (8 bytes BE)   -- newer epochs sort first

memcomparable: per column a marker byte (0x01 value, 0x02 NULL: NULL sorts last for ASC)
followed by the value bytes; DESC flips every byte of the column (NULL first, as in PG).
"""
from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa

from rw_cli.common import numeric
from rw_cli.common.byte_rows import UINT_WIDTHS, field_view, matrix_to_binary, uint_values
from rw_cli.common.vnode import (binary_parts, bool_values, fixed_values_u8, fixed_width,
                                 normalize_array, null_mask)
from rw_cli.errors import StorageError
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

MAX_EPOCH = 2**64 - 1
EPOCH_LEN = 8
TABLE_PREFIX_LEN = 4
VNODE_LEN = 2

NOT_NULL = 0x01
NULL = 0x02


# ---------------------------------------------------------------------------------------
# per-type encoders -> (n, w) uint8 matrices (fixed) or arrow binary arrays (variable)
# ---------------------------------------------------------------------------------------

def _be_int(mat_le: np.ndarray, signed: bool) -> np.ndarray:
    out = mat_le[:, ::-1].copy()
    if signed and out.shape[1]:
        out[:, 0] ^= 0x80
    return out


def _encode_float(arr: pa.Array, w: int) -> np.ndarray:
    n = len(arr)
    fdt = {4: np.float32, 8: np.float64}[w]
    udt = {4: np.uint32, 8: np.uint64}[w]
    v = fixed_values_u8(arr, w).view(fdt).reshape(n) + fdt(0.0)  # -0.0 -> 0.0
    v[np.isnan(v)] = np.nan  # one canonical (positive) NaN: sorts above +inf
    bits = v.view(udt).copy()
    sign = udt(1) << udt(w * 8 - 1)
    neg = (bits & sign) != 0
    bits[neg] = ~bits[neg]
    bits[~neg] |= sign
    return bits.astype(f">u{w}").view(np.uint8).reshape(n, w)


def _encode_fixed(arr: pa.Array) -> np.ndarray | None:
    """(n, w) matrix for fixed-width types, None if the type is variable-width."""
    t = arr.type
    n = len(arr)
    if pa.types.is_boolean(t):
        return bool_values(arr).reshape(n, 1)
    if pa.types.is_null(t):
        return np.zeros((n, 0), dtype=np.uint8)
    if t == pa.month_day_nano_interval():
        m = fixed_values_u8(arr, 16)
        return np.hstack([_be_int(m[:, 0:4], True), _be_int(m[:, 4:8], True), _be_int(m[:, 8:16], True)])
    if pa.types.is_floating(t):
        if t.bit_width == 16:
            arr = arr.cast(pa.float32())
        return _encode_float(arr, arr.type.bit_width // 8)
    if pa.types.is_decimal(t):
        return _be_int(fixed_values_u8(arr, t.bit_width // 8), True)
    if numeric.is_numeric_arrow(t):  # by value: floor and fraction, not the scale (1.5 = 1.50)
        return np.hstack([_be_int(fixed_values_u8(numeric.child(arr, f), 16), True) for f in ("n_int", "n_frac")])
    if pa.types.is_fixed_size_binary(t):
        return fixed_values_u8(arr, t.byte_width)
    if pa.types.is_fixed_size_list(t) and pa.types.is_floating(t.value_type) and t.value_type.bit_width in (32, 64):
        # vector(n): its floats in order, each order-preserving (a NULL vector's slots are
        # whatever they hold: the NULL marker before them decides)
        k, w = t.list_size, t.value_type.bit_width // 8
        values = arr.values.slice(arr.offset * k, len(arr) * k).fill_null(0.0)
        return _encode_float(values, w).reshape(len(arr), k * w)
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        w = fixed_width(t)
        if w is None:
            return None
        return _be_int(fixed_values_u8(arr, w), not pa.types.is_unsigned_integer(t))
    return None


def _is_varlen(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_string_view(t) or pa.types.is_binary_view(t))


def _fixed_pk_piece(arr: pa.Array, desc: bool) -> np.ndarray:
    """A fixed-width pk column's memcomparable bytes: the NULL marker, then the value."""
    mat = _encode_fixed(arr)
    if mat is None:
        raise StorageError(f"type {arr.type} cannot be used in a key")
    out = np.empty((len(arr), 1 + mat.shape[1]), dtype=np.uint8)
    out[:, 0] = np.where(null_mask(arr), NULL, NOT_NULL)
    out[:, 1:] = mat
    if desc:
        out ^= 0xFF
    return out


def _encode_varlen(arr: pa.Array, nulls: np.ndarray, descending: bool) -> pa.Array:
    """marker | escaped bytes (0x00 -> 0x00 0xFF) | 0x00 0x00, as a large_binary array."""
    offs, data = binary_parts(arr)
    n = len(arr)
    lengths = np.diff(offs)
    zero = data == 0
    # escaped length: each 0x00 becomes two bytes, plus marker and terminator
    zeros_per_row = np.zeros(n, dtype=np.int64)
    if zero.any():
        owner = np.repeat(np.arange(n), lengths)
        zeros_per_row = np.bincount(owner[zero], minlength=n)
    body_len = np.where(nulls, 0, lengths + zeros_per_row + 2)
    out_len = 1 + body_len
    out_offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_len, out=out_offs[1:])
    out = np.zeros(int(out_offs[-1]), dtype=np.uint8)
    out[out_offs[:-1]] = np.where(nulls, NULL, NOT_NULL).astype(np.uint8)
    if len(data):
        owner = np.repeat(np.arange(n), lengths)
        # position of each source byte in output: row start + 1 + index in row + zeros before it in row
        idx_in_row = np.arange(len(data), dtype=np.int64) - offs[:-1][owner]
        zc = np.cumsum(zero, dtype=np.int64) - zero  # zeros strictly before, global
        zeros_before_row = (np.concatenate([[0], np.cumsum(zero, dtype=np.int64)]))[offs[:-1]]
        zc_in_row = zc - zeros_before_row[owner]
        dest = out_offs[:-1][owner] + 1 + idx_in_row + zc_in_row
        out[dest] = data
        out[dest[zero] + 1] = 0xFF
    # terminator bytes are already zero
    if descending:
        out ^= 0xFF
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(out_offs), pa.py_buffer(out.tobytes())])


def _is_nested(t: pa.DataType) -> bool:
    if numeric.is_numeric_arrow(t):
        return False
    return (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t) or pa.types.is_map(t)
            or (pa.types.is_fixed_size_list(t) and _encode_fixed(pa.array([], t)) is None))


def _with_marker(arr: pa.Array) -> pa.Array:
    """Any column's ascending memcomparable bytes (its NULL marker first), as large_binary."""
    arr = normalize_array(arr)
    if _is_nested(arr.type):
        return _encode_nested(arr)
    if _is_varlen(arr.type):
        return _encode_varlen(arr, null_mask(arr), False)
    return matrix_to_binary(_fixed_pk_piece(arr, False))


def _bytes(b: bytes) -> pa.Scalar:
    return pa.scalar(b, pa.large_binary())  # (not at import: pa.scalar imports pandas)


def _encode_nested(arr: pa.Array) -> pa.Array:
    """An array's or struct's memcomparable bytes, ordered as PostgreSQL orders them: a list
    is its elements in turn, each after a 0x01 byte, then 0x00 (a prefix sorts first; a NULL
    element, marked 0x02, after any value); a struct is its fields in turn. Each element and
    field carries its own NULL marker and delimits itself, so the bytes compare as the
    values do. A NULL array or struct is the NULL marker alone."""
    t = arr.type
    if pa.types.is_struct(t):
        fields = [_with_marker(numeric.child(arr, i)) for i in range(t.num_fields)]
        body = pc.binary_join_element_wise(*fields, _bytes(b"")) if fields else pa.array([b""] * len(arr), pa.large_binary())
    else:
        if pa.types.is_fixed_size_list(t):
            k = t.list_size
            values = arr.values.slice(arr.offset * k, len(arr) * k)
            offsets = pa.array(np.arange(len(arr) + 1, dtype=np.int64) * k)
        else:
            values, offsets = arr.values, arr.offsets.cast(pa.int64())
        pieces = pc.binary_join_element_wise(_bytes(b"\x01"), _with_marker(values), _bytes(b""))
        lists = pa.LargeListArray.from_arrays(offsets, pieces)
        body = pc.binary_join_element_wise(pc.binary_join(lists, _bytes(b"")), _bytes(b"\x00"), _bytes(b""))
    marked = pc.binary_join_element_wise(_bytes(bytes([NOT_NULL])), body, _bytes(b""))
    if not arr.null_count:
        return marked
    return pc.if_else(null_mask(arr), _bytes(bytes([NULL])), marked)


def _flipped(arr: pa.Array) -> pa.Array:
    """Every byte of a binary array inverted (a DESC key column)."""
    offs, data = binary_parts(arr)
    return pa.Array.from_buffers(pa.large_binary(), len(arr), [None, pa.py_buffer(offs.astype(np.int64)),
                                                               pa.py_buffer((data ^ 0xFF).tobytes())])


def encode_pk_array(columns: list, descending: list[bool] | None = None,
                    num_rows: int | None = None) -> pa.Array:
    """Memcomparable encoding of each row as a large_binary Arrow array."""
    if not columns:
        n = num_rows or 0
        return pa.array([b""] * n, type=pa.large_binary())
    cols = [normalize_array(c) for c in columns]
    n = len(cols[0])
    if descending is None:
        descending = [False] * len(cols)
    pieces: list[np.ndarray | pa.Array] = []
    for arr, desc in zip(cols, descending):
        if _is_varlen(arr.type):
            pieces.append(_encode_varlen(arr, null_mask(arr), desc))
            continue
        if _is_nested(arr.type):
            nested = _encode_nested(arr)
            pieces.append(_flipped(nested) if desc else nested)
            continue
        pieces.append(_fixed_pk_piece(arr, desc))
    # merge adjacent fixed-width matrices, then concatenate row-wise
    merged: list[np.ndarray | pa.Array] = []
    for p in pieces:
        if isinstance(p, np.ndarray) and merged and isinstance(merged[-1], np.ndarray):
            merged[-1] = np.hstack([merged[-1], p])
        else:
            merged.append(p)
    arrays = [matrix_to_binary(p) if isinstance(p, np.ndarray) else p for p in merged]
    if len(arrays) == 1:
        return arrays[0]
    return pc.binary_join_element_wise(*arrays, pa.scalar(b"", pa.large_binary()))


def _split_fixed(mat: np.ndarray) -> list[bytes]:
    n, w = mat.shape
    buf = np.ascontiguousarray(mat).tobytes()
    return [buf[i:i + w] for i in range(0, n * w, w)] if w else [b""] * n


def encode_pk(columns: list, descending: list[bool] | None = None,
              num_rows: int | None = None) -> list[bytes]:
    """Order-preserving bytes of each row's pk tuple."""
    return encode_pk_array(columns, descending, num_rows).to_pylist()


def table_key_prefix(table_id: int) -> bytes:
    return struct.pack(">I", table_id)


def vnode_prefix(table_id: int, vnode: int) -> bytes:
    return struct.pack(">IH", table_id, vnode)


def make_fixed_keys_array(table_id: int, vnodes: np.ndarray, columns: list,
                          descending: list[bool] | None = None) -> pa.Array | None:
    """`make_keys_array(table_id, vnodes, encode_pk_array(columns, descending))` written as
    one byte matrix when every pk column has a fixed width (None otherwise): no per-column
    binary arrays to join. Binary, as the store keeps keys (no cast later)."""
    cols = [normalize_array(c) for c in columns]
    if not cols or any(_is_varlen(c.type) or _encode_fixed(c[:0]) is None for c in cols):
        return None
    n = len(cols[0])
    widths = [1 + _encode_fixed(c[:0]).shape[1] for c in cols]
    mat = np.empty((n, TABLE_PREFIX_LEN + VNODE_LEN + sum(widths)), dtype=np.uint8)
    field_view(mat, 0, ">u4")[:] = table_id
    field_view(mat, TABLE_PREFIX_LEN, ">u2")[:] = vnodes
    at = TABLE_PREFIX_LEN + VNODE_LEN
    for c, desc, w in zip(cols, descending or [False] * len(cols), widths):
        if w - 1 in UINT_WIDTHS and (pa.types.is_integer(c.type) or pa.types.is_temporal(c.type)):
            _write_int_pk(mat, at, c, desc, w - 1)
        else:
            mat[:, at:at + w] = _fixed_pk_piece(c, desc)
        at += w
    return matrix_to_binary(mat, large=False)


def _write_int_pk(mat: np.ndarray, at: int, arr: pa.Array, desc: bool, w: int) -> None:
    """`_fixed_pk_piece` of an integer or temporal column, written in place: the marker, then
    the big-endian value (sign bit flipped when signed; every bit flipped when DESC)."""
    vals = uint_values(arr, w)
    flip = 0
    if not pa.types.is_unsigned_integer(arr.type):
        flip = 1 << (8 * w - 1)
    if desc:
        flip ^= (1 << (8 * w)) - 1
    nulls = null_mask(arr) if arr.null_count else None
    if nulls is not None:
        vals = np.where(nulls, 0, vals).astype(vals.dtype)
    if flip:
        vals = vals ^ vals.dtype.type(flip)
    field_view(mat, at + 1, f">u{w}")[:] = vals
    marker = mat[:, at]
    if nulls is None:
        marker[:] = NOT_NULL ^ (0xFF if desc else 0)
    else:
        marker[:] = np.where(nulls, NULL, NOT_NULL).astype(np.uint8) ^ np.uint8(0xFF if desc else 0)


def make_keys_array(table_id: int, vnodes: np.ndarray, pk: pa.Array) -> pa.Array:
    n = len(pk)
    mat = np.empty((n, 6), dtype=np.uint8)
    mat[:, :4] = np.frombuffer(table_key_prefix(table_id), dtype=np.uint8)
    mat[:, 4:] = np.asarray(vnodes, dtype=">u2").view(np.uint8).reshape(n, 2)
    prefix = matrix_to_binary(mat)
    if pk.type != pa.large_binary():
        pk = pk.cast(pa.large_binary())
    return pc.binary_join_element_wise(prefix, pk, pa.scalar(b"", pa.large_binary()))


def make_keys(table_id: int, vnodes: np.ndarray, pk_bytes: list[bytes]) -> list[bytes]:
    """table_id (4B BE) | vnode (2B BE) | pk for each row."""
    tv = np.asarray(vnodes, dtype=np.uint16)
    head = struct.pack(">I", table_id)
    vb = [bytes(x) for x in _split_fixed(tv.astype(">u2").view(np.uint8).reshape(len(tv), 2))]
    return [head + v + k for v, k in zip(vb, pk_bytes)]


def encode_epoch(epoch: int) -> bytes:
    return struct.pack(">Q", MAX_EPOCH - epoch)


def decode_epoch(b: bytes) -> int:
    return MAX_EPOCH - struct.unpack(">Q", b)[0]


def full_key(user_key: bytes, epoch: int) -> bytes:
    return user_key + encode_epoch(epoch)


def split_full_key(fk: bytes) -> tuple[bytes, int]:
    return fk[:-EPOCH_LEN], decode_epoch(fk[-EPOCH_LEN:])


def next_key(prefix: bytes) -> bytes | None:
    """Smallest key greater than every key starting with `prefix` (None: no upper bound)."""
    b = bytearray(prefix)
    while b and b[-1] == 0xFF:
        b.pop()
    if not b:
        return None
    b[-1] += 1
    return bytes(b)


# ---------------------------------------------------------------------------------------
# sortable fixed-width forms of user keys (numpy 'S' arrays) for searchsorted and merges
# ---------------------------------------------------------------------------------------

class KeyForm:
    """How a set of user keys is turned into a numpy bytes array that sorts like the keys.

    fixed: every key has exactly `width` bytes; the form is the key bytes themselves.
    variable: keys of at most `width` bytes, zero-padded to `width`, then the length as
    2 big-endian bytes (the padding alone would make b"a" equal b"a\\x00")."""

    __slots__ = ("fixed", "width")

    def __init__(self, fixed: bool, width: int):
        self.fixed = bool(fixed) and width > 0
        self.width = int(width)

    @property
    def itemsize(self) -> int:
        return self.width if self.fixed else self.width + 2

    def key(self) -> tuple[bool, int]:
        return (self.fixed, self.width)

    def __eq__(self, other) -> bool:
        return isinstance(other, KeyForm) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"KeyForm({'fixed' if self.fixed else 'variable'}, {self.width})"

    @staticmethod
    def common(forms: list["KeyForm"]) -> "KeyForm":
        """A form every key of every given form fits in."""
        if forms and all(f.fixed for f in forms) and len({f.width for f in forms}) == 1:
            return forms[0]
        return KeyForm(False, max((f.width for f in forms), default=0))

    @staticmethod
    def of_lengths(lens: np.ndarray) -> "KeyForm":
        if len(lens) == 0:
            return KeyForm(False, 0)
        mx = int(lens.max())
        if mx > 0xFFFF:
            raise StorageError(f"key of {mx} bytes is too long (at most 65535)")
        return KeyForm(int(lens.min()) == mx, mx)


def sortable_from_parts(offs: np.ndarray, data: np.ndarray, form: KeyForm) -> tuple[np.ndarray, np.ndarray | None]:
    """(S array in `form`, mask of keys that fit the form or None when all do)."""
    n = len(offs) - 1
    lens = np.diff(offs)
    w = form.width
    if form.fixed:
        ok = lens == w
        if ok.all():
            return np.ascontiguousarray(data[:n * w]).view(f"S{w}"), None
        mat = np.zeros((n, w), dtype=np.uint8)
        rows = np.flatnonzero(ok)
        if len(rows):
            idx = offs[:-1][rows][:, None] + np.arange(w, dtype=np.int64)[None, :]
            mat[rows] = data[idx]
        return mat.view(f"S{w}").reshape(n), ok
    ok = lens <= w
    mat = np.zeros((n, w + 2), dtype=np.uint8)
    if n:
        if len(lens) and lens.min() == lens.max() and ok.all():
            L = int(lens[0])
            if L:
                mat[:, :L] = data[:n * L].reshape(n, L)
        else:
            starts = offs[:-1]
            for j in range(w):
                has = lens > j
                if not has.any():
                    break
                rows = np.flatnonzero(has & ok)
                mat[rows, j] = data[starts[rows] + j]
        ln = np.where(ok, lens, 0)
        mat[:, w] = (ln >> 8).astype(np.uint8)
        mat[:, w + 1] = (ln & 0xFF).astype(np.uint8)
    return mat.view(f"S{w + 2}").reshape(n), (None if ok.all() else ok)


def sortable_keys(keys: pa.Array, form: KeyForm) -> tuple[np.ndarray, np.ndarray | None]:
    return sortable_from_parts(*binary_parts(keys), form)


def sortable_one(key: bytes, form: KeyForm) -> bytes | None:
    """The form of one key (None if it does not fit)."""
    if form.fixed:
        return key if len(key) == form.width else None
    if len(key) > form.width:
        return None
    return key.ljust(form.width, b"\0") + len(key).to_bytes(2, "big")


def argsort_sortable(sk: np.ndarray) -> np.ndarray:
    """Stable argsort of a sortable key array (fixed-width bytes, an S array). numpy sorts
    byte strings by memcmp, several times slower than integers; so the key bytes that differ
    between keys (bytes equal in every key do not change the order) are read as big-endian
    64-bit words, the first word is sorted (quicksort: the fastest) and only runs of equal
    first words are sorted by the rest and, last, by position (which makes it stable)."""
    n = len(sk)
    w = sk.dtype.itemsize
    if n < 2 or w == 0:
        return np.arange(n)
    mat = np.ascontiguousarray(sk).view(np.uint8).reshape(n, w)
    varying = np.flatnonzero(np.bitwise_or.reduce(mat ^ mat[0], axis=0))
    if len(varying) == 0:
        return np.arange(n)
    pad = (-len(varying)) % 8
    cols = np.zeros((n, len(varying) + pad), dtype=np.uint8)
    cols[:, :len(varying)] = mat[:, varying]
    words = cols.view(">u8").astype(np.uint64)
    order = np.argsort(words[:, 0])
    first = words[order, 0]
    tie = first[1:] == first[:-1]
    if not tie.any():
        return order
    in_run = np.zeros(n, dtype=bool)
    in_run[1:] = tie
    in_run[:-1] |= tie
    pos = np.flatnonzero(in_run)
    run_id = (np.cumsum(np.concatenate([[True], ~tie])) - 1)[pos]
    sub = order[pos]
    keys = [sub] + [words[sub, j] for j in range(words.shape[1] - 1, 0, -1)] + [run_id]
    order[pos] = sub[np.lexsort(keys)]
    return order
