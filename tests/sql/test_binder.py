"""Binding on a bare catalog: name resolution, star expansion, hidden columns, errors with
their messages, and the types expressions get, through the two binders the sql layer has:
`batch.bind_query` (SELECTs run on DuckDB) and the stream planner's `qualify_query`.

Types are PostgreSQL's (what `pg_typeof` would say): a batch query's are those of its
DuckDB SQL run on empty inputs, a materialized view's those its plan derives. Both must
agree, with each other and with PostgreSQL; where they do not, the case is an expected
failure that names the bug.
"""
from __future__ import annotations

import pyarrow as pa
import pytest

from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.errors import BindError, CatalogError, NotSupported, RwError
from rw_cli.sql.batch import bind_query, referenced_relations
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.output_name import output_name
from rw_cli.sql.planner import StreamPlanner, check_relations, qualify_query
from rw_cli.sql.transpile import to_duckdb


def bind(catalog, sql: str, hidden: bool = False):
    return bind_query(parse_statement(sql), catalog, hidden=hidden)


def batch_sql(catalog, sql: str) -> str:
    bound = bind(catalog, sql)
    return to_duckdb(bound.tree, bound.schema)


def batch_types(catalog, sql: str) -> list[str]:
    """The result types of a batch query, run by DuckDB on empty relations (jsonb columns
    as Arrow's JSON type, as rw_cli.handler.query registers them)."""
    bound = bind(catalog, sql)
    tables = {reg: pa.schema([pa.field(c.name, pa.json_() if c.type.name == "jsonb" else c.type.arrow())
                              for c in rel.visible_columns]).empty_table()
              for reg, rel in bound.relations.items()}
    schema = duck.query(f"SELECT * FROM ({to_duckdb(bound.tree, bound.schema)}) LIMIT 0", tables).schema
    return [DataType.from_field(f).name for f in schema]


def stream_plan(catalog, sql: str):
    root, _ = StreamPlanner(catalog).plan_mv(parse_statement(sql), "m")
    return root


def stream_types(catalog, sql: str) -> list[str]:
    root = stream_plan(catalog, sql)
    return [t.name for t, hidden in zip(root.types, root.hidden) if not hidden]


def visible_names(root) -> list[str]:
    return [n for n, hidden in zip(root.names, root.hidden) if not hidden]


# -- name resolution ---------------------------------------------------------------------------

@pytest.mark.parametrize("sql,batch,stream", [
    ("select k from t", "SELECT t.k AS k FROM __rel_1 AS t", "SELECT t.k AS k FROM t AS t"),
    ("select x.k from t as x", "SELECT x.k AS k FROM __rel_1 AS x", "SELECT x.k AS k FROM t AS x"),
    ("select K from T", "SELECT t.k AS k FROM __rel_1 AS t", None),  # unquoted names fold to lower case
    ("select * from t", "SELECT t.k AS k, t.v AS v, t.s AS s FROM __rel_1 AS t",
     "SELECT t.k AS k, t.v AS v, t.s AS s FROM t AS t"),
    ("select t.*, u.w from t join u on t.k = u.k",
     "SELECT t.k AS k, t.v AS v, t.s AS s, u.w AS w FROM __rel_1 AS t JOIN __rel_2 AS u ON t.k = u.k", None),
    ("select * except (k) from t", "SELECT t.v AS v, t.s AS s FROM __rel_1 AS t", None),
    ("select _row_id, k from t", "SELECT _row_id AS _row_id, t.k AS k FROM __rel_1 AS t", None),
    ("select k from public.t", "SELECT t.k AS k FROM __rel_1 AS t", None),
    ("select * from vw", "SELECT vw.k AS k, vw.v AS v FROM (SELECT t.k AS k, t.v AS v FROM __rel_1 AS t "
     "WHERE t.v > 0) AS vw", "SELECT vw.k AS k, vw.v AS v FROM (SELECT t.k AS k, t.v AS v FROM t AS t "
     "WHERE t.v > 0) AS vw"),
    ("select k from t join u using (k)",
     "SELECT COALESCE(t.k, u.k) AS k FROM __rel_1 AS t JOIN __rel_2 AS u ON t.k = u.k", None),
    ("select w from u where id in (select k from t)",
     "SELECT u.w AS w FROM __rel_2 AS u WHERE u.id IN (SELECT t.k AS k FROM __rel_1 AS t)", None),
    ("with x as (select k from t) select k from x",
     "WITH x AS (SELECT t.k AS k FROM __rel_1 AS t) SELECT x.k AS k FROM x AS x", None),
    ("select k from t where v > (select max(w) from u where u.k = t.k)",
     "SELECT t.k AS k FROM __rel_1 AS t WHERE t.v > (SELECT MAX(u.w) AS max FROM __rel_2 AS u "
     "WHERE u.k = t.k)", None),
])
def test_qualified(catalog, sql, batch, stream):
    """Every column is qualified with its source; stars expand to the visible columns."""
    assert batch_sql(catalog, sql) == batch
    if stream is not None:
        assert qualify_query(parse_statement(sql), catalog)[0].sql() == stream


