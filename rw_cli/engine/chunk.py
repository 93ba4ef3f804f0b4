"""StreamChunk: an Arrow table of rows plus an op per row.

Inside the engine columns are positional (`_0`, `_1`, ...): names belong to the catalog,
and positional names let a join carry two columns both called `x`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rw_cli.common.op import DELETE, INSERT, UPDATE_DELETE, UPDATE_INSERT  # re-exported: a chunk's ops
from rw_cli.common import numeric
from rw_cli.common.lazy_import import lazy_import
from rw_cli.common.types import DataType

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import

_OP_TEXT = {"+": INSERT, "-": DELETE, "U-": UPDATE_DELETE, "U+": UPDATE_INSERT}
_OP_NAME = {v: k for k, v in _OP_TEXT.items()}


def col_name(i: int) -> str:
    return f"_{i}"


def positional(table: pa.Table | pa.RecordBatch) -> pa.Table:
    """The same columns renamed `_0.._n`."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    return table.rename_columns([col_name(i) for i in range(table.num_columns)])


def arrow_schema(types: list[DataType]) -> pa.Schema:
    return pa.schema([pa.field(col_name(i), t.arrow()) for i, t in enumerate(types)])


@dataclass
class StreamChunk:
    data: pa.Table  # positional columns
    ops: np.ndarray  # int8, one op per row
    # the producer read these rows from the table they change, each key once (a DELETE's
    # rows): a table's materialize need not look them up again (a chunk made from this one
    # does not inherit it)
    stored: bool = False

    def __len__(self) -> int:
        return self.data.num_rows

    @staticmethod
    def inserts(data: pa.Table) -> "StreamChunk":
        return StreamChunk(positional(data), np.zeros(data.num_rows, dtype=np.int8))

    @staticmethod
    def deletes(data: pa.Table) -> "StreamChunk":
        return StreamChunk(positional(data), np.full(data.num_rows, DELETE, dtype=np.int8))

    def is_insert(self) -> np.ndarray:
        """True for rows that add (Insert, UpdateInsert); False for rows that retract."""
        return (self.ops == INSERT) | (self.ops == UPDATE_INSERT)

    def signs(self) -> np.ndarray:
        return np.where(self.is_insert(), 1, -1).astype(np.int64)

    def filter(self, mask: np.ndarray) -> "StreamChunk":
        return StreamChunk(self.data.filter(pa.array(mask)), self.ops[mask])

    def compact_ops(self) -> "StreamChunk":
        """Turn update pairs whose halves were separated into plain deletes and inserts."""
        ops = np.where(self.ops == UPDATE_DELETE, DELETE, np.where(self.ops == UPDATE_INSERT, INSERT, self.ops))
        return StreamChunk(self.data, ops.astype(np.int8))

    # -- text format, as RisingWave's `StreamChunk::from_pretty` ---------------------------
    @staticmethod
    def from_pretty(text: str, types: list[DataType]) -> "StreamChunk":
        """Rows like `+ 1 10` / `- 2 .` (`.` is NULL); the first token is the op."""
        ops, rows = [], []
        for line in text.strip().splitlines():
            parts = line.split()
            if not parts:
                continue
            ops.append(_OP_TEXT[parts[0]])
            rows.append([None if v == "." else v for v in parts[1:]])
        cols = []
        for i, t in enumerate(types):
            raw = [r[i] for r in rows]
            cols.append(numeric.cast(pa.array(raw, pa.string()), t.arrow()))
        data = pa.Table.from_arrays(cols, names=[col_name(i) for i in range(len(types))]) if types else pa.table({})
        return StreamChunk(data, np.array(ops, dtype=np.int8))

    def to_pretty(self) -> str:
        rows = self.data.to_pylist()
        out = []
        for op, row in zip(self.ops, rows):
            vals = ["." if v is None else str(v) for v in row.values()]
            out.append(" ".join([_OP_NAME[int(op)]] + vals))
        return "\n".join(out)


def concat_chunks(chunks: list[StreamChunk], schema: pa.Schema) -> StreamChunk:
    if not chunks:
        return StreamChunk(schema.empty_table(), np.zeros(0, dtype=np.int8))
    data = pa.concat_tables([c.data if c.data.schema.equals(schema) else c.data.cast(schema) for c in chunks])
    return StreamChunk(data, np.concatenate([c.ops for c in chunks]))



def cast_to(arr, t: pa.DataType):
    """`arr.cast(t)`, without the call (tens of microseconds) when it already has that type;
    into numeric, the numbers as numerics (Arrow has no cast into its struct)."""
    if arr.type == t:
        return arr
    return numeric.cast(arr, t)


def values_equal(a, b) -> np.ndarray:
    """Per row: are the two values equal (NULL = NULL counts as equal, as IS NOT DISTINCT
    FROM says), as bools."""
    if numeric.is_numeric_arrow(a.type) and numeric.is_numeric_arrow(b.type):
        eq = numeric.equal(a, b)
    else:
        eq = pc.equal(a, b)
    same = pc.fill_null(eq, False).to_numpy(zero_copy_only=False)
    both_null = a.is_null().to_numpy(zero_copy_only=False) & b.is_null().to_numpy(zero_copy_only=False)
    return same | both_null


def as_batch(table: pa.Table) -> pa.RecordBatch:
    """One RecordBatch with all of a table's rows (state tables take batches)."""
    batches = table.combine_chunks().to_batches()
    if len(batches) == 1:
        return batches[0]
    return pa.RecordBatch.from_pylist([], schema=table.schema) if not batches else pa.concat_batches(batches)


def to_schema(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    """Positional columns renamed and cast to a state table's schema, as one batch."""
    cols = [cast_to(table.column(i), schema.field(i).type) for i in range(len(schema))]
    return as_batch(pa.Table.from_arrays(cols, schema=schema))
