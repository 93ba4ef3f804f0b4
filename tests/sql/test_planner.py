"""Stream plans for materialized views (EXPLAIN output as golden text)."""
import pytest

import rw_cli
from rw_cli.errors import BindError, CatalogError, NotSupported


@pytest.fixture
def db(tmp_path):
    s = rw_cli.connect(str(tmp_path / "d"))
    s.execute("create table t (k int, v int); create table u (k int primary key, name varchar)")
    yield s
    s.close()


def explain(db, sql):
    return [r[0] for r in db.execute("explain " + sql).fetchall()]


def test_explain_agg(db):
    assert explain(db, "create materialized view m as select k, sum(v) as s from t where v > 1 group by k") == [
        "StreamMaterialize { columns: [k, s], stream_key: [k], pk_columns: [k] }",
        "└─StreamProject { exprs: [_0, _1] }",
        "  └─StreamHashAgg { group_key: [_0], aggs: [sum(_1)] }",
        "    └─StreamProject { exprs: [_0, _1] }",
        "      └─StreamFilter { predicate: _1 > 1 }",
        "        └─StreamTableScan { table: t, columns: [k, v, _row_id] }",
    ]


def test_explain_join_keeps_stream_key_hidden(db):
    lines = explain(db, "create materialized view j as select u.name, t.v from t join u on t.k = u.k")
    assert lines[0].startswith("StreamMaterialize { columns: [name, v, t._row_id, k]")
    assert "StreamHashJoin { type: Inner, predicate: _0 = _3 }" in lines[2]


def test_simple_agg(db):
    lines = explain(db, "create materialized view c as select count(*) from t")
    assert "StreamSimpleAgg { aggs: [count_star(*)] }" in lines[2]


@pytest.mark.parametrize("sql,err", [
    ("create materialized view x as select nope from t", BindError),
    ("create materialized view x as select * from nope", CatalogError),
    ("create materialized view x as select k, v from t group by k", BindError),
    ("create materialized view x as select k, count(*) from t group by k having", Exception),
    ("create materialized view x as select * from t left join u on t.k = u.k", BindError),  # k twice
])
def test_errors(db, sql, err):
    with pytest.raises(err):
        db.execute(sql)
    assert db.execute("show materialized views").fetchall() == []


def test_append_only_input_keeps_no_materialized_input(db):
    from rw_cli.engine.hash_agg import HashAggExecutor

    db.execute("create table ao (k int, v int) append only; "
               "create materialized view lo_ao as select k, min(v) from ao group by k; "
               "create materialized view lo_t as select k, min(v) from t group by k")

    def aggs(name):
        job = db.runtime.jobs[db.catalog.get(name).id]
        return [n.executor for n in job.nodes if isinstance(n.executor, HashAggExecutor)]
    assert aggs("lo_ao")[0].minput_tables == {}
    assert len(aggs("lo_t")[0].minput_tables) == 1