def test_bound_query_registers_relations_by_id(catalog):
    bound = bind(catalog, "select t.k, u.w from t join u on t.k = u.k")
    assert {reg: rel.name for reg, rel in bound.relations.items()} == {"__rel_1": "t", "__rel_2": "u"}
    assert bound.schema["__rel_1"] == {"k": "INTEGER", "v": "INTEGER", "s": "VARCHAR"}
    assert bound.qualified and not bound.named_hidden and not bound.system


def test_hidden_columns(catalog):
    """`_row_id` is not expanded by `*` but resolves when named; DML binds it as a column."""
    assert "_row_id" not in bind(catalog, "select * from t").schema["__rel_1"]
    named = bind(catalog, "select _row_id from t")
    assert "_row_id" in named.named_hidden and named.schema["__rel_1"]["_row_id"] == "BIGINT"
    assert "_row_id" in bind(catalog, "select * from t", hidden=True).schema["__rel_1"]
    assert "_row_id" in batch_sql(catalog, "select _row_id from t")
    root = stream_plan(catalog, "select _row_id, k from t")
    assert visible_names(root) == ["_row_id", "k"] and root.stream_key == [0]


def test_star_expansion_in_a_stream_plan(catalog):
    assert visible_names(stream_plan(catalog, "select * from t")) == ["k", "v", "s"]
    assert visible_names(stream_plan(catalog, "select * from src")) == ["auction", "bidder", "price", "date_time"]
    assert visible_names(stream_plan(catalog, "select * from vw")) == ["k", "v"]
    assert visible_names(stream_plan(catalog, "select x.* from (select k as a, v as b from t) as x")) == ["a", "b"]


def test_system_relations_are_materialized(catalog):
    bound = bind(catalog, "select relname from pg_catalog.pg_class")
    assert list(bound.system) == ["__sys_pg_catalog_pg_class"]
    names = bound.system["__sys_pg_catalog_pg_class"].column("relname").to_pylist()
    assert {"t", "u", "mv", "vw"} <= set(names)
    assert bind(catalog, "select table_name from information_schema.tables").system


def test_relations_named(catalog):
    tree = parse_statement("select * from t join u on t.k = u.k where t.v in (select v from t)")
    assert [r.name for r in referenced_relations(tree, catalog)] == ["t", "u"]
    assert [r.name for r in check_relations(tree, catalog)] == ["t", "u"]
    with_cte = parse_statement("with x as (select k from ao) select k from x")
    assert [r.name for r in referenced_relations(with_cte, catalog)] == ["ao"]
    assert [r.name for r in qualify_query(parse_statement("select k from vw"), catalog)[1]] == ["t"]


