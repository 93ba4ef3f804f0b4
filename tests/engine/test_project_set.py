"""A constant series (a HOP window's) computed once and repeated equals the per-row path."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rw_cli.common.types import DataType
from rw_cli.engine.chunk import StreamChunk
from rw_cli.engine.project_set import ProjectSetExecutor
from rw_cli.sql.expr_compile import compile_series

BIGINT = DataType.from_sql("bigint")


def project_set(sql, types, stream_key):
    from sqlglot import parse_one

    lists, constant = compile_series(parse_one(sql, read="duckdb"))
    return ProjectSetExecutor(lists, types, stream_key, constant)


@pytest.mark.parametrize("sql", ["range(0, 5)", "generate_series(1, 3)", "range(5, 0, -2)", "range(0, 0)",
                                 "generate_series(-2, 2, 2)"])
def test_constant_series_matches_per_row(sql):
    chunk = StreamChunk(pa.table({"_0": pa.array([1, None, 3], pa.int64()), "_1": pa.array(["a", "b", None])}),
                        np.array([0, 1, 0], dtype=np.int8))
    types = [BIGINT, DataType.from_sql("varchar"), BIGINT, BIGINT]
    fast = project_set(sql, types, [0, 3])
    assert fast.constant
    slow = project_set(sql, types, [0, 3])
    slow.constant = False
    a, b = fast.on_chunk(chunk), slow.on_chunk(chunk)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.data.equals(y.data) and x.ops.tolist() == y.ops.tolist()


def test_series_over_columns_is_not_constant():
    assert not project_set("range(0, _0)", [BIGINT] * 3, [0]).constant
    assert not project_set("generate_series(1, CAST(random() * 3 AS BIGINT))", [BIGINT] * 3, [0]).constant
