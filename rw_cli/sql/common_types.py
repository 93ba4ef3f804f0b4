"""The type two values of different types meet in, where a stream plan must make them one
before it hashes or unites them: equal join keys (both sides are partitioned by their keys'
hashes, and 1 and 1.0, or a date and its midnight, hash apart) and a set operation's columns
(the branches are cast to one type). PostgreSQL's resolution, for the types it converts
implicitly: numbers and date/time types.
"""
from __future__ import annotations

from rw_cli.common.types import DataType

INTEGERS = ("smallint", "integer", "bigint")
FLOATS = ("real", "double precision")
# each family in the order PostgreSQL widens it (its UNION resolution: the last type that
# takes the others implicitly)
_NUMBER_RANK = {name: rank for rank, name in enumerate(INTEGERS + ("numeric",) + FLOATS)}
_DATETIME_RANK = {"date": 0, "timestamp without time zone": 1, "timestamp with time zone": 2}


def _wider(left: DataType, right: DataType) -> DataType | None:
    for rank in (_NUMBER_RANK, _DATETIME_RANK):
        if left.name in rank and right.name in rank:
            return max(left, right, key=lambda t: rank[t.name])
    return None


def join_key_type(left: DataType, right: DataType) -> DataType | None:
    """The type two equal join keys of different types compare as (PostgreSQL's cross-type
    operators: a float with any number as double precision, an integer with numeric as
    numeric, a date with a timestamp as that timestamp); None where they compare and hash as
    they are (equal types; integers of two widths, which hash alike) or meet in no type."""
    if left.name == right.name or left.name in INTEGERS and right.name in INTEGERS:
        return None
    if left.name in _NUMBER_RANK and right.name in _NUMBER_RANK and {left.name, right.name} & set(FLOATS):
        return DataType("double precision")
    return _wider(left, right)


def set_op_type(left: DataType, right: DataType) -> DataType | None:
    """The type of a UNION / EXCEPT / INTERSECT column whose branches are of two types: the
    wider (smallint < integer < bigint < numeric < real < double precision; date < timestamp
    < timestamptz), as PostgreSQL resolves it; None for equal types or no such pair."""
    if left.name == right.name:
        return None
    return _wider(left, right)