@pytest.mark.parametrize("sql,name", [
    ("select k from t", "k"), ("select k as kk from t", "kk"), ("select t.k from t", "k"),
    ("select k + 1 from t", "?column?"), ("select upper(s) from t", "upper"), ("select cast(k as bigint) from t", "k"),
    ("select k::varchar from t", "k"), ("select count(*) from t", "count"), ("select sum(v) from t", "sum"),
    ("select coalesce(k, v) from t", "coalesce"), ("select 1 from t", "?column?"), ("select 'a' from t", "?column?"),
    ("select row_number() over () from t", "row_number"),
    ("select lag(k) over (order by v) from t", "lag"), ("select count(*) filter (where k > 1) from t", "count"),
    ("select case when k > 1 then 1 end from t", "case"),
])
def test_output_names(sql, name):
    """PostgreSQL's names for select items (EXPLAIN, result headers, MV columns)."""
    assert output_name(parse_statement(sql).expressions[0]) == name


@pytest.mark.parametrize("sql,name", [
    ("select string_agg(s, ',') from t", "string_agg"), ("select bool_and(k > 1) from t", "bool_and"),
    ("select bool_or(k > 1) from t", "bool_or"), ("select generate_series(1, 3)", "generate_series"),
    ("select unnest(array[1, 2])", "unnest"), ("select now()", "now"), ("select cast('1' as int) from t", "int4"),
])
def test_output_names_of_renamed_functions(sql, name):
    assert output_name(parse_statement(sql).expressions[0]) == name


@pytest.mark.xfail(strict=True, reason="VALUES without column names: the planner names its columns "
                   "`_col_0`.. (sqlglot's), PostgreSQL `column1`..")
def test_values_column_names(catalog):
    assert visible_names(stream_plan(catalog, "select * from (values (1, 2)) as v")) == ["column1", "column2"]


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sql,error,message", [
    ("select nope from t", BindError, 'column "nope" does not exist'),
    ("select k from t where nope = 1", BindError, 'column "nope" does not exist'),
    ("select k from t order by nope", BindError, 'column "nope" does not exist'),
    ("select * from nope", CatalogError, 'relation "nope" does not exist'),
    ("select k from t join nope on true", CatalogError, 'relation "nope" does not exist'),
    ("select k from other.t", CatalogError, 'schema not found: other'),
    ("select * from pg_catalog.pg_nope", CatalogError, 'relation "pg_catalog.pg_nope" does not exist'),
    ("select * except (nope) from t", BindError, "Item not found: Invalid column: nope"),
    ("select * except (k, k) from t", BindError, "Duplicate entry in except list"),
    ("select * except (k) from t join u on t.k = u.k", BindError, "Ambiguous column name: k"),
    ("select * except (k + 1) from t", BindError, "Only support column name in except list"),
    ("select 1 from t join u on t.k = x.k, ao as x", BindError,
     'invalid reference to FROM-clause entry for table "x"'),
    ("select 1 from t, u join ao using (k)", BindError, 'common column name "k" appears more than once in left table'),
    ("select window_start from tumble(ao, ts)", BindError, "tumble expects 3 or 4 arguments, got 2"),
    ("select window_start from hop(ao, ts, interval '1' minute)", BindError, "hop expects 4 or 5 arguments, got 3"),
    ("select window_start from hop(ao, ts, interval '0 minutes', interval '1 minute')", BindError,
     "hop slide must be positive"),
    ("select window_start from tumble(1, ts, interval '1 minute')", BindError,
     "the first argument of tumble must be a relation"),
    ("select k from t union all corresponding select w from u", BindError,
     'When CORRESPONDING is specified, at least one column of the left side shall have a column name that is '
     'the column name of some column of the right side in a UNION operation. Left side query column list: '
     '("k"). Right side query column list: ("w").'),
    ("select k, k from t union corresponding select k, w from u", BindError,
     "Duplicated column name `k` in a column list of the query in a UNION operation. Duplicated column names "
     "are not allowed."),
    ("select k from t union corresponding by (k, k) select k from u", BindError,
     "Duplicated column name in CORRESPONDING BY of the UNION operation"),
])
def test_batch_bind_errors(catalog, sql, error, message):
    with pytest.raises(error) as e:
        bind(catalog, sql)
    assert e.value.message == message


