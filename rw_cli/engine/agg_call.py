"""An aggregate call of a stream plan (kind, argument, types) and what follows from it: its
result type (PostgreSQL's) and the state it keeps per group. The planner and the hash agg
executor share these."""
from __future__ import annotations

from dataclasses import dataclass

from rw_cli.common.types import BIGINT, DOUBLE, INT128_STATE, NUMERIC, DataType

AGG_KINDS = ("count_star", "count", "sum", "avg", "min", "max")


@dataclass
class AggCall:
    kind: str
    arg: int | None  # input column, None for count(*)
    arg_type: DataType | None
    return_type: DataType

    @property
    def needs_minput(self) -> bool:
        return self.kind in ("min", "max")


def agg_return_type(kind: str, arg_type: DataType | None) -> DataType:
    """PostgreSQL's result types."""
    if kind in ("count", "count_star"):
        return BIGINT
    assert arg_type is not None
    if kind == "sum":
        if arg_type.name in ("smallint", "integer"):
            return BIGINT
        if arg_type.name == "bigint":
            return NUMERIC
        return arg_type
    if kind == "avg":
        if arg_type.name in ("real", "double precision", "rw_int256"):
            return DOUBLE
        if arg_type.name == "interval":
            return arg_type
        return NUMERIC
    return arg_type


def state_types(call: AggCall) -> list[tuple[str, DataType]]:
    """The state columns one agg call keeps per group."""
    if call.kind in ("count", "count_star"):
        return [("cnt", BIGINT)]
    if call.kind in ("sum", "avg"):
        acc = accumulator_type(call)
        if is_float_sum(call):
            return [("sum", acc), ("nn", BIGINT)] + [(n, BIGINT) for n in SPECIAL_COUNTS]
        return [("sum", acc), ("nn", BIGINT)]
    return [("val", call.arg_type), ("nn", BIGINT)]


# A float sum keeps its finite values' sum and counts the infinities and NaNs apart: a running
# sum that has taken Infinity cannot give it back (Infinity - Infinity is NaN), so an MV whose
# group lost its Infinity row would hold NaN where its query gives the finite sum.
SPECIAL_COUNTS = ("pinf", "ninf", "nan")
COUNT_STATES = frozenset(("cnt", "nn") + SPECIAL_COUNTS)


def is_float_sum(call: AggCall) -> bool:
    """Whether a sum or avg accumulates in a float type (and so keeps special counts)."""
    return call.kind in ("sum", "avg") and accumulator_type(call).name in ("real", "double precision")


def accumulator_type(call: AggCall) -> DataType:
    """The type a sum or avg accumulates in: integers into numeric results sum exactly in 128
    bits (Arrow and DuckDB add them natively), numerics in numeric, the rest in their result
    type."""
    if call.return_type.name == "numeric":
        return INT128_STATE if call.arg_type.is_integer else NUMERIC
    return call.return_type
