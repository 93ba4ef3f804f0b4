"""StateTable's fast value encoding writes exactly the row codec's bytes."""
from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa

from rw_cli.store.row_codec import decode_rows_arrays, encode_rows_array
from rw_cli.store.state_table import encode_values


def _batch(n: int = 500) -> pa.RecordBatch:
    rng = np.random.default_rng(1)

    def maybe_null(vals, p=0.2):
        return [None if rng.random() < p else v for v in vals]
    return pa.record_batch({
        "i": pa.array(maybe_null(list(range(n))), pa.int64()),
        "s": pa.array(maybe_null(["x" * int(rng.integers(0, 20)) for _ in range(n)]), pa.string()),
        "b": pa.array(maybe_null([bool(i % 2) for i in range(n)]), pa.bool_()),
        "d": pa.array(maybe_null([decimal.Decimal(i) / 8 for i in range(n)]), pa.decimal128(38, 10)),
        "ts": pa.array(maybe_null(list(range(n))), pa.int64()).cast(pa.timestamp("us")),
        "bin": pa.array(maybe_null([b"ab" * int(rng.integers(0, 5)) for _ in range(n)]), pa.binary()),
        "f": pa.array(maybe_null([i / 3 for i in range(n)]), pa.float64()),
        "l": pa.array(maybe_null([[i, i + 1] for i in range(n)]), pa.list_(pa.int64())),
        "nul": pa.nulls(n),
        "s2": pa.array(maybe_null(["héllo"] * n), pa.large_string()),
    })


def test_encode_values_matches_the_row_codec():
    b = _batch()
    for part in [b, b.slice(7, 300), b.select(["s"]), b.select(["i", "ts"]), b.select(["s", "s2"]).slice(3),
                 b.slice(0, 0), b.select(["nul", "b"])]:
        fast = encode_values(part)
        assert encode_rows_array(part).equals(fast), part.schema
        if part.num_rows:
            assert decode_rows_arrays(fast, part.schema).equals(part)