@pytest.mark.parametrize("sql,error,message", [
    ("select nope from t", BindError, 'column "nope" does not exist'),
    ("select * from nope", CatalogError, 'relation "nope" does not exist'),
    ("select k from t join nope on t.k = nope.k", CatalogError, 'relation "nope" does not exist'),
    ("select k, v from t group by k", BindError,
     'column "t.v" must appear in the GROUP BY clause or be used in an aggregate function'),
    ("select sum(max(v)) from t", BindError, "aggregate function calls cannot be nested"),
    ("select k, v as k from t", BindError, 'column "k" specified more than once'),
    ("select k, (select w from u) from t", BindError, "Scalar subquery might produce more than one row"),
    ("select k from t union all select k, v from t", BindError,
     "each UNION query must have the same number of columns"),
    ("select k from t order by k limit 99999999999999999999", BindError,
     "LIMIT/OFFSET value 99999999999999999999 is out of range for type bigint"),
    ("select k from t order by k limit k", NotSupported,
     "not supported: LIMIT / OFFSET that is not an integer constant in a materialized view"),
    ("select k from t qualify k = 1", NotSupported, "not supported: QUALIFY in a materialized view"),
])
def test_stream_bind_errors(catalog, sql, error, message):
    with pytest.raises(error) as e:
        stream_plan(catalog, sql)
    if message is not None:
        assert e.value.message == message


def test_unknown_function(catalog):
    """An unknown function is found when the query is translated for DuckDB (against the
    names DuckDB answers to), in a stream plan and a batch query alike, and named with its
    argument types as PostgreSQL names it (issue 20, item 9)."""
    with pytest.raises(RwError) as e:
        stream_plan(catalog, "select nope(k) from t")
    assert "nope" in e.value.message and "does not exist" in e.value.message
    with pytest.raises(BindError) as e:
        batch_sql(catalog, "select nope(k) from t")
    assert e.value.message == "function nope(integer) does not exist"


@pytest.mark.xfail(strict=True, reason='an ambiguous column is reported as `column "k" does not exist`; '
                   'PostgreSQL: `column reference "k" is ambiguous`')
@pytest.mark.parametrize("path", ["batch", "stream"])
def test_ambiguous_column_message(catalog, path):
    with pytest.raises(BindError) as e:
        (bind if path == "batch" else stream_plan)(catalog, "select k from t join u on t.k = u.k")
    assert e.value.message == 'column reference "k" is ambiguous'


@pytest.mark.xfail(strict=True, reason="an unknown column of a named table: batch binding gives up "
                   "(qualified=False, DuckDB reports it when run), the stream planner says `Unknown column: nope`; "
                   "PostgreSQL: `column t.nope does not exist`")
@pytest.mark.parametrize("path", ["batch", "stream"])
def test_unknown_qualified_column(catalog, path):
    with pytest.raises(BindError) as e:
        (bind if path == "batch" else stream_plan)(catalog, "select t.nope from t")
    assert e.value.message in ('column t.nope does not exist', 'column "t.nope" does not exist')


@pytest.mark.xfail(strict=True, reason='a column of an alias not in FROM is reported as `column "k" does not '
                   'exist`; PostgreSQL: `missing FROM-clause entry for table "z"`')
def test_unknown_alias_message(catalog):
    with pytest.raises(BindError) as e:
        bind(catalog, "select z.k from t")
    assert e.value.message == 'missing FROM-clause entry for table "z"'


def test_stream_unknown_schema(catalog):
    with pytest.raises(CatalogError):
        stream_plan(catalog, "select k from other.t")


@pytest.mark.xfail(strict=True, reason="the stream planner does not check `* EXCEPT (...)`: an unknown "
                   "column there is ignored (batch queries refuse it)")
def test_stream_star_except_unknown_column(catalog):
    with pytest.raises(BindError):
        stream_plan(catalog, "select * except (nope) from t")


@pytest.mark.xfail(strict=True, reason="an aggregate in WHERE is planned as a filter over the aggregate "
                   "call; PostgreSQL: `aggregate functions are not allowed in WHERE`")
def test_stream_aggregate_in_where(catalog):
    with pytest.raises(BindError):
        stream_plan(catalog, "select k from t where sum(v) > 1")


