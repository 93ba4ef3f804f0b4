"""INSERT, UPDATE, DELETE on tables: the rows are computed as a batch query, then pushed
into the table's stream as one chunk, so every MV downstream sees the change."""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from rw_cli.common import numeric
from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.engine import duck
from rw_cli.common.numeric import NUMERIC_DUCKDB, is_numeric_arrow
from rw_cli.common.rust_decimal import NumericError
from rw_cli.common.types import DataType
from rw_cli.engine.chunk import DELETE, UPDATE_DELETE, UPDATE_INSERT, StreamChunk
from rw_cli.errors import BindError, CatalogError, ExecutionError, NotSupported, RwError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, ROW_ID, RW_TIMESTAMP, TABLE, RelationCatalog
from rw_cli.result import Result
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.cast_map import assignable
from rw_cli.sql.literal_insert import LiteralRows

from rw_cli.handler.query import run_query, run_query_on


def target_table(session, table: exp.Expression, action: str) -> RelationCatalog:
    """The table a DML statement changes; the session's user must hold `action` on it."""
    from rw_cli.handler.authz import require

    rel = session.catalog.get(session.catalog.qualified(table.name, table.text("db")))
    if rel is None:
        raise CatalogError(f'table "{table.name}" does not exist')
    if rel.kind in (MATERIALIZED_VIEW, INDEX):  # tables of their own, but kept by their job
        raise CatalogError(f'cannot change {rel.kind} "{rel.name}"', hint="only tables accept DML")
    if rel.kind != TABLE:  # RisingWave looks for a table of that name and finds none
        raise CatalogError(f"table not found: {rel.name}",
                           hint=f'"{rel.name}" is a {rel.kind}: only tables accept DML')
    require(session, rel, action)
    return rel


def _cast_sql(col: str, source: pa.DataType, target, depth: int = 0) -> str:
    """DuckDB's cast, but text and floats into numeric may be NaN or an infinity, text into
    jsonb is parsed as jsonb input (keys sorted as jsonb stores them), and a row goes into a
    struct column by position (PostgreSQL's record to composite type), at any depth and
    inside arrays."""
    if target.is_struct and pa.types.is_struct(source) and source.num_fields == len(target.inner):
        fields = ", ".join(
            f'"{name}" := ' + _cast_sql(f"struct_extract_at({col}, {i + 1})", source.field(i).type, t, depth + 1)
            for i, (name, t) in enumerate(zip(target.field_names, target.inner)))
        return f"CASE WHEN {col} IS NULL THEN NULL ELSE struct_pack({fields}) END"
    if target.is_list and (pa.types.is_list(source) or pa.types.is_large_list(source)) \
            and pa.types.is_struct(source.value_type):
        element = f"__e{depth}"
        return f"list_transform({col}, lambda {element}: " \
               f"{_cast_sql(element, source.value_type, target.inner[0], depth + 1)})"
    if target.is_map and not target.is_list and pa.types.is_map(source) and _has_struct(source.item_type):
        entry = f"__m{depth}"  # each entry's value cast as above (a row in it by position)
        value = _cast_sql(f"{entry}.value", source.item_type, target.inner[1], depth + 1)
        return (f"CASE WHEN {col} IS NULL THEN NULL ELSE map_from_entries(list_transform(map_entries({col}), "
                f"lambda {entry}: struct_pack(key := CAST({entry}.key AS {target.inner[0].duckdb()}), "
                f"value := {value}))) END")
    if target.name == "numeric":
        return numeric_from_sql(col, source)
    if is_numeric_arrow(source):
        return numeric_to_sql(col, target)
    if target.is_list and target.inner[0].name == "numeric":
        element = f"__n{depth}"
        if pa.types.is_string(source) or pa.types.is_large_string(source):
            col, source = f"CAST(pg_array_brackets({col}) AS VARCHAR[])", pa.list_(pa.string())
        if pa.types.is_list(source) or pa.types.is_large_list(source):
            return f"list_transform({col}, lambda {element}: {numeric_from_sql(element, source.value_type)})"
    if target.is_list and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"CAST(pg_array_brackets({col}) AS {target.duckdb()})"  # PostgreSQL's `{1, 2}`
    if target.name == "timestamp with time zone" and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"pg_timestamptz_in({col})"  # an offset after a space, as PostgreSQL reads it
    if target.name == "bytea" and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"pg_bytea_in({col})"  # `\\x` hex or escape format, as PostgreSQL reads bytea
    if target.name == "boolean" and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"pg_text_to_bool({col})"  # 'yes', 'on', ' t ', unique prefixes
    if target.name == "date" and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"pg_date_in({col})"  # YYYY-MM-DD only, as RisingWave reads a date
    if target.name == "jsonb" and (pa.types.is_string(source) or pa.types.is_large_string(source)):
        return f"CAST(pg_jsonb_in({col}) AS JSON)"  # checked, keys in jsonb's order
    return f"CAST({col} AS {target.duckdb()})"


def numeric_from_sql(col: str, source: pa.DataType) -> str:
    """DuckDB SQL making a numeric of a column of Arrow type `source` (rw_cli.sql.numeric_sql
    does it for typed SQL; here the type is Arrow's)."""
    if is_numeric_arrow(source):
        return col
    if pa.types.is_string(source) or pa.types.is_large_string(source):
        return f"rw_num_in({col})"
    if pa.types.is_integer(source) and source.bit_width <= 32 or pa.types.is_signed_integer(source):
        return f"rw_num_from_int({col})"
    if pa.types.is_float32(source):
        return f"rw_num_from_f32({col})"
    if pa.types.is_floating(source):
        return f"rw_num_from_f64({col})"
    if pa.types.is_decimal(source) or pa.types.is_integer(source):
        return f"rw_num_in(CAST({col} AS VARCHAR))"
    if pa.types.is_null(source):
        return f"CAST(NULL AS {NUMERIC_DUCKDB})"
    return f"CAST({col} AS {NUMERIC_DUCKDB})"  # DuckDB's error names the types


_FROM_NUMERIC = {"smallint": "rw_num_to_int2", "integer": "rw_num_to_int4", "bigint": "rw_num_to_int8",
                 "real": "rw_num_to_f32", "double precision": "rw_num_to_f64", "character varying": "rw_num_out"}


