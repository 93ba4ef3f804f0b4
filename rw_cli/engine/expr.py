"""Compiled expressions: what the planner hands executors, and how a chunk evaluates them.

The SQL layer compiles each expression once, from its sqlglot tree (rw_cli.sql.expr_compile):
the DuckDB SQL over the positional input columns `_0.._n` (non-strict TRY wrapping already
applied), the columns it reads, its result type, and a numpy form where one applies. Nothing
here looks into the SQL text: DuckDB gets it as it is, over only the columns listed.

Fast forms of a condition's conjuncts (`Conjunct.fast`), which Arrow evaluates as DuckDB would:
    ("null", i, is_null)       `_i IS NULL` (is_null) or `_i IS NOT NULL`: the validity bitmap
    ("cmp", op, i, j)          `_i <op> _j`, op one of eq, ne, lt, le, gt, ge
    ("cmp_int", op, i, n)      `_i <op> n`, an integer column and an integer literal
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rw_cli.common.types import DataType
from rw_cli.engine import duck, eval_errors
from rw_cli.errors import ExecutionError
from rw_cli.common.lazy_import import lazy_import

pc = lazy_import("pyarrow.compute")  # imported on first use: see rw_cli.common.lazy_import


@dataclass(frozen=True)
class Expr:
    """A scalar expression. `column`: the input column it is, when it is just one; `form`:
    its rw_cli.engine.arrow_expr form, when numpy can evaluate it; `strict_sql`: the same
    expression raising its errors, where `sql` is the non-strict form that gives NULL."""
    sql: str
    columns: tuple[int, ...]
    type: DataType | None = None
    form: tuple | None = None
    column: int | None = None
    strict_sql: str | None = None


@dataclass(frozen=True)
class Conjunct:
    """One term of a condition's top-level AND: its DuckDB SQL, the columns it reads, and its
    fast Arrow form (None: DuckDB evaluates it)."""
    sql: str
    columns: tuple[int, ...]
    fast: tuple | None = None
    strict_sql: str | None = None


@dataclass(frozen=True)
class Condition:
    """A filter's or join's condition: true where every conjunct is true (NULL is false).
    `form`: the whole condition's arrow_expr form, when numpy can evaluate it."""
    conjuncts: tuple[Conjunct, ...]
    form: tuple | None = None

    @property
    def sql(self) -> str:
        if len(self.conjuncts) == 1:
            return self.conjuncts[0].sql
        return " AND ".join(f"({c.sql})" for c in self.conjuncts)

    @property
    def columns(self) -> tuple[int, ...]:
        return tuple(sorted({i for c in self.conjuncts for i in c.columns}))


def evaluate(exprs: Sequence[Expr], data: pa.Table) -> pa.Table:
    """The expressions' values over `data` (columns `_0.._n`) as columns `_0..`; DuckDB sees
    only the columns they read (a chunk may be wide)."""
    used = sorted({i for e in exprs for i in e.columns})
    if used and len(used) < data.num_columns and used[-1] < data.num_columns:
        data = data.select(used)
    if any(e.strict_sql is not None for e in exprs):
        # strictly first: a chunk without failures (nearly all) costs the same, and a failure
        # is reported with its own message before the non-strict form gives NULL for its rows
        try:
            return duck.eval_exprs(data, [e.sql if e.strict_sql is None else e.strict_sql for e in exprs])
        except ExecutionError as err:
            _report_failures([e for e in exprs if e.strict_sql is not None], data, err)
    return duck.eval_exprs(data, [e.sql for e in exprs])


def _report_failures(exprs: list[Expr], data: pa.Table, first: ExecutionError) -> None:
    """Each failing expression's own message (a chunk's strict evaluation stops at the first)."""
    if len(exprs) == 1:
        eval_errors.record(first.message)
        return
    for e in exprs:
        try:
            duck.eval_exprs(data, [e.strict_sql])
        except ExecutionError as err:
            eval_errors.record(err.message)


def condition_mask(condition: Condition, rows: pa.Table) -> np.ndarray:
    """Where `condition` is true, as a numpy bool array: the conjuncts with a fast form by
    Arrow, the rest by DuckDB on the rows those leave."""
    mask = np.ones(rows.num_rows, dtype=bool)
    rest = []
    for c in condition.conjuncts:
        m = _fast_mask(c.fast, rows) if c.fast is not None else None
        if m is None:
            rest.append(c)
        else:
            mask &= m
    if rest:
        idx = np.flatnonzero(mask)
        if len(idx):
            sub = rows.take(pa.array(idx)) if len(idx) < rows.num_rows else rows
            mask[idx] = _duck_mask(rest, sub)
    return mask


def _duck_mask(conjuncts: list[Conjunct], rows: pa.Table) -> np.ndarray:
    sql = " AND ".join(f"({c.sql})" for c in conjuncts)
    strict = None
    if any(c.strict_sql is not None for c in conjuncts):
        strict = " AND ".join(f"({c.sql if c.strict_sql is None else c.strict_sql})" for c in conjuncts)
        strict = f"COALESCE(({strict}), FALSE)"
    cols = tuple(sorted({i for c in conjuncts for i in c.columns}))
    out = evaluate([Expr(f"COALESCE(({sql}), FALSE)", cols, strict_sql=strict)], rows)
    return out.column(0).to_numpy(zero_copy_only=False).astype(bool)


_OPS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
        "ge": "greater_equal"}


def _fast_mask(fast: tuple, rows: pa.Table) -> np.ndarray | None:
    """The conjunct's mask by Arrow; None when this chunk's columns need DuckDB after all."""
    if fast[0] == "null":
        _, i, is_null = fast
        if i >= rows.num_columns:
            return None
        valid = rows.column(i).is_valid().to_numpy(zero_copy_only=False).astype(bool)
        return ~valid if is_null else valid
    if fast[2] >= rows.num_columns:
        return None
    a = rows.column(fast[2])
    if fast[0] == "cmp":
        if fast[3] >= rows.num_columns or not comparable(a.type, rows.column(fast[3]).type):
            return None
        b = rows.column(fast[3])
    else:
        if not pa.types.is_integer(a.type):
            return None
        b = pa.scalar(fast[3], pa.int64())
    try:
        r = getattr(pc, _OPS[fast[1]])(a, b)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return pc.fill_null(r, False).to_numpy(zero_copy_only=False).astype(bool)


def comparable(a: pa.DataType, b: pa.DataType) -> bool:
    """Types Arrow compares as DuckDB does (no floats: NaN; no mixed kinds)."""
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        return True
    if a != b:
        return False
    return pa.types.is_timestamp(a) or pa.types.is_date(a) or pa.types.is_string(a) or pa.types.is_large_string(a)