@pytest.mark.xfail(strict=True, reason="sum(varchar) is planned (a StreamHashAgg of sum over text); "
                   "PostgreSQL: `function sum(character varying) does not exist`")
def test_stream_sum_of_text(catalog):
    with pytest.raises(RwError):
        stream_plan(catalog, "select sum(s) from t")


def test_stream_chained_ctes(catalog):
    root = stream_plan(catalog, "with x as (select k, v from t), y as (select k, sum(v) as sv from x group by k) "
                                "select k, sv from y")
    assert visible_names(root) == ["k", "sv"]


def test_stream_cte_with_a_column_list(catalog):
    """TPC-H q15: `WITH revenue0 (supplier_no, total_revenue) AS (...)`."""
    root = stream_plan(catalog, "with r (a, b) as (select k, sum(v) from t group by k) "
                                "select a, b from r where b = (select max(b) from r)")
    assert visible_names(root) == ["a", "b"]


def test_stream_uncorrelated_scalar_subquery(catalog):
    root = stream_plan(catalog, "select k, (select max(w) from u) as m from t")
    assert visible_names(root) == ["k", "m"]


# -- types -------------------------------------------------------------------------------------

TYPES = [
    # arithmetic: integer operators keep the wider integer type; / of integers is integer division
    ("1 + 1", "integer"), ("i4 + i4", "integer"), ("i2 + i2", "smallint"), ("i2 * i2", "smallint"),
    ("i4 + i8", "bigint"), ("i4 / i4", "integer"), ("i4 / i8", "bigint"), ("7 / 2", "integer"),
    ("i4 % 3", "integer"), ("-i2", "smallint"), ("abs(i2)", "smallint"),
    # numeric and floating point
    ("1.5", "numeric"), ("i4 * 1.5", "numeric"), ("num + i4", "numeric"), ("num * num", "numeric"),
    ("round(num)", "numeric"), ("i4 + d", "double precision"), ("r + r", "real"), ("d * 2", "double precision"),
    ("10000000000", "bigint"),
    # comparisons and logic
    ("i4 > i8", "boolean"), ("i4 = num", "boolean"), ("txt like 'a%'", "boolean"), ("b and i4 > 1", "boolean"),
    ("i4 is null", "boolean"), ("i4 in (1, 2)", "boolean"), ("i4 between 1 and 2", "boolean"),
    # conditionals take the common type of their branches
    ("case when b then i4 else i8 end", "bigint"), ("case when b then 1 else 2 end", "integer"),
    ("case when b then i4 else 1.5 end", "numeric"), ("coalesce(i4, i8)", "bigint"),
    ("coalesce(i4, 1.5)", "numeric"), ("coalesce(txt, 'x')", "character varying"), ("nullif(i4, 0)", "integer"),
    ("greatest(i2, i8)", "bigint"),
    # text
    ("txt || 'b'", "character varying"), ("i4::text", "character varying"), ("upper(txt)", "character varying"),
    ("'a'", "character varying"),
    # casts
    ("i4::bigint", "bigint"), ("txt::int", "integer"), ("i4::numeric", "numeric"),
    ("i4::double precision", "double precision"),
    ("i4::real", "real"), ("'2020-01-01'::date", "date"), ("txt::boolean", "boolean"),
    # date and time
    ("ts - ts", "interval"), ("dt + 1", "date"), ("ts + iv", "timestamp without time zone"),
    ("tstz + iv", "timestamp with time zone"), ("iv * 2", "interval"), ("now()", "timestamp with time zone"),
    ("date_trunc('day', ts)", "timestamp without time zone"), ("interval '1 day'", "interval"),
    # aggregates: sum of an integer is bigint, of a bigint numeric; avg of an integer numeric
    ("count(*)", "bigint"), ("count(i4)", "bigint"), ("sum(i4)", "bigint"), ("sum(i2)", "bigint"),
    ("sum(i8)", "numeric"), ("sum(num)", "numeric"), ("sum(d)", "double precision"), ("sum(r)", "real"),
    ("avg(i4)", "numeric"), ("avg(i8)", "numeric"), ("avg(d)", "double precision"), ("min(txt)", "character varying"),
    ("max(ts)", "timestamp without time zone"), ("bool_and(b)", "boolean"), ("count(distinct i4)", "bigint"),
    ("string_agg(txt, ',')", "character varying"), ("array_agg(i4)", "integer[]"), ("sum(iv)", "interval"),
    # window functions
    ("row_number() over (order by i4)", "bigint"), ("rank() over (order by i4)", "bigint"),
    ("lag(i4) over (order by i4)", "integer"), ("sum(i4) over (order by i4)", "bigint"),
    ("avg(i4) over (partition by i8)", "numeric"),
    # numeric / integer is numeric (DuckDB's own division is double precision)
    ("7.0 / 2", "numeric"), ("num / 2", "numeric"), ("num * num * num", "numeric"),
    # arrays
    ("arr[1]", "integer"), ("array[i4, i4]", "integer[]"),
    # jsonb: DuckDB's JSON, text in Arrow (marked as jsonb in results; kept when passed through)
    ("j", "jsonb"), ("j -> 'a'", "jsonb"), ("j ->> 'a'", "character varying"), ("to_jsonb(i4)", "jsonb"),
    ("jsonb_build_object('a', i4)", "jsonb"),
    # extract is numeric, date_part double precision (DuckDB: bigint)
    ("extract(year from ts)", "numeric"), ("extract(epoch from ts)", "numeric"),
    ("date_part('year', ts)", "double precision"),
    # variance and standard deviation: numeric for integers and numerics (DuckDB: double)
    ("stddev_samp(i4)", "numeric"), ("var_pop(num)", "numeric"), ("stddev_pop(d)", "double precision"),
]

