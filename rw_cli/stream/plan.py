"""Stream plan nodes: what the SQL planner produces and the stream builder turns into
executors — the contract between `rw_cli.sql` and `rw_cli.stream`, as RisingWave's stream
plan is between its frontend and its compute nodes.

Expressions are sqlglot trees over the input's positional columns (`_0`, `_1`, ...), which
the planner rewrites; once the plan is final, the SQL layer compiles each of them once
(`rw_cli.sql.expr_compile.compile_plan`) into rw_cli.engine.expr's objects, which the
builder hands to the executors: neither this module nor the builder imports sqlglot.
"""
from __future__ import annotations

from collections.abc import Callable

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rw_cli.common.types import DataType
from rw_cli.engine.agg_call import AggCall
from rw_cli.engine.expr import Condition, Expr
from rw_cli.meta.catalog import RelationCatalog

if TYPE_CHECKING:
    from sqlglot import exp


@dataclass
class PlanNode:
    types: list[DataType]
    stream_key: list[int]
    inputs: list["PlanNode"] = field(default_factory=list)

    def explain_name(self) -> str:
        return type(self).__name__

    def explain_fields(self) -> str:
        return ""

    def explain(self, indent: str = "", last: bool = True, root: bool = True) -> list[str]:
        head = f"{self.explain_name()} {{ {self.explain_fields()} }}" if self.explain_fields() else self.explain_name()
        lines = [head if root else indent + ("└─" if last else "├─") + head]
        child_indent = indent if root else indent + ("  " if last else "│ ")
        for i, child in enumerate(self.inputs):
            lines += child.explain(child_indent, i == len(self.inputs) - 1, False)
        return lines


@dataclass
class StreamTableScan(PlanNode):
    relation: RelationCatalog | None = None

    def explain_name(self) -> str:
        return "StreamTableScan"

    def explain_fields(self) -> str:
        cols = ", ".join(c.name for c in self.relation.columns)
        return f"table: {self.relation.name}, columns: [{cols}]"


@dataclass
class StreamChangelog(PlanNode):
    """`AS CHANGELOG FROM rel`: every change of the input as an inserted row, with its op
    (`changelog_op`) and a row id (the stream key)."""

    def explain_name(self) -> str:
        return "StreamChangeLog"


@dataclass
class StreamProject(PlanNode):
    exprs: list[exp.Expression] = field(default_factory=list)
    compiled: list[Expr] | None = field(default=None, repr=False, compare=False)  # set by sql's compile_plan

    def explain_fields(self) -> str:
        return "exprs: [" + ", ".join(e.sql(dialect="postgres") for e in self.exprs) + "]"


@dataclass
class StreamFilter(PlanNode):
    predicate: exp.Expression | None = None
    compiled: Condition | None = field(default=None, repr=False, compare=False)

    def explain_fields(self) -> str:
        return f"predicate: {self.predicate.sql(dialect='postgres')}"


JOIN_KINDS = ("inner", "left", "right", "full", "semi", "anti")


@dataclass
class StreamHashJoin(PlanNode):
    """A join of any kind; `null_safe[i]` marks an `IS NOT DISTINCT FROM` key pair."""

    left_keys: list[int] = field(default_factory=list)
    right_keys: list[int] = field(default_factory=list)
    condition: exp.Expression | None = None
    kind: str = "inner"
    null_safe: list[bool] = field(default_factory=list)
    compiled_condition: Condition | None = field(default=None, repr=False, compare=False)
    lookup: bool = False  # FOR SYSTEM_TIME AS OF PROCTIME(): the right side is looked up, never joined back
    # FOR SYSTEM_TIME AS OF left.ts: [left time column, right version column], and the tables
    # whose watermarks (the lower of them) release the left rows
    event_time: list[int] | None = None
    watermark_tables: list[int] = field(default_factory=list)

    def explain_name(self) -> str:
        if self.lookup:
            return "StreamTemporalJoin"
        return "StreamHashJoin" if self.left_keys else "StreamNestedLoopJoin"

    def explain_fields(self) -> str:
        nl = len(self.inputs[0].types)
        eq = [f"_{a} {'IS NOT DISTINCT FROM' if ns else '='} _{nl + b}"
              for a, b, ns in zip(self.left_keys, self.right_keys, self.null_safe)]
        if self.condition is not None:
            eq.append(self.condition.sql(dialect="postgres"))
        kind = {"inner": "Inner", "left": "LeftOuter", "right": "RightOuter", "full": "FullOuter",
                "semi": "LeftSemi", "anti": "LeftAnti"}[self.kind]
        return f"type: {kind}, predicate: {' AND '.join(eq) or 'true'}"


