"""Value encoding of rows (vectorized).

Per column, in schema order:
- fixed-width types: 1 flag byte (0 value, 1 NULL) + the little-endian value (zeros if NULL);
  bool is 1 byte;
- string/binary: flag byte + 4-byte LE length + bytes;
- numeric (rw_cli.common.numeric's struct): flag byte + its three fields' 40 bytes;
- anything else (struct, list, ...): flag byte + 4-byte LE length + an Arrow IPC stream of the
  single value (slow path, correct for every Arrow type).
A row's bytes are these pieces concatenated. Decoding walks the rows with numpy cursors.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc

from rw_cli.common import numeric
from rw_cli.common.byte_rows import matrix_to_binary
from rw_cli.common.vnode import (binary_parts, bool_values, fixed_values_u8, fixed_width,
                                 normalize_array, null_mask)
from rw_cli.errors import StorageError

_VARLEN = ("string", "large_string", "binary", "large_binary")


def value_kind(t: pa.DataType) -> str:
    """How the row codec encodes a column of type `t`: bool, null, varlen, fixed or other
    (an extension type as its storage type)."""
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t) \
            or pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "varlen"
    if fixed_width(t) is not None:
        return "fixed"
    if numeric.is_numeric_arrow(t):
        return "numeric"
    return "other"


NUMERIC_WIDTHS = (16, 16, 8)  # n_int, n_frac, n_scale


def numeric_value_bytes(arr: pa.StructArray) -> np.ndarray:
    """A numeric column's values as (n, 40) bytes: its fields' raw little-endian bytes."""
    return np.hstack([fixed_values_u8(numeric.child(arr, i), w) for i, w in enumerate(NUMERIC_WIDTHS)])


def _numeric_column(mat: np.ndarray, t: pa.DataType, nulls: np.ndarray) -> pa.Array:
    n, fields, at = len(mat), [], 0
    for i, w in enumerate(NUMERIC_WIDTHS):
        part = np.ascontiguousarray(mat[:, at:at + w])
        fields.append(pa.Array.from_buffers(t.field(i).type, n, [None, pa.py_buffer(part.tobytes())]))
        at += w
    return pa.StructArray.from_arrays(fields, fields=list(t), mask=pa.array(nulls) if nulls.any() else None)


def _ipc_values(arr: pa.Array) -> list[bytes | None]:
    out: list[bytes | None] = []
    schema = pa.schema([pa.field("v", arr.type)])
    for i in range(len(arr)):
        if not arr[i].is_valid:
            out.append(None)
            continue
        sink = pa.BufferOutputStream()
        with ipc.new_stream(sink, schema) as w:
            w.write_batch(pa.record_batch([arr.slice(i, 1)], schema=schema))
        out.append(sink.getvalue().to_pybytes())
    return out


def _varlen_piece(offs: np.ndarray, data: np.ndarray, nulls: np.ndarray) -> pa.Array:
    n = len(offs) - 1
    lengths = np.diff(offs)
    out_len = 5 + lengths
    out_offs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_len, out=out_offs[1:])
    out = np.zeros(int(out_offs[-1]), dtype=np.uint8)
    starts = out_offs[:-1]
    out[starts] = nulls.astype(np.uint8)
    lb = lengths.astype("<u4").view(np.uint8).reshape(n, 4)
    for j in range(4):
        out[starts + 1 + j] = lb[:, j]
    if len(data):
        owner = np.repeat(np.arange(n), lengths)
        dest = starts[owner] + 5 + (np.arange(len(data), dtype=np.int64) - offs[:-1][owner])
        out[dest] = data
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(out_offs), pa.py_buffer(out.tobytes())])


def encode_rows_array(batch: pa.RecordBatch) -> pa.Array:
    """The value bytes of each row, as a large_binary Arrow array."""
    n = batch.num_rows
    pieces: list = []
    for col in batch.columns:
        arr = normalize_array(col)
        nulls = null_mask(arr)
        k = value_kind(arr.type)
        flag = nulls.astype(np.uint8).reshape(n, 1)
        if k == "bool":
            mat = np.hstack([flag, bool_values(arr).reshape(n, 1)])
        elif k == "null":
            mat = np.ones((n, 1), dtype=np.uint8)
        elif k == "fixed":
            mat = np.hstack([flag, fixed_values_u8(arr, fixed_width(arr.type))])
        elif k == "numeric":
            mat = np.hstack([flag, numeric_value_bytes(arr)])
        elif k == "varlen":
            pieces.append(_varlen_piece(*binary_parts(arr), nulls))
            continue
        else:
            vals = pa.array(_ipc_values(arr), type=pa.large_binary())
            pieces.append(_varlen_piece(*binary_parts(vals), nulls))
            continue
        if pieces and isinstance(pieces[-1], np.ndarray):
            pieces[-1] = np.hstack([pieces[-1], mat])
        else:
            pieces.append(mat)
    arrays = [matrix_to_binary(p) if isinstance(p, np.ndarray) else p for p in pieces]
    if not arrays:
        return pa.array([b""] * n, type=pa.large_binary())
    if len(arrays) == 1:
        return arrays[0]
    return pc.binary_join_element_wise(*arrays, pa.scalar(b"", pa.large_binary()))


def encode_rows(batch: pa.RecordBatch) -> list[bytes]:
    return encode_rows_array(batch).to_pylist()


def _gather(data: np.ndarray, pos: np.ndarray, w: int) -> np.ndarray:
    """(n, w) matrix of data[pos[i] : pos[i] + w]."""
    if w == 0:
        return np.zeros((len(pos), 0), dtype=np.uint8)
    return data[pos[:, None] + np.arange(w, dtype=np.int64)[None, :]]


def _validity(nulls: np.ndarray) -> pa.Buffer | None:
    if not nulls.any():
        return None
    return pa.py_buffer(np.packbits(~nulls, bitorder="little").tobytes())


def decode_rows_arrays(values, schema: pa.Schema) -> pa.RecordBatch:
    """Decode value bytes (a list of bytes or a binary Arrow array without nulls)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        arr = normalize_array(values)
        if not (pa.types.is_large_binary(arr.type) or pa.types.is_binary(arr.type)):
            arr = arr.cast(pa.large_binary())
    else:
        arr = pa.array(values, type=pa.large_binary())
    n = len(arr)
    offs, data = binary_parts(arr)
    pos = offs[:-1].copy()
    ends = offs[1:]
    columns = []
    try:
        for field in schema:
            t = field.type
            k = value_kind(t)
            if n and (pos >= ends).any():
                raise StorageError("corrupted row value: too short")
            flags = data[pos] if n else np.zeros(0, dtype=np.uint8)
            nulls = flags != 0
            pos = pos + 1
            if k == "null":
                columns.append(pa.nulls(n, type=t))
            elif k == "bool":
                vals = data[pos] != 0 if n else np.zeros(0, dtype=bool)
                pos = pos + 1
                columns.append(pa.Array.from_buffers(
                    t, n, [_validity(nulls), pa.py_buffer(np.packbits(vals, bitorder="little").tobytes())]))
            elif k == "fixed":
                w = fixed_width(t)
                mat = _gather(data, pos, w)
                pos = pos + w
                columns.append(pa.Array.from_buffers(t, n, [_validity(nulls), pa.py_buffer(mat.tobytes())]))
            elif k == "numeric":
                mat = _gather(data, pos, sum(NUMERIC_WIDTHS))
                pos = pos + sum(NUMERIC_WIDTHS)
                columns.append(_numeric_column(mat, t, nulls))
            else:
                lb = _gather(data, pos, 4)
                lengths = np.ascontiguousarray(lb).view("<u4").reshape(n).astype(np.int64)
                pos = pos + 4
                vo = np.zeros(n + 1, dtype=np.int64)
                np.cumsum(lengths, out=vo[1:])
                total = int(vo[-1])
                if total:
                    owner = np.repeat(np.arange(n), lengths)
                    src = pos[owner] + (np.arange(total, dtype=np.int64) - vo[:-1][owner])
                    body = data[src]
                else:
                    body = np.zeros(0, dtype=np.uint8)
                pos = pos + lengths
                if k == "varlen":
                    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
                    if not large and total >= 2**31:
                        raise StorageError("decoded column too large")
                    base = pa.large_string() if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t) \
                        else pa.large_binary()
                    col = pa.Array.from_buffers(base, n, [_validity(nulls), pa.py_buffer(vo), pa.py_buffer(body.tobytes())])
                    if isinstance(t, pa.BaseExtensionType):
                        col = pa.ExtensionArray.from_storage(t, col.cast(t.storage_type))
                    elif col.type != t:
                        col = col.cast(t)
                    columns.append(col)
                else:
                    parts = []
                    bb = body.tobytes()
                    for i in range(n):
                        if nulls[i]:
                            parts.append(pa.nulls(1, type=t))
                        else:
                            with ipc.open_stream(pa.py_buffer(bb[vo[i]:vo[i + 1]])) as r:
                                parts.append(r.read_all().column(0).combine_chunks())
                    columns.append(pa.concat_arrays(parts) if parts else pa.array([], type=t))
    except IndexError:
        raise StorageError("corrupted row value: too short") from None
    if n and (pos != ends).any():
        raise StorageError("corrupted row value: length mismatch")
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def decode_rows(values: list[bytes], schema: pa.Schema) -> pa.RecordBatch:
    return decode_rows_arrays(values, schema)