TYPE_BUGS = {
    "dt - dt": "integer",  # DuckDB: bigint
    "length(txt)": "integer",  # DuckDB: bigint
    "ntile(2) over (order by i4)": "integer",  # DuckDB: bigint
}


@pytest.mark.parametrize("expr,expected", TYPES)
def test_batch_type(catalog, expr, expected):
    assert batch_types(catalog, f"select {expr} from n") == [expected]


@pytest.mark.parametrize("expr,expected", TYPES)
def test_stream_type(catalog, expr, expected):
    """A materialized view's column has the type a SELECT of the same expression has (NOW()
    in a select list is refused, as RisingWave's binder refuses it)."""
    if "now()" in expr:
        with pytest.raises(BindError, match=r"`NOW\(\)` function is only allowed in"):
            stream_types(catalog, f"select {expr} as x from n")
        return
    assert stream_types(catalog, f"select {expr} as x from n") == [expected]


@pytest.mark.xfail(strict=True, reason="types that differ from PostgreSQL's (DuckDB's result type leaks)")
@pytest.mark.parametrize("expr,expected", sorted(TYPE_BUGS.items()))
@pytest.mark.parametrize("path", ["batch", "stream"])
def test_type_differs_from_postgres(catalog, expr, expected, path):
    types = batch_types if path == "batch" else stream_types
    assert types(catalog, f"select {expr} as x from n") == [expected]


def test_stream_union_type_is_the_common_type(catalog):
    assert stream_types(catalog, "select k from t union all select i8 from n") == ["bigint"]


def test_batch_union_type_is_the_common_type(catalog):
    assert batch_types(catalog, "select k from t union all select i8 from n") == ["bigint"]


@pytest.mark.xfail(strict=True, reason="type names in messages are sqlglot's (`int`), not PostgreSQL's "
                   "(`integer`)")
@pytest.mark.parametrize("sql,message", [
    ("select d is unknown from n", "argument of IS UNKNOWN must be type boolean, not type double precision"),
    ('select i4 collate "C" from n', "collations are not supported by type integer"),
])
def test_type_names_in_messages(catalog, sql, message):
    with pytest.raises(BindError) as e:
        batch_sql(catalog, sql)
    assert e.value.message == message


def test_unknown_function_message(catalog):
    with pytest.raises(BindError) as e:
        stream_plan(catalog, "select nope(k) from t")
    assert e.value.message == "function nope(integer) does not exist"