def numeric_to_sql(col: str, target) -> str:
    """DuckDB SQL casting a numeric column to `target` (an assignment cast: 0.25 into a double
    column, 888.88 into an integer one)."""
    fn = _FROM_NUMERIC.get(target.name)
    if fn is not None:
        return f"{fn}({col})"
    if target.name == "jsonb":
        return f"CAST(rw_num_jsonb({col}) AS JSON)"
    if target.name == "rw_int256":
        return f"CAST(rw_num_out(rw_num_round({col})) AS {target.duckdb()})"
    return f"CAST({col} AS {target.duckdb()})"  # DuckDB's error names the types


def _has_struct(t: pa.DataType) -> bool:
    """Whether an Arrow type has a struct in it (at any depth of lists and maps)."""
    if pa.types.is_struct(t):
        return True
    if pa.types.is_map(t):
        return _has_struct(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_struct(t.value_type)
    return False


# types whose values a cast to the same type leaves as they are: a column already of its
# target's Arrow type needs no cast query (a bulk load of a file typed like its table)
_IDENTITY_CAST_TYPES = frozenset(("boolean", "smallint", "integer", "bigint", "real", "double precision",
                                  "character varying", "date", "time without time zone",
                                  "timestamp without time zone"))


def _needs_cast(source: pa.DataType, target) -> bool:
    return not (target.name in _IDENTITY_CAST_TYPES and source == target.arrow())


def _check_assignable(src: DataType, target) -> None:
    """A value goes into a column only by an implicit or assignment cast (RisingWave's cast
    map): an integer into a boolean column needs an explicit one. Text is let through: it may
    be a quoted literal, which takes any column's type by its input function."""
    if src.name != "character varying" and assignable(src.name, target.name) is False:
        raise BindError(f'cannot cast type "{src.name}" to "{target.name}" in Assign context')


_INT_RANGES = {"smallint": (-(1 << 15), (1 << 15) - 1), "integer": (-(1 << 31), (1 << 31) - 1),
               "bigint": (-(1 << 63), (1 << 63) - 1)}


_PLAIN_INTEGER = r"^-?\d{1,18}$"
# (digits and exponents a double holds without overflow or underflow)
_PLAIN_FLOAT = r"^-?(?:\d{1,17}(?:\.\d{0,17})?|\.\d{1,17})(?:[eE][-+]?\d{1,2})?$"


# ISO dates and timestamps of years 1000-9999, as most text gives them (others: the DuckDB cast)
_PLAIN_TEMPORAL = {"date": r"^[1-9]\d{3}-\d{2}-\d{2}$",
                   "timestamp without time zone": r"^[1-9]\d{3}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)?$"}


def _arrow_cast(col, target) -> pa.ChunkedArray | pa.Array | None:
    """A column cast by Arrow where that is PostgreSQL's cast (no DuckDB query: a one-row
    INSERT spends more on the query than on its row): an integer column (or text of plain
    decimal integers) into an integer type that holds every value, or into a float type
    (rounded to nearest); text of plain decimal numbers into double precision, of ISO dates and
    timestamps into date and timestamp. None otherwise:
    the DuckDB cast, whose errors are PostgreSQL's. Text and doubles into numeric: a column
    at a time (`numeric.parse_texts`, `from_f64_column`; a DuckDB query would call their UDFs
    per 2048 rows)."""
    if pa.types.is_float64(col.type) and target.name == "numeric" and len(col):
        try:
            return numeric.from_f64_column(col)
        except NumericError:  # the DuckDB cast words it as PostgreSQL does
            return None
    if (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) and target.name == "numeric":
        if not len(col):
            return None
        try:
            return numeric.parse_texts(col)
        except NumericError:  # the DuckDB cast words it as PostgreSQL does
            return None
    if (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) and target.name in _PLAIN_TEMPORAL:
        if not len(col) or col.null_count == len(col):
            return None
        if not pc.all(pc.match_substring_regex(col, _PLAIN_TEMPORAL[target.name])).as_py():
            return None
        try:
            return pc.cast(col, target.arrow())
        except pa.ArrowInvalid:  # no such day (2024-02-30): the DuckDB cast says so
            return None
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        floats = target.name == "double precision"  # (text into real: rounded once, by the DuckDB cast)
        if not (floats or target.name in _INT_RANGES) or not len(col) or col.null_count == len(col):
            return None
        plain = pc.match_substring_regex(col, _PLAIN_FLOAT if floats else _PLAIN_INTEGER)
        if not pc.all(plain).as_py():
            return None
        col = pc.cast(col, pa.float64() if floats else pa.int64())
        if floats:
            return pc.cast(col, target.arrow(), safe=False)
    if not pa.types.is_integer(col.type):
        return None
    if target.name in ("real", "double precision"):
        return pc.cast(col, target.arrow(), safe=False)
    bounds = _INT_RANGES.get(target.name)
    if bounds is None or pa.types.is_uint64(col.type):
        return None
    lo_hi = pc.min_max(col)
    lo, hi = lo_hi["min"].as_py(), lo_hi["max"].as_py()
    if lo is not None and (lo < bounds[0] or hi > bounds[1]):
        return None
    return pc.cast(col, target.arrow(), safe=False)


def cast_to(data: pa.Table, rel: RelationCatalog, indices: list[int]) -> list[pa.Array]:
    """Cast each column to its target column's type with PostgreSQL's cast rules (DuckDB);
    columns already of their target's type are taken as they are."""
    cols = [data.column(i) for i in range(len(indices))]
    for i, j in enumerate(indices):
        _check_assignable(DataType.from_field(data.schema.field(i)), rel.columns[j].type)
    todo = [i for i, j in enumerate(indices) if _needs_cast(data.schema.field(i).type, rel.columns[j].type)]
    for i in list(todo):
        cast = _arrow_cast(cols[i], rel.columns[indices[i]].type)
        if cast is not None:
            cols[i] = cast
            todo.remove(i)
    if todo:
        exprs = [_cast_sql(f"_{i}", data.schema.field(i).type, rel.columns[indices[i]].type) for i in todo]
        named = pa.Table.from_arrays([cols[i] for i in todo], names=[f"_{i}" for i in todo])
        out = duck.eval_exprs(named, exprs)  # its error names the value and the type, as PostgreSQL's does
        for k, i in enumerate(todo):
            cols[i] = out.column(k)
    return [numeric.cast(c, rel.columns[j].type.arrow()) for c, j in zip(cols, indices)]


def handle_insert(session, tree: exp.Insert) -> Result:
    target = tree.this
    rel = target_table(session, target.this if isinstance(target, exp.Schema) else target, "INSERT")
    if isinstance(tree.expression, LiteralRows):
        done = _insert_literal_rows(session, rel, tree)
        if done is not None:
            return done
        meta = tree.expression.meta  # a cell the fast path does not convert: the parser's way
        return handle_insert(session, parse_statement(meta["text"], meta["offset"], literal_rows=False))
    if isinstance(tree.expression, exp.Values):
        target = _take_defaults(rel, target, tree.expression)
    indices = _target_indices(rel, target)
    source = tree.expression
    if isinstance(source, exp.Values):
        _type_text_literals(source, [rel.columns[i].type for i in indices])
        source = exp.select("*").from_(exp.Subquery(this=source, alias=exp.TableAlias(this=exp.to_identifier("v"))))
    data, types = run_query(session, source)
    for t, j in zip(types, indices):  # (the query's types: Arrow holds a jsonb as text)
        _check_assignable(t, rel.columns[j].type)
    if data.num_columns > len(indices):
        raise BindError("INSERT has more expressions than target columns")
    if data.num_columns < len(indices):
        if isinstance(target, exp.Schema):
            raise BindError("INSERT has more target columns than expressions")
        indices = indices[: data.num_columns]
    if not isinstance(target, exp.Schema):
        _no_generated_values(rel, indices)
    inserted = []
    n = insert_rows(session, rel, data, indices, inserted)
    return _returning(session, rel, tree, inserted[0] if inserted else None, f"INSERT 0 {n}")


def _target_indices(rel: RelationCatalog, target: exp.Expression) -> list[int]:
    """The columns an INSERT names (`INSERT INTO t (a, b)`), or all visible ones."""
    if not isinstance(target, exp.Schema):
        return [i for i, c in enumerate(rel.columns) if not c.hidden]
    names = [e.name for e in target.expressions]
    for n in names:
        if not any(c.name == n and not c.hidden for c in rel.columns):
            raise BindError(f'column "{n}" of relation "{rel.name}" does not exist')
        if any(c.name == n and c.generated for c in rel.columns):
            raise BindError(f'cannot insert a non-DEFAULT value into column "{n}"',
                            hint=f'Column "{n}" is a generated column.')
    if len(set(names)) != len(names):
        raise BindError("column specified more than once")
    return [rel.column_index(n) for n in names]


# (kind of a VALUES column's literals, target type) pairs converted here; others take the
# parser's way. Strings take the target type's input function (COPY's cast), numbers the
# assignment cast of an integer (any number type, or text) or of a numeric (floats, numeric).
_LITERAL_TARGETS = {
    "int": lambda t: t.is_numeric or t.name in ("real", "double precision", "character varying"),
    "num": lambda t: t.name in ("real", "double precision", "numeric"),
    "bool": lambda t: t.name == "boolean",
    "str": lambda t: True,
    "null": lambda t: True,
}


def _insert_literal_rows(session, rel: RelationCatalog, tree: exp.Insert) -> Result | None:
    """INSERT of literal rows read without the parser (rw_cli.sql.literal_insert): each
    column converted to its target's type as a column, not a cell at a time. None when a
    column is not of a pair this converts, or a value does not convert: the parser's way then
    gives the statement its own result or error."""
    target = tree.this
    indices = _target_indices(rel, target)
    columns = tree.expression.meta["columns"]
    if len(columns.columns) > len(indices) or (isinstance(target, exp.Schema) and len(columns.columns) < len(indices)):
        return None  # the parser's way words the error
    indices = indices[:len(columns.columns)]
    if not isinstance(target, exp.Schema):
        _no_generated_values(rel, indices)
    arrays = []
    for (kind, values), j in zip(columns.columns, indices):
        t = rel.columns[j].type
        if kind.startswith("cast:"):  # a typed parameter of the column's own type: its text's input
            if kind[5:] != t.name:
                return None
        elif not _LITERAL_TARGETS[kind](t):
            return None
        if kind == "null":
            values = pa.nulls(len(values), t.arrow())
        elif kind == "num" and t.name != "numeric":
            try:  # (+ 0.0: a numeric has no -0)
                values = pc.add(pc.cast(values, pa.float64()), 0.0)
            except pa.ArrowInvalid:
                return None
            if not pc.all(pc.is_finite(values)).as_py():  # beyond double's range: PostgreSQL's error
                return None
        arrays.append(values)
    data = pa.Table.from_arrays(arrays, names=[f"_{k}" for k in range(len(arrays))])
    try:
        rows = table_rows(session, rel, data, indices)
    except RwError:
        return None
    _push_rows(session, rel, rows)
    return Result(f"INSERT 0 {data.num_rows}")


def _take_defaults(rel: RelationCatalog, target: exp.Expression, values: exp.Values) -> exp.Expression:
    """`VALUES (1, DEFAULT)`: a column DEFAULT in every row leaves the list (it is filled as
    an unlisted column is: its default, or its generation expression); a DEFAULT in some rows
    only becomes the column's default expression there (NULL without one). Returns the
    target, its column list narrowed; `values` is changed in place."""
    rows = [r.expressions if isinstance(r, exp.Tuple) else [r] for r in values.expressions]
    if not any(_is_default(v) for row in rows for v in row):
        return target
    if isinstance(target, exp.Schema):
        table, columns = target.this, [rel.columns[rel.column_index(e.name)] if any(
            c.name == e.name and not c.hidden for c in rel.columns) else None for e in target.expressions]
    else:
        table, columns = target, [c for c in rel.columns if not c.hidden]
    width = min(len(r) for r in rows)
    dropped = {j for j in range(min(width, len(columns))) if all(_is_default(r[j]) for r in rows)}
    if len(dropped) == len(rows[0]):  # every cell DEFAULT: one column stays, its default written out
        dropped.discard(next((j for j in sorted(dropped) if columns[j] is not None and not columns[j].generated),
                             min(dropped)))
    for row in rows:
        for j, v in enumerate(row):
            if j not in dropped and _is_default(v) and j < len(columns) and columns[j] is not None:
                if columns[j].generated:
                    raise BindError(f'cannot insert a non-DEFAULT value into column "{columns[j].name}"',
                                    hint=f'Column "{columns[j].name}" is a generated column.')
                v.replace(_default_value(columns[j]))
    if not dropped:
        return target
    for r in values.expressions:
        if isinstance(r, exp.Tuple):
            r.set("expressions", [v for j, v in enumerate(r.expressions) if j not in dropped])
    kept = [exp.to_identifier(c.name) for j, c in enumerate(columns) if j not in dropped and c is not None]
    return exp.Schema(this=table, expressions=kept)


def _no_generated_values(rel: RelationCatalog, indices: list[int]) -> None:
    """A positional INSERT fills the columns in order, generated ones too (PostgreSQL): a
    value that lands on a generated column is an error, not a skip to the next column."""
    for i in indices:
        c = rel.columns[i]
        if c.generated:
            raise BindError(f'cannot insert a non-DEFAULT value into column "{c.name}"',
                            hint=f'Column "{c.name}" is a generated column.')


def insert_data(session, table: str, data) -> int:
    """`Session.insert`: rows from Python (Arrow, pandas, polars or a dict of lists) into
    `table`, its columns matched by name."""
    rel = target_table(session, exp.to_table(table), "INSERT")
    arrow = _as_arrow(data)
    indices = []
    for name in arrow.column_names:
        j = next((k for k, c in enumerate(rel.columns) if c.name == name and not c.hidden), None)
        if j is None:
            raise BindError(f'column "{name}" of relation "{rel.name}" does not exist')
        if rel.columns[j].generated:
            raise BindError(f'cannot insert a non-DEFAULT value into column "{name}"',
                            hint=f'Column "{name}" is a generated column.')
        indices.append(j)
    if len(set(indices)) != len(indices):
        raise BindError("column specified more than once")
    return insert_rows(session, rel, arrow, indices,
                       where=lambda row, column, value: f"Session.insert into {rel.name}, row {row} "
                                                        f"(counting from 0), column {column}: {value!r}")


def _as_arrow(data) -> pa.Table:
    """An Arrow table of what Python handed over, without a copy where Arrow allows."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, dict):
        return pa.table(data)
    module = type(data).__module__.split(".")[0]
    if module == "polars":
        return data.to_arrow()
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):  # any Arrow PyCapsule producer (DuckDB, ...)
        return pa.table(data)
    raise BindError(f"cannot insert a {type(data).__name__}",
                    hint="pass a pyarrow Table or RecordBatch, a pandas or polars DataFrame, or a dict of lists")
def _type_text_literals(values: exp.Values, types: list) -> None:
    """A quoted literal in INSERT ... VALUES has no type of its own: it takes its target
    column's (PostgreSQL coerces each VALUES cell to the column). Done here for numeric
    columns, where a row of numbers would otherwise make the literal an integer
    (`VALUES (1), ('100000000000000000000')` into rw_int256 or numeric); and a number for a
    text column is its text (`VALUES (1), ('hello')` into varchar: PostgreSQL assigns each cell
    to the column, where a common type of the VALUES column would make 'hello' a number)."""
    from rw_cli.sql.transpile import sqlglot_type

    for row in values.expressions:
        cells = row.expressions if isinstance(row, exp.Tuple) else [row]
        for cell, t in zip(cells, types):
            number = cell.this if isinstance(cell, exp.Neg) else cell
            if (isinstance(cell, exp.Literal) and cell.is_string and t.is_numeric) \
                    or (isinstance(number, exp.Literal) and number.is_number and t.name == "character varying"):
                # (numeric as the parser types `::numeric`: DuckDB's dialect would make it decimal(18,3))
                to = exp.DataType(this=exp.DataType.Type.DECIMAL) if t.name == "numeric" else \
                    exp.DataType.build(sqlglot_type(t), dialect=duckdb_dialect())
                cell.replace(exp.Cast(this=cell.copy(), to=to))


def _returning(session, rel: RelationCatalog, tree: exp.Expression, rows: pa.Table | None, status: str) -> Result:
    """`... RETURNING exprs`: the expressions over the rows the statement wrote."""
    ret = tree.args.get("returning")
    if ret is None:
        return Result(status)
    from rw_cli.handler.query import run_query_on

    exprs = ret.expressions if isinstance(ret, exp.Returning) else [ret]
    q = exp.select(*[e.copy() for e in exprs]).from_(_source(session, rel, tree.this))
    if rows is None:
        from rw_cli.stream.builder import relation_schema

        rows = relation_schema(rel).empty_table()
    table, types = run_query_on(session, q, {rel.id: rows})
    return Result(status, table, types)


def insert_rows(session, rel: RelationCatalog, data: pa.Table, indices: list[int],
                written: list | None = None, where: Callable[[int, str, object], str] | None = None) -> int:
    """Insert rows given for the columns at `indices`: the others get their DEFAULT (or NULL),
    a hidden `_row_id` gets fresh ids; values are cast to the column types. A load (`where`:
    its words for a row, a column and a value, as the error's context) that holds a value
    its column refuses fails naming the first such one, and writes nothing."""
    try:
        table = table_rows(session, rel, data, indices)
    except RwError as e:
        # (a BindError is about a whole column's type, no value of it)
        bad = first_bad_value(rel, data, indices) if where is not None and not isinstance(e, BindError) else None
        if bad is None:
            raise
        row, j, value, error = bad
        raise type(error)(error.message, hint=error.hint, context=where(row, rel.columns[j].name, value)) from None
    if written is not None:
        written.append(table)
    _push_rows(session, rel, table)
    return data.num_rows


def _push_rows(session, rel: RelationCatalog, rows: pa.Table) -> None:
    """New whole rows of `rel` into its stream."""
    if rows.num_rows:
        push_cancellable(session, rel, StreamChunk.inserts(rows))
        session.after_write()


def table_rows(session, rel: RelationCatalog, data: pa.Table, indices: list[int], check: bool = True) -> pa.Table:
    """Whole rows of `rel` (named as its columns) from values for the columns at `indices`:
    the others get their DEFAULT (or NULL), a hidden `_row_id` fresh ids, generated columns
    their values; values cast to the column types, NOT NULL checked unless not `check` (a
    sink's rows: its TableSinkExecutor drops those with a NULL there instead)."""
    cols = cast_to(data, rel, indices)
    n = data.num_rows
    full = []
    for j, c in enumerate(rel.columns):
        if j in indices:
            full.append(cols[indices.index(j)])
        elif c.name == ROW_ID and c.hidden:
            full.append(pa.array(session.row_ids.take(n)))
        elif c.default is not None:
            full.append(_default_column(c, n))
        else:
            full.append(pa.nulls(n, c.type.arrow()))
    table = with_generated(rel, pa.Table.from_arrays(full, names=[c.name for c in rel.columns]))
    if check:
        check_not_null(rel, table)
    return table


def first_bad_value(rel: RelationCatalog, data: pa.Table, indices: list[int]) -> tuple[int, int, object, RwError] | None:
    """(row, target column, value, error) of the first value of `data` (in row order, then
    column order, as PostgreSQL reports a load's first bad field) that its column refuses: its
    cast fails, or it is NULL in a NOT NULL column. None when every value is accepted. Casts
    stay whole columns: the row is found by halving, only after the whole load failed."""
    def refused(rows: pa.Table, ks: list[int]) -> RwError | None:
        try:
            cols = cast_to(rows.select(ks), rel, [indices[k] for k in ks])
            for k, col in zip(ks, cols):
                if rel.columns[indices[k]].not_null and col.null_count:
                    raise ExecutionError(f'null value in column "{rel.columns[indices[k]].name}" of relation '
                                         f'"{rel.name.rpartition(".")[2]}" violates not-null constraint')
        except RwError as e:
            return e
        return None

    every = list(range(len(indices)))
    if not data.num_rows or refused(data, every) is None:
        return None
    lo, hi = 0, data.num_rows  # the first refused row is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(data.slice(lo, mid - lo), every) is not None:
            hi = mid
        else:
            lo = mid
    row = data.slice(lo, 1)
    for k in every:
        error = refused(row, [k])
        if error is not None:
            return lo, indices[k], row.column(k)[0].as_py(), error
    return None


def check_not_null(rel: RelationCatalog, rows: pa.Table) -> None:
    """Refuse whole rows of `rel` with a NULL in a NOT NULL column, before any reaches the
    stream (an INSERT's and an UPDATE's new rows alike); RisingWave accepts NULL in primary
    key columns not declared NOT NULL."""
    for k, c in enumerate(rel.columns):
        if c.not_null and rows.column(k).null_count:
            raise ExecutionError(f'null value in column "{c.name}" of relation "{rel.name.rpartition(".")[2]}" '
                                 f"violates not-null constraint")


PUSH_ROWS = 1 << 18  # a large write reaches the stream in pieces of this many rows


def push_cancellable(session, rel: RelationCatalog, chunk: StreamChunk, first: bool = True) -> None:
    """Hand a statement's changes to the stream so that Ctrl-C leaves no trace of it: a
    cancel asked for before this point stops the statement before any change; a large write
    starts an epoch of its own (earlier writes go to the one before) and goes in pieces, and
    a cancel between pieces rolls that epoch back to the last commit. `first=False` for a
    statement's later pushes (TRUNCATE of several tables): they share its epoch."""
    from rw_cli.common.progress import cancel_requested, check_cancel

    check_cancel()
    n = len(chunk)
    if n <= PUSH_ROWS:
        session.runtime.push(rel.id, chunk)
        return
    if session.dirty and first:
        session.barrier()
    for start in range(0, n, PUSH_ROWS):
        if cancel_requested():
            session.roll_back_uncommitted()
            check_cancel()
        session.runtime.push(rel.id, StreamChunk(chunk.data.slice(start, PUSH_ROWS), chunk.ops[start:start + PUSH_ROWS],
                                                 chunk.stored))
        session.dirty = True


def generated_values(columns, data: pa.Table) -> dict[str, pa.Array]:
    """The generated columns' values (`col type AS expr`) over rows of the other columns."""
    from rw_cli.sql.transpile import sqlglot_type, to_duckdb

    gen = [c for c in columns if c.generated]
    if not gen:
        return {}
    names = [c.name for c in columns if not c.generated and c.name in data.column_names]
    q = parse_statement("SELECT " + ", ".join(f"CAST(({c.generated}) AS {sqlglot_type(c.type)})" for c in gen)
                        + " FROM __gen")
    schema = {"__gen": {n: sqlglot_type(next(c.type for c in columns if c.name == n)) for n in names}}
    out = duck.query(to_duckdb(q, schema), {"__gen": data.select(names)})
    return {c.name: numeric.cast(out.column(i).combine_chunks(), c.type.arrow()) for i, c in enumerate(gen)}


def with_generated(rel: RelationCatalog, table: pa.Table) -> pa.Table:
    """`table` (every column of `rel`) with its generated columns computed."""
    values = generated_values(rel.columns, table)
    for name, col in values.items():
        table = table.set_column(table.column_names.index(name), name, col)
    return table


def _default_column(c, n: int) -> pa.Array:
    from rw_cli.sql.transpile import sqlglot_type, to_duckdb

    expr = parse_statement(f"SELECT CAST(({c.default}) AS {sqlglot_type(c.type)})")
    value = numeric.cast(duck.query(to_duckdb(expr, {})).column(0), c.type.arrow())
    return pa.concat_arrays([value.combine_chunks()] * n) if n else pa.nulls(0, c.type.arrow())


def _source(session, rel: RelationCatalog, target: exp.Expression | None) -> exp.Table:
    """`rel` as a FROM item, under the alias the statement gave its target (`UPDATE t AS x`)."""
    table = relation_table(session.catalog, rel).copy()
    if isinstance(target, exp.Schema):  # INSERT INTO t AS x (a, b)
        target = target.this
    alias = target.args.get("alias") if isinstance(target, exp.Table) else None
    if alias is not None:
        table.set("alias", alias.copy())
    return table


def relation_table(catalog, rel: RelationCatalog) -> exp.Table:
    """A relation as a table a query names it by: `schema.name` for one of a schema, else its
    name whole (a table named "a.b" in public is not table b of a schema a). Don't modify it:
    a driver's single-row UPDATEs and DELETEs name the same table thousands of times, and
    building it cost a tenth of each; copy it."""
    schema, dot, name = rel.name.partition(".")
    if dot and schema in catalog.schemas:
        return _table_of(name, schema)
    return _table_of(rel.name, None)


@functools.lru_cache(maxsize=256)
def _table_of(name: str, schema: str | None) -> exp.Table:
    return exp.table_(exp.to_identifier(name, quoted=True), db=None if schema is None else
                      exp.to_identifier(schema, quoted=True))


def _matching_rows(session, rel: RelationCatalog, where: exp.Expression | None,
                   extra: list[exp.Expression] | None = None, target: exp.Expression | None = None) -> pa.Table:
    """The rows a DELETE/UPDATE changes (every column, hidden ones too), then the `extra`
    expressions over them, as the session sees the table (its own writes included). A WHERE
    binding the primary key fetches just those rows from the table's state; any other
    reads a snapshot of the table."""
    q = exp.Select(expressions=[exp.Star()]).from_(_source(session, rel, target), copy=False)
    for e in extra or []:
        q = q.select(e, append=True)
    if where is not None:
        q = q.where(where.this, copy=False)  # (a copy of a long IN list costs more than the lookup)
    looked_up = _rows_by_pk(session, rel, q)
    if looked_up is not None:
        rows, whole_where = looked_up
        if whole_where and not extra:
            return rows  # the rows are the answer: no DuckDB
        if whole_where:
            q.set("where", None)  # already applied: the query computes `extra` only
        return _run_on_rows(session, rel, q, rows)
    table, _ = run_query(session, q, committed=False, hidden=True)
    return table


def _run_on_rows(session, rel: RelationCatalog, q: exp.Select, rows: pa.Table) -> pa.Table:
    """`q` (over `rel`, hidden columns visible) run on `rows`; bound once for every statement
    of the same shape (`UPDATE t SET v = v + 1 WHERE id = <each key>` binds its SET list once:
    binding costs more than running it on a row), like a SELECT run again (handler.prepared)."""
    from rw_cli.handler import prepared
    from rw_cli.handler.query import bind, run_bound

    text = "-- rows of a DML statement\n" + repr(q)
    bound = prepared.find(session, text)
    if bound is None:
        bound = bind(session, q, hidden=True)
        prepared.remember(session, text, bound)
    table, _ = run_bound(session, bound, {rel.id: rows}, committed=False, hidden=True)
    return table


def _rows_by_pk(session, rel: RelationCatalog, q: exp.Select) -> tuple[pa.Table, bool] | None:
    """When `q`'s WHERE binds every pk column of `rel` (`pk = c`, `pk IN (c, ...)`, `pk IN
    (SELECT ...)`): the rows of those pks (in pk order) and whether the pk constraints are
    the whole WHERE. When it bounds a key range (`pk < c`, `pk BETWEEN a AND b`, the first
    columns of a pk): the rows in that range, a superset the WHERE still filters. None when
    it does neither, or when there are so many keys that one scan of the table is cheaper."""
    from rw_cli.handler.point_lookup import MAX_KEYS, fetch, lookup_plan
    from rw_cli.handler.row_order import pk_order

    live = session.runtime.live_table(rel.id)
    if live is None or q.args.get("where") is None:
        return None

    def few(n: int) -> bool:
        """Whether `n` keys are worth looking up one by one (a quarter of the table at most)."""
        if n <= MAX_KEYS:
            return True
        from rw_cli.handler.query import estimate_rows

        return n <= (estimate_rows(session.store, rel.id) or 0) // 4

    def subquery(sub: exp.Expression) -> pa.Array | None:
        query = sub.this if isinstance(sub, exp.Subquery) else sub
        try:  # a correlated subquery does not run alone: the general path runs it
            values, _ = run_query(session, query.copy(), committed=False, hidden=True)
        except RwError:
            return None
        if values.num_columns != 1 or not few(values.num_rows):
            return None
        return values.column(0).combine_chunks()

    plan = lookup_plan(q, session.catalog, subquery, max_keys=1 << 62)
    if plan is None or plan[0].id != rel.id:
        return _rows_in_range(session, rel, q, live)
    _, lists, used = plan
    if not few(int(np.prod([len(v) for v in lists]))):
        return None

    where = q.args["where"].this
    conjuncts = list(where.flatten()) if isinstance(where, exp.And) else [where]
    return pk_order(fetch(session, rel, lists, live), rel), used == len(conjuncts)


def _rows_in_range(session, rel: RelationCatalog, q: exp.Select, live) -> tuple[pa.Table, bool] | None:
    """When `q`'s WHERE bounds a key range of `rel`'s pk (`pk < c`, `pk BETWEEN`, a pk's
    first columns) or of an index on it (`email = 'x'`, `email IN (...)`, `email > 'm'`;
    one whose job holds this epoch's writes too): the rows in that range (in pk order), and
    whether the range is the whole WHERE."""
    from rw_cli.handler.index_lookup import key_ranges, prefers_index, read_index_range
    from rw_cli.handler.point_lookup import fetch_range
    from rw_cli.handler.row_order import pk_order

    own, index = key_ranges(q, session.catalog)
    if prefers_index(own, index) and index.rel.id == rel.id:
        live_index = session.runtime.live_table_in_step(index.index.id)
        rows = None if live_index is None else read_index_range(session, index, live_index, live)
        if rows is not None:
            return pk_order(rows, rel), index.exact
    if own is None or own.rel.id != rel.id:
        return None
    return pk_order(fetch_range(own, live), rel), own.exact


def _not_append_only(rel: RelationCatalog, what: str) -> None:
    if rel.append_only:
        raise ExecutionError(f'{what} on append-only table "{rel.name}" is not allowed',
                             hint="an APPEND ONLY table accepts INSERT only")


def handle_delete(session, tree: exp.Delete) -> Result:
    rel = target_table(session, tree.this, "DELETE" if isinstance(tree, exp.Delete) else "UPDATE")
    _not_append_only(rel, "DELETE")
    rows = _matching_rows(session, rel, tree.args.get("where"), target=tree.this)
    rows = rows.select(list(range(len(rel.columns))))
    if rows.num_rows:
        # (the rows as the table holds them, each key once: its materialize looks nothing up)
        push_cancellable(session, rel, StreamChunk(_positional(rows, rel), np.full(rows.num_rows, DELETE, np.int8),
                                                   stored=True))
        session.after_write()
    return _returning(session, rel, tree, rows, f"DELETE {rows.num_rows}")


def handle_truncate(session, tree: exp.TruncateTable) -> Result:
    """TRUNCATE [TABLE] t [, ...]: every row of each table deleted in one epoch, so the MVs
    over them follow; every table is checked before any is changed."""
    if tree.args.get("is_database"):
        raise NotSupported("TRUNCATE DATABASE")
    rels = [target_table(session, t, "DELETE") for t in tree.expressions]
    for rel in rels:
        _not_append_only(rel, "TRUNCATE")
    first = True
    for rel in rels:
        rows = _matching_rows(session, rel, None).select(list(range(len(rel.columns))))
        if rows.num_rows:
            push_cancellable(session, rel, StreamChunk(_positional(rows, rel), np.full(rows.num_rows, DELETE, np.int8)),
                             first=first)
            first = False
    session.after_write()
    return Result("TRUNCATE TABLE")


def handle_update(session, tree: exp.Update) -> Result:
    rel = target_table(session, tree.this, "DELETE" if isinstance(tree, exp.Delete) else "UPDATE")
    _not_append_only(rel, "UPDATE")
    sets: dict[int, exp.Expression] = {}
    for column, value in _assignments(tree.expressions):
        if column.name == RW_TIMESTAMP:  # a system column: every table has it, none sets it
            raise BindError(f"update modifying column `{RW_TIMESTAMP}` is unsupported")
        idx = rel.column_index(column.name)
        if rel.columns[idx].hidden:
            raise BindError(f'column "{column.name}" does not exist')
        if rel.columns[idx].generated and _is_default(value):
            continue  # computed again from the row, as always
        if rel.columns[idx].generated:
            raise BindError(f'update modifying the generated column is unsupported: column "{column.name}" '
                            f"can only be updated to DEFAULT",
                            hint=f'Column "{column.name}" is a generated column.')
        if idx in sets:
            raise BindError(f'multiple assignments to the same column "{column.name}"')
        if rel.user_pk and idx in rel.pk:  # RisingWave's binder: a key never moves by UPDATE
            raise BindError("update modifying the PK column is unsupported")
        if rel.user_pk and _feeds_generated_pk(rel, column.name):
            raise BindError("update modifying the column referenced by generated columns that are part of "
                            "the primary key is not allowed")
        if _text_subquery(value) and rel.columns[idx].type.name != "character varying":
            # a sub-select's text is varchar, which only an explicit cast turns into another type
            raise BindError(f'cannot cast type "character varying" to "{rel.columns[idx].type.name}" '
                            "in Assign context")
        sets[idx] = _default_value(rel.columns[idx]) if _is_default(value) else value
    simple = _simple_sets(list(sets.values()), [rel.columns[i].type for i in sets], rel, tree.this)
    where = tree.args.get("where")

    def computed() -> list[exp.Expression]:
        return [exp.alias_(e, f"__new_{i}") for i, e in enumerate(sets.values())]
    rows = _matching_rows(session, rel, where, [] if simple is not None else computed(), target=tree.this)
    n = rows.num_rows
    if n == 0:
        return _returning(session, rel, tree, None, "UPDATE 0")
    width = len(rel.columns)
    old = rows.select(list(range(width)))
    newvals = _simple_values(simple, rel, list(sets), old) if simple is not None else None
    if newvals is None:
        if simple is not None:  # an integer overflowed: the query computes the values (and words the error)
            rows = _matching_rows(session, rel, where, computed(), target=tree.this)
            old = rows.select(list(range(width)))
        newvals = cast_to(rows.select(list(range(width, rows.num_columns))), rel, list(sets))
    new_cols = list(old.columns)
    for (idx, _), col in zip(sets.items(), newvals):
        new_cols[idx] = col
    new = with_generated(rel, pa.Table.from_arrays(new_cols, names=old.column_names))
    check_not_null(rel, new)
    both = pa.concat_tables([_positional(old, rel), _positional(new, rel)])
    # each row's U- then its U+ (the key never changes: the binder refused that), pieces of
    # the push split between pairs, never in one
    order = np.argsort(np.concatenate([np.arange(n) * 2, np.arange(n) * 2 + 1]), kind="stable")
    ops = np.concatenate([np.full(n, UPDATE_DELETE), np.full(n, UPDATE_INSERT)]).astype(np.int8)[order]
    push_cancellable(session, rel, StreamChunk(both.take(pa.array(order)), ops))
    session.after_write()
    return _returning(session, rel, tree, new, f"UPDATE {n}")


def _simple_sets(values: list[exp.Expression], types: list[DataType], rel: RelationCatalog,
                 target: exp.Expression) -> list[tuple] | None:
    """The SET values (for columns of `types`) when each is a literal (`_constant`) or an
    integer column of the row plus, minus or times an integer literal (`n = n + 1`):
    ("const", a one-value array) or ("arith", pyarrow's checked kernel, column index, value)
    each, computed without a query (`_simple_values`). None when some value is more."""
    names = {c.name: i for i, c in enumerate(rel.columns) if not c.hidden}
    alias = target.alias_or_name if isinstance(target, exp.Table) else rel.name
    out: list[tuple] = []
    for v, t in zip(values, types):
        while isinstance(v, exp.Paren):
            v = v.this
        op, col = _ARITH.get(type(v)), v.this
        if op is not None and isinstance(col, exp.Column) and col.table in ("", alias) \
                and col.name in names and rel.columns[names[col.name]].type.is_integer:
            lit = _constant(v.expression, None)
            if lit is None or not pa.types.is_integer(lit.type):
                return None
            out.append(("arith", op, names[col.name], lit[0].as_py()))
            continue
        lit = _constant(v, t)
        if lit is None:
            return None
        out.append(("const", None, None, lit))
    return out


_ARITH = {exp.Add: pc.add_checked, exp.Sub: pc.subtract_checked, exp.Mul: pc.multiply_checked}


def _simple_values(simple: list[tuple], rel: RelationCatalog, indices: list[int], old: pa.Table) -> list | None:
    """The new values of `_simple_sets` for the rows `old`, cast to their columns (the
    assignment casts, as for the query's answer); None when an integer overflows."""
    n = old.num_rows
    cols = []
    for kind, op, j, v in simple:
        if kind == "const":
            cols.append(v)
            continue
        c = old.column(j)
        try:
            cols.append(op(c, pa.scalar(v, c.type)).combine_chunks() if isinstance(c, pa.ChunkedArray)
                        else op(c, pa.scalar(v, c.type)))
        except (pa.ArrowInvalid, OverflowError):
            return None
    one = [i for i, (kind, *_) in enumerate(simple) if kind == "const"]
    if one:  # each constant once, then one per row
        consts = cast_to(pa.Table.from_arrays([cols[i] for i in one], names=[f"_{i}" for i in one]), rel,
                         [indices[i] for i in one])
        zeros = pa.array(np.zeros(n, dtype=np.int64))
        for i, c in zip(one, consts):
            cols[i] = c.take(zeros)
    rest = [i for i in range(len(simple)) if i not in one]
    if rest:
        cast = cast_to(pa.Table.from_arrays([cols[i] for i in rest], names=[f"_{i}" for i in rest]), rel,
                       [indices[i] for i in rest])
        for i, c in zip(rest, cast):
            cols[i] = c
    return cols


def _constant(v: exp.Expression, t: DataType | None) -> pa.Array | None:
    """`5`, `'x'`, `NULL`, `TRUE` (ORMs and drivers send values as such; a bound parameter
    comes as `CAST('5' AS bigint)`) as a one-value array typed as DuckDB types that literal (an
    integer, text, a boolean; NULL of no type; a parameter of the column type `t` is its
    text, which that type's input reads), so that the assignment casts treat it as they
    would the DuckDB query's answer, which is not run. None for anything else."""
    while isinstance(v, exp.Paren):
        v = v.this
    if isinstance(v, exp.Cast) and t is not None and isinstance(v.this, (exp.Literal, exp.Null)) \
            and (isinstance(v.this, exp.Null) or v.this.is_string) and _cast_type(v) == t.name:
        v = v.this
    neg = isinstance(v, exp.Neg)
    lit = v.this if neg else v
    if isinstance(v, exp.Null):
        return pa.nulls(1, pa.null())
    if isinstance(v, exp.Boolean):
        return pa.array([v.this], pa.bool_())
    if isinstance(lit, exp.Literal) and lit.is_string and not neg:
        return pa.array([lit.this], pa.string())
    if isinstance(lit, exp.Literal) and lit.is_int and -(1 << 63) <= int(lit.this) < (1 << 63):
        value = -int(lit.this) if neg else int(lit.this)
        return pa.array([value], pa.int32() if -(1 << 31) <= value < (1 << 31) else pa.int64())
    return None


def _cast_type(cast: exp.Cast) -> str | None:
    """The name of the type a CAST makes (None: not one rw names)."""
    try:
        return DataType.from_sql(cast.to.sql("postgres")).name
    except (RwError, KeyError, ValueError):
        return None


def _text_subquery(value: exp.Expression) -> bool:
    """Whether an assigned value is a sub-select of a string literal (`(SELECT '1.5')`): its
    column is varchar, not a literal of the column's type as a bare '1.5' would be."""
    while isinstance(value, exp.Paren):
        value = value.this
    if not isinstance(value, exp.Subquery) or not isinstance(value.this, exp.Select):
        return False
    items = value.this.expressions
    if len(items) != 1:
        return False
    item = items[0].this if isinstance(items[0], exp.Alias) else items[0]
    return isinstance(item, exp.Literal) and item.is_string


def _feeds_generated_pk(rel: RelationCatalog, name: str) -> bool:
    """Whether column `name` is read by a generated column of `rel`'s primary key."""
    for i in rel.pk:
        c = rel.columns[i]
        if c.generated and any(r.name == name for r in exp.maybe_parse(c.generated, dialect="postgres")
                               .find_all(exp.Column)):
            return True
    return False


def _is_default(value: exp.Expression) -> bool:
    """`SET c = DEFAULT` (the keyword, read as a column of that name unless quoted) or a
    DEFAULT in VALUES (read as a keyword)."""
    if isinstance(value, exp.Var):
        return value.name.lower() == "default"
    return isinstance(value, exp.Column) and not value.table and value.name.lower() == "default" \
        and not value.this.quoted


def _default_value(column) -> exp.Expression:
    """The expression `SET c = DEFAULT` assigns: the column's DEFAULT, else NULL."""
    from rw_cli.sql.dialect import parse_statement

    if column.default is None:
        return exp.Null()
    return exp.paren(parse_statement(f"SELECT ({column.default})").expressions[0])


def _assignments(items: list[exp.Expression]) -> list[tuple[exp.Column, exp.Expression]]:
    """UPDATE's SET items as (column, value) pairs: `c = e`, and PostgreSQL's multiple-column
    forms `(a, b) = (e1, e2)`, `= ROW(e1, e2)` and `= (SELECT x, y ...)` (each column the
    sub-select reduced to its own item: zero rows give NULLs, more than one row an error)."""
    pairs: list[tuple[exp.Column, exp.Expression]] = []
    for a in items:
        if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column):
            pairs.append((a.this, a.expression))
            continue
        if not (isinstance(a, exp.EQ) and isinstance(a.this, exp.Tuple)
                and all(isinstance(c, exp.Column) for c in a.this.expressions)):
            raise BindError("UPDATE ... SET needs column = expression")
        columns, source = a.this.expressions, a.expression
        if isinstance(source, exp.Paren) and isinstance(source.this, exp.Subquery):
            source = source.this
        if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select):
            select = source.this
            values = []
            for item in select.expressions:
                one = select.copy()
                one.set("expressions", [item.copy()])
                values.append(exp.Subquery(this=one))
        elif isinstance(source, exp.Tuple):
            values = list(source.expressions)
        elif isinstance(source, (exp.Anonymous, exp.Struct)) and (source.name or "").lower() in ("row", ""):
            values = list(source.expressions)
        elif isinstance(source, exp.Paren) and len(columns) == 1:
            values = [source.this]
        else:
            raise BindError("source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression")
        if len(values) != len(columns):
            raise BindError("number of columns does not match number of values")
        if any(_is_default(v) for v in values):  # RisingWave takes DEFAULT in `c = DEFAULT` only
            raise BindError("DEFAULT is not supported in a multiple-column UPDATE item")
        pairs.extend(zip(columns, values))
    return pairs


def positional(t: pa.Table, rel: RelationCatalog) -> pa.Table:
    """Rows of `rel` as its job takes them: columns `_0`, `_1`, ... of the column types."""
    return _positional(t, rel)


def _positional(t: pa.Table, rel: RelationCatalog) -> pa.Table:
    cols = [numeric.cast(t.column(i), c.type.arrow()) for i, c in enumerate(rel.columns)]
    return pa.Table.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])