@dataclass
class StreamPartitionRecompute(PlanNode):
    """An operator that PartitionRecomputeExecutor runs, recomputing the partitions an epoch
    touched (engine/partition_recompute.py lists them).

    `sql` reads `in0` (columns `_0.._n`) and yields the output columns; `name` is the
    RisingWave operator it stands for, as EXPLAIN prints it (StreamOverWindow,
    StreamGroupTopN, ...), with RisingWave's property syntax `[recompute]` where another
    plan node prints that operator's name for another executor (StreamHashAgg).
    """

    name: str = ""
    partition_keys: list[int] = field(default_factory=list)
    sql: str = ""
    detail: str = ""
    right_partition_keys: list[int] = field(default_factory=list)  # set operations: the second input
    temporal: bool = False  # reads now() (written `{now}` in sql): recomputed at every barrier
    watermark_of: int | None = None  # `{now}` is this table's watermark instead (EMIT ON WINDOW CLOSE)
    prune_to_output: bool = False  # top-N over an append-only input: keep only rows in the output

    def explain_name(self) -> str:
        return self.name

    def explain_fields(self) -> str:
        return self.detail


@dataclass
class StreamUnion(PlanNode):
    """UNION ALL: each input is projected onto (columns, branch tag, every branch's key)."""

    layouts: list[list[Expr]] = field(default_factory=list)  # per input: the output's expressions

    def explain_fields(self) -> str:
        return f"all: true, inputs: {len(self.inputs)}"


@dataclass
class StreamHashAgg(PlanNode):
    """The aggregates HashAggExecutor keeps a retractable state for (the others are a
    StreamPartitionRecompute named `StreamHashAgg [recompute]`)."""

    group_keys: list[int] = field(default_factory=list)
    calls: list[AggCall] = field(default_factory=list)

    def explain_name(self) -> str:
        return "StreamHashAgg" if self.group_keys else "StreamSimpleAgg"

    def explain_fields(self) -> str:
        aggs = ", ".join(f"{c.kind}({'*' if c.arg is None else '_' + str(c.arg)})" for c in self.calls)
        keys = ", ".join(f"_{k}" for k in self.group_keys)
        return (f"group_key: [{keys}], " if self.group_keys else "") + f"aggs: [{aggs}]"


@dataclass
class StreamMaterialize(PlanNode):
    names: list[str] = field(default_factory=list)
    hidden: list[bool] = field(default_factory=list)
    name: str = ""

    def explain_fields(self) -> str:
        cols = ", ".join(self.names)
        pk = ", ".join(self.names[k] for k in self.stream_key)
        return f"columns: [{cols}], stream_key: [{pk}], pk_columns: [{pk}]"


@dataclass
class StreamProjectSet(PlanNode):
    """Input columns, then each element of the list `list_sql` and its ordinal. `list_expr`:
    the list's DuckDB tree over the positional input columns (list_sql is its text)."""

    list_sql: str = ""
    list_expr: exp.Expression | None = None
    compiled: tuple[Expr, bool] | None = field(default=None, repr=False, compare=False)  # (lists, constant)

    def explain_fields(self) -> str:
        return f"select_list: [$*, unnest({self.list_sql})]"


@dataclass
class StreamValues(PlanNode):
    """Constant rows (`sql` is a DuckDB query producing them; the last column numbers them)."""

    sql: str = ""

    def explain_fields(self) -> str:
        return f"rows: {self.sql}"


def append_only(p: PlanNode, strict: bool = False) -> bool:
    """Whether a plan's output only ever inserts (append-only tables, sources, constants, and
    inner joins of such inputs). `strict`: nor an append-only table with a primary key that
    overwrites a row on an insert of its key (an update; tables created before append-only
    ones with a primary key ignored such inserts)."""
    if isinstance(p, StreamTableScan):
        rel = p.relation
        overwrites = rel.user_pk and rel.on_conflict != "do nothing"
        return (bool(rel.append_only) and not (strict and overwrites)) or rel.kind == "source"
    if isinstance(p, StreamValues):
        return True
    if isinstance(p, (StreamProject, StreamFilter, StreamProjectSet)):
        return append_only(p.inputs[0], strict)
    if isinstance(p, StreamUnion):
        return all(append_only(i, strict) for i in p.inputs)
    if isinstance(p, StreamHashJoin) and p.kind == "inner" and p.left_keys:
        return all(append_only(i, strict) for i in p.inputs)
    return False


@dataclass
class JobPlan:
    """What a catalog relation's job is built from, as the SQL layer plans it: the stream plan
    of an MV, index or sink (`root`); a table's watermark (DuckDB SQL and type); a source's
    generated columns (position, DuckDB SQL); a sink into a table: how its output becomes
    the table's rows (`into_rows`)."""

    root: StreamMaterialize | None = None
    watermark: tuple[str, DataType] | None = None
    generated: list[tuple[int, Expr]] = field(default_factory=list)
    into_rows: Callable | None = None
