"""HashJoinExecutor: joins of every kind (inner, left/right/full outer, semi, anti), with
equi keys (partitioned by them) or without (one partition: a nested-loop join).

Each side is materialized-input state keyed by its stream key. On a barrier, for the join
keys touched in the epoch, the join of those keys' rows is computed before and after the
epoch and the difference is emitted (see partition_recompute.py) — which also handles what a
degree table handles in RisingWave: a left row losing its last match becomes NULL-padded.
"""
from __future__ import annotations

from rw_cli.common.types import DataType
from rw_cli.engine.partition_recompute import PartitionRecomputeExecutor

_SQL_KIND = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}


def join_sql(kind: str, nl: int, nr: int, left_keys: list[int], right_keys: list[int],
             null_safe: list[bool], condition: str | None) -> str:
    """DuckDB SQL over `in0` (columns `_0.._{nl-1}`) and `in1` (`_{nl}..`)."""
    conds = [f"in0._{a} {'IS NOT DISTINCT FROM' if ns else '='} in1._{nl + b}"
             for a, b, ns in zip(left_keys, right_keys, null_safe)]
    if condition:
        conds.append(f"({condition})")
    on = " AND ".join(conds) or "TRUE"
    if kind in ("semi", "anti"):
        neg = "NOT " if kind == "anti" else ""
        return f"SELECT in0.* FROM in0 WHERE {neg}EXISTS (SELECT 1 FROM in1 WHERE {on})"
    cols = ", ".join([f"in0._{i}" for i in range(nl)] + [f"in1._{nl + i}" for i in range(nr)])
    return f"SELECT {cols} FROM in0 {_SQL_KIND[kind]} in1 ON {on}"


class HashJoinExecutor(PartitionRecomputeExecutor):
    def __init__(self, kind: str, left_types: list[DataType], right_types: list[DataType],
                 left_keys: list[int], right_keys: list[int], null_safe: list[bool], condition: str | None,
                 left_sk: list[int], right_sk: list[int], state_tables: tuple, fresh: bool = True, vnodes=None):
        nl, nr = len(left_types), len(right_types)
        sql = join_sql(kind, nl, nr, left_keys, right_keys, null_safe, condition)
        if kind in ("semi", "anti"):
            types, sk = left_types, left_sk
        else:
            types, sk = left_types + right_types, left_sk + [nl + k for k in right_sk]
        identity = "StreamHashJoin" if left_keys else "StreamNestedLoopJoin"
        super().__init__(identity, [left_types, right_types], [left_sk, right_sk],
                         [list(left_keys), list(right_keys)], sql, types, sk, list(state_tables),
                         column_offsets=[0, nl], fresh=fresh, vnodes=vnodes)
