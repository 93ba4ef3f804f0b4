"""Aggregates that DuckDB computes as a scalar function over aggregates (jsonb_agg as the JSON
of a list, string_agg with a per-row delimiter from two lists, ...).

- `aggregate_result(wrapper)`: marks the scalar function that stands for one aggregate.
- `filter_into(node)`: `wrapper(agg1, agg2) FILTER (WHERE p)` becomes
  `wrapper(agg1 FILTER (WHERE p), agg2 FILTER (WHERE p))` (a FILTER applies to aggregates
  only); None for any other FILTER.
"""
from __future__ import annotations

from sqlglot import exp

_MARK = "aggregate_wrapper"


def aggregate_result(wrapper: exp.Expression) -> exp.Expression:
    wrapper.meta[_MARK] = True
    return wrapper


def filter_into(node: exp.Filter) -> exp.Expression | None:
    wrapper = node.this
    if not wrapper.meta.get(_MARK):
        return None
    for agg in list(wrapper.find_all(exp.AggFunc)):
        agg.replace(exp.Filter(this=agg.copy(), expression=node.expression.copy()))
    return wrapper
