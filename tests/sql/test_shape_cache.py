"""Statements of one shape with other literals reuse a parse (rw_cli.sql.shape_cache): the tree
must be the parser's own for every literal, and what the parser reads by value stays with it."""
from __future__ import annotations

import random

import pytest

from rw_cli.sql import shape_cache
from rw_cli.sql.dialect import parse_statement

SHAPES = [
    "UPDATE bid SET price = price + {n}, channel = {s} WHERE bid_id = {n}",
    "DELETE FROM bid WHERE bid_id = {n}",
    "DELETE FROM s1.t AS x WHERE x.a IN ({n}, {n}, -{n}) AND b <> {s}",
    "SELECT * FROM t WHERE a = {n} AND b = {s} ORDER BY a LIMIT {n}",
    "SELECT a::varchar({n}), {d} * a, round(b, {n}) AS \"q 1\" FROM t WHERE c BETWEEN {d} AND {d}",
    "SELECT CASE WHEN a > {n} THEN {s} ELSE {s} END,\n  substr(c, {n}, {n}) FROM t\nWHERE d = {s} -- a comment",
    "SELECT count(*) FILTER (WHERE a < {n}) FROM t GROUP BY b HAVING sum(a) > {d}",
    "SELECT {s} || c, '{n}' FROM t WHERE d = DATE {s}",
]


def _positions(tree) -> list:
    """Where each node lies in the text (renames edit definitions by these)."""
    return [(type(n).__name__, {k: n.meta.get(k) for k in ("line", "col", "start", "end")}) for n in tree.walk()]


def _literal(kind: str, r: random.Random) -> str:
    if kind == "n":
        return str(r.choice([0, 1, 7, 42, 10**12, r.randint(0, 10**6)]))
    if kind == "d":
        return r.choice(["1.5", "0.25", "3e2", "12.0", "7"])
    return "'" + r.choice(["", "abc", "it''s", "A B", "x-1", "2024-01-02", "ch7"]) + "'"


def _fill(shape: str, r: random.Random) -> str:
    out, i = [], 0
    while i < len(shape):
        if shape.startswith(("{n}", "{s}", "{d}"), i):
            out.append(_literal(shape[i + 1], r))
            i += 3
        else:
            out.append(shape[i])
            i += 1
    return "".join(out)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_shape_gives_the_parsers_tree_for_every_literal(shape):
    r = random.Random(shape)
    shape_cache.clear()
    for _ in range(40):
        sql = _fill(shape, r)
        tree = parse_statement(sql)
        assert tree == parse_statement(sql, shapes=False), sql
        assert tree.sql() == parse_statement(sql, shapes=False).sql(), sql  # (== folds case: the text does not)
        assert _positions(tree) == _positions(parse_statement(sql, shapes=False)), sql
    used = [seen for _, seen in shape_cache.shapes() if seen is not None]
    assert used and all(seen >= shape_cache.TRUST for seen in used)  # the shape was reused, not parsed 40 times


def test_statements_the_parser_reads_by_their_values_stay_with_it():
    shape_cache.clear()
    for sql in ["SELECT * FROM t WHERE ts > now() - interval '1 day'",  # INTERVAL reads its string
                "SELECT * FROM t WHERE s = E'a\\nb'",  # an escape string
                "SELECT * FROM t WHERE a = $1",  # a parameter
                "SELECT $$12$$",  # a dollar-quoted string
                "DELETE FROM t WHERE s = 'map{1}'"]:  # a string a rewrite before the parser looks at
        for _ in range(3):
            assert parse_statement(sql) == parse_statement(sql, shapes=False)
    assert all(seen is None for _, seen in shape_cache.shapes())


def test_a_trusted_shape_fills_in_each_statements_own_values():
    shape_cache.clear()
    for i in range(10):
        tree = parse_statement(f"DELETE FROM t WHERE id = {i} AND s = 'v{i}'")
        assert tree.sql() == f"DELETE FROM t WHERE id = {i} AND s = 'v{i}'"


def test_single_row_dml_of_one_shape_changes_the_rows_it_names(tmp_path):
    import rw_cli

    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR)")
    s.execute("CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n, sum(v) AS total FROM t")
    for i in range(30):
        s.execute(f"INSERT INTO t VALUES ({i}, {i}, 'x{i}')")
    for i in range(0, 30, 3):
        s.execute(f"UPDATE t SET v = v + {100 + i}, s = 'u{i}' WHERE id = {i}")
    for i in range(1, 30, 3):
        s.execute(f"DELETE FROM t WHERE id = {i}")
    s.execute("FLUSH")
    rows = sorted(s.execute("SELECT id, v, s FROM t").fetchall())
    want = sorted((i, i + (100 + i if i % 3 == 0 else 0), f"u{i}" if i % 3 == 0 else f"x{i}")
                  for i in range(30) if i % 3 != 1)
    assert rows == want
    assert s.execute("SELECT n, total FROM m").fetchall() == [(len(want), sum(v for _, v, _ in want))]
    names = {k: x for k, _, x in want}
    for i in (0, 3, 5, 6):
        assert s.execute(f"SELECT s FROM t WHERE id = {i}").fetchall() == [(names[i],)]
    s.close()
