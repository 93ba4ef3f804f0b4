"""Parameter types inferred from where `$n` stands (rw_cli.sql.param_types), as PostgreSQL's
parser infers them for a client that leaves them unspecified."""
from __future__ import annotations

import pytest

import rw_cli
from rw_cli.sql.param_types import infer_parameter_types, object_identifier_parameters


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    s = rw_cli.connect(str(tmp_path_factory.mktemp("params")))
    s.execute("create table t (id int primary key, name varchar, ts timestamp, v numeric, arr int[], b boolean)")
    yield s.catalog
    s.close()


@pytest.mark.parametrize("sql, expected", [
    ("insert into t values ($1, $2, $3, $4, $5, $6)",
     ["integer", "character varying", "timestamp without time zone", "numeric", "integer[]", "boolean"]),
    ("insert into t (name, id) values ($1, $2)", ["character varying", "integer"]),
    ("select * from t where id > $1 order by id limit $2 offset $3", ["integer", "bigint", "bigint"]),
    ("select name from t x where x.id = $1 and name like $2", ["integer", "character varying"]),
    ("update t set name = $1, v = $2 where id in ($3, $4)", ["character varying", "numeric", "integer", "integer"]),
    ("delete from t where ts between $1 and $2", ["timestamp without time zone"] * 2),
    ("select $1::int[], cast($2 as text)", ["integer[]", "character varying"]),
    ("select * from t where id = ($1)", ["integer"]),
    ("select id + $1, $2 + 1.5 from t", ["integer", "numeric"]),
    ("select * from t where id in (select id from t where v > $1)", ["numeric"]),
    ("select $1, upper($2)", [None, None]),
    ("select * from nosuch where a = $1", [None]),
    ("this is not sql $1", [None]),
])
def test_inferred_types(catalog, sql, expected):
    got = infer_parameter_types(sql, catalog, len(expected))
    assert [t.name if t is not None else None for t in got] == expected


def test_object_identifier_casts():
    assert object_identifier_parameters("select * from pg_type where oid = any($1::oid[]) and x = $2::regclass") \
        == {1: True, 2: False}


def test_object_identifier_casts_in_quotes_or_comments_are_no_parameters():
    assert object_identifier_parameters("select '$1::oid' , $2 -- $3::oid[]\n, $4 :: pg_catalog.oid") == {4: False}
