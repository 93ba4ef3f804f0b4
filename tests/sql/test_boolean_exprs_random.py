"""Random boolean expressions (AND/OR/NOT, comparisons, IS [NOT] NULL, BETWEEN, NULL literals)
over int columns with NULLs: a filter MV, a projection MV and a join MV whose condition's
non-equi part is the expression equal their queries (as multisets) after every flush."""
from __future__ import annotations

import itertools
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rw_cli

_VALUES = st.one_of(st.none(), st.integers(-2, 3))
_ROWS = st.lists(st.tuples(_VALUES, _VALUES, _VALUES), min_size=0, max_size=10)
_OPS = ["=", "<>", "<", "<=", ">", ">="]


def _literal(v) -> str:
    return "NULL" if v is None else str(v)


def _bool_exprs(columns: list[str], between: bool = True, max_leaves: int = 6):
    col = st.sampled_from(columns)
    operand = st.one_of(col, st.integers(-2, 3).map(str))
    atoms = [
        st.tuples(col, st.sampled_from(_OPS), operand).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(operand, st.sampled_from(_OPS), col).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(col, st.booleans()).map(lambda t: f"{t[0]} IS {'NOT ' if t[1] else ''}NULL"),
        st.tuples(col, st.sampled_from(_OPS)).map(lambda t: f"{t[0]} {t[1]} NULL"),
        st.just("NULL"),
    ]
    if between:
        atoms.append(st.tuples(col, st.booleans(), operand, operand).map(
            lambda t: f"{t[0]} {'NOT ' if t[1] else ''}BETWEEN {t[2]} AND {t[3]}"))

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
            st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
            inner.map(lambda e: f"NOT ({e})"),
        )
    return st.recursive(st.one_of(atoms), extend, max_leaves=max_leaves)


_session = None
_names = itertools.count()


def _s():
    """One session for every example, its tables emptied by each."""
    global _session
    if _session is None:
        _session = rw_cli.connect(tempfile.mkdtemp(prefix="rw-bool-"))
        _session.execute("create table t (a int, b int, c int)")
        _session.execute("create table u (a int, b int, c int)")
    return _session


def _bag(rows) -> list[str]:
    return sorted(map(repr, rows))


def _insert(s, table: str, rows) -> None:
    if rows:
        s.execute(f"insert into {table} values " + ", ".join(f"({', '.join(map(_literal, r))})" for r in rows))


def _mixed(columns: list[str]):
    """`x AND y OR z` unparenthesized at the top (its AND is no conjunction of the whole)."""
    e = _bool_exprs(columns, between=False, max_leaves=2)
    return st.tuples(e, e, e).map(lambda t: f"{t[0]} AND {t[1]} OR {t[2]}")


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.tuples(_bool_exprs(["a", "b", "c"]), _mixed(["a", "b", "c"])), _mixed(["t.b", "t.c", "u.b", "u.c"]),
       _ROWS, _ROWS, _ROWS, st.integers(-2, 3))
def test_boolean_expression_mvs_match_queries(wheres, on, first, second, right, gone):
    s = _s()
    n = next(_names)
    s.execute("delete from t; delete from u")
    queries = {f"f{n}_{i}": f"select * from t where {w}" for i, w in enumerate(wheres)}
    queries[f"p{n}"] = "select " + ", ".join(f"{w} as x{i}" for i, w in enumerate(wheres)) + ", a from t"
    queries[f"j{n}"] = f"select t.a, t.b, t.c, u.b as ub, u.c as uc from t join u on t.a = u.a and ({on})"
    try:
        for name, q in queries.items():
            s.execute(f"create materialized view {name} as {q}")
        steps = [lambda: (_insert(s, "t", first), _insert(s, "u", right)),
                 lambda: (s.execute(f"delete from t where a = {gone} or b is null; delete from u where c = {gone}"),
                          _insert(s, "t", second))]
        for step in steps:
            step()
            s.execute("flush")
            for name, q in queries.items():
                assert _bag(s.execute(f"select * from {name}").fetchall()) == _bag(s.execute(q).fetchall()), \
                    (name, q)
    finally:
        for name in queries:
            s.execute(f"drop materialized view if exists {name}")
