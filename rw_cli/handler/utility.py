"""SET, SHOW, DESCRIBE, EXPLAIN and transaction statements."""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.common.types import VARCHAR
from rw_cli.errors import BindError, CatalogError, ExecutionError, NotSupported, ReadOnlyError
from rw_cli.handler import transaction
from rw_cli.meta.catalog import MATERIALIZED_VIEW, TABLE
from rw_cli.result import Result
from rw_cli.sql.dialect import Savepoint


def text_result(status: str, columns: list[str], rows: list[list[str | None]]) -> Result:
    arrays = [pa.array([r[i] for r in rows], pa.string()) for i in range(len(columns))]
    return Result(status, pa.Table.from_arrays(arrays, names=columns), [VARCHAR] * len(columns))


def handle_set(session, tree: exp.Set) -> Result:
    for item in tree.expressions:
        eq = item.this
        if not isinstance(eq, exp.EQ):
            raise NotSupported(f"SET {item.sql()}")
        name = eq.this.name.lower() if isinstance(eq.this, exp.Column) else eq.this.sql().lower()
        value = eq.expression
        text = value.name if isinstance(value, (exp.Literal, exp.Column, exp.Identifier, exp.Var)) else value.sql()
        if isinstance(value, exp.Boolean):
            text = "true" if value.this else "false"
        if isinstance(value, exp.Var) and text.lower() == "default" and not value.meta.get("quoted"):
            if name == "all":  # RESET ALL
                session.settings.reset_all()
            else:
                session.settings.reset(name)
            continue
        if name in ("session_authorization", "role") and not isinstance(value, exp.Var):
            session.catalog.access.must_user(text)  # the user the session acts as from now on
        if name == "iceberg_engine_connection" and text:
            # it names a CONNECTION object, which rw has none of (RisingWave's wording)
            raise CatalogError(f'Catalog error: connection "{text}" does not exist')
        if name == "timezone":
            text = _time_zone_text(value, text)
        if name == "database":  # SET database TO d: as USE d
            use_database(session, text)
            continue
        session.settings.set(name, text)
    return Result("SET_VARIABLE")


def use_database(session, name: str) -> None:
    """USE d (or SET database TO d): the database must exist; a session stays in the one it
    connected to (a data directory's relations are all in its default database)."""
    from rw_cli.meta.access import DEFAULT_DATABASE

    session.catalog.access.must_database(name)
    if name != DEFAULT_DATABASE:
        raise NotSupported(f'switching to database "{name}" within a session',
                           hint=f'reconnect to database "{name}" instead')


def _time_zone_text(value: exp.Expression, text: str) -> str:
    """SET TIME ZONE's value as RisingWave reads it: a zone name (quoted or not); DEFAULT and
    LOCAL unquoted only; `INTERVAL '+00:00' HOUR TO MINUTE` (what some clients send on
    connecting) as UTC; no NULL, number or other interval."""
    bad = BindError(f'Invalid value "{text}" for parameter "timezone"')
    ident = value.this if isinstance(value, exp.Column) else value
    quoted = (isinstance(ident, exp.Identifier) and ident.quoted) or value.meta.get("quoted")
    if quoted and text.lower() in ("default", "local"):
        raise bad
    if isinstance(value, exp.Null) or (isinstance(value, exp.Literal) and not value.is_string):
        raise bad
    if isinstance(value, exp.Interval):
        if value.this is not None and value.this.name.strip() in ("+00:00", "00:00", "-00:00"):
            return "UTC"
        raise bad
    return text


def _show_create(session, kind: str, name: str) -> Result:
    from rw_cli.meta.catalog import INDEX, SINK, SOURCE, SUBSCRIPTION, VIEW

    want = {"TABLE": TABLE, "MATERIALIZED VIEW": MATERIALIZED_VIEW, "VIEW": VIEW, "INDEX": INDEX,
            "SINK": SINK, "SOURCE": SOURCE, "SUBSCRIPTION": SUBSCRIPTION}[kind]
    schema, _, bare = name.rpartition(".")
    rel = session.catalog.get(session.catalog.qualified(bare, schema or None))
    if rel is None or rel.kind != want:
        raise BindError(f'{want} "{name}" does not exist')
    from rw_cli.sql.unparse import format_definition

    sql = format_definition(rel.definition) if rel.definition else ""
    if not sql and want == TABLE:
        sql = table_sql(rel)
    shown = rel.name if "." in rel.name else f"public.{rel.name}"
    return text_result("SHOW", ["Name", "Create Sql"], [[shown, sql]])


# RisingWave's spelling of a type in the CREATE TABLE it shows (its purified definition)
_TYPE_WORDS = {"integer": "INT", "double precision": "DOUBLE", "time without time zone": "TIME",
               "timestamp without time zone": "TIMESTAMP", "rw_int256": "rw_int256"}


def type_sql(t) -> str:
    """A column type as RisingWave's SHOW CREATE TABLE spells it: INT, CHARACTER VARYING,
    TIMESTAMP WITH TIME ZONE, STRUCT<a INT, b BIGINT>, INT[]."""
    from rw_cli.sql.rename import quote_name

    if t.is_list:
        return type_sql(t.inner[0]) + "[]"
    if t.is_struct:
        return "STRUCT<" + ", ".join(f"{quote_name(n)} {type_sql(f)}" for n, f in zip(t.field_names, t.inner)) + ">"
    if t.is_map:
        return f"MAP({type_sql(t.inner[0])},{type_sql(t.inner[1])})"
    return _TYPE_WORDS.get(t.name, t.name.upper())


def table_sql(rel) -> str:
    """The CREATE TABLE of a table that keeps no definition text, from its catalog: columns
    with their options, the primary key (on its column when it was declared so, else a
    PRIMARY KEY clause), the watermark, APPEND ONLY."""
    from rw_cli.sql.rename import quote_name
    from rw_cli.sql.unparse import format_definition

    visible = [c for c in rel.columns if not c.hidden]
    single_pk = rel.columns[rel.pk[0]].name if rel.user_pk and len(rel.pk) == 1 and not rel.pk_clause else None
    items = [f"{quote_name(c.name)} {type_sql(c.type)}" + _column_options(c, c.name == single_pk) for c in visible]
    if rel.user_pk and single_pk is None:
        items.append("PRIMARY KEY (" + ", ".join(quote_name(rel.columns[k].name) for k in rel.pk) + ")")
    if rel.watermark:
        ttl = " WITH TTL" if rel.ttl_column is not None else ""
        expr = format_definition(rel.watermark[1])
        items.append(f"WATERMARK FOR {quote_name(rel.watermark[0])} AS {expr}{ttl}")
    sql = f"CREATE TABLE {quote_name(rel.name.rpartition('.')[2])} ({', '.join(items)})"
    sql += " APPEND ONLY" if rel.append_only else ""
    if rel.retention_seconds is not None and not (rel.connector and rel.connector.get("options")):
        sql += f" WITH (retention_seconds = {rel.retention_seconds})"
    return sql + connector_sql(rel.connector)


def _column_options(column, primary_key: bool) -> str:
    """What the CREATE TABLE said of a column after its type: its generation expression,
    PRIMARY KEY, NOT NULL, DEFAULT (RisingWave shows the definition as written)."""
    from rw_cli.sql.unparse import format_definition

    out = f" AS {format_definition(column.generated)}" if column.generated else ""
    out += " PRIMARY KEY" if primary_key else ""
    out += " NOT NULL" if column.not_null else ""
    return out + (f" DEFAULT {format_definition(column.default)}" if column.default is not None else "")


def connector_sql(connector: dict) -> str:
    """` WITH (k = 'v', ...) FORMAT F ENCODE E [(...)]` of a table with a connector, as
    RisingWave's purified definition spells it."""
    if not connector or not connector.get("options"):
        return ""
    quoted = lambda v: "'" + str(v).replace("'", "''") + "'"  # noqa: E731
    sql = " WITH (" + ", ".join(f"{k} = {quoted(v)}" for k, v in connector["options"].items()) + ")"
    if connector.get("format"):
        sql += f" FORMAT {connector['format'].upper()} ENCODE {(connector.get('encode') or '').upper()}"
        if connector.get("encode_options"):
            sql += " (" + ", ".join(f"{k} = {quoted(v)}" for k, v in connector["encode_options"].items()) + ")"
    return sql


def handle_show(session, tree) -> Result:
    import re

    what = tree.this
    if what == "COLUMNS":
        return describe(session, tree.args["target"], with_keys=False)
    m = re.fullmatch(r"CREATE FUNCTION (\S+)", what)
    if m:
        from rw_cli.handler.create_function import show_create_rows

        return text_result("SHOW", ["Name", "Create Sql"], show_create_rows(session, m.group(1).lower().strip('"')))
    m = re.fullmatch(r"CREATE (TABLE|MATERIALIZED VIEW|VIEW|INDEX|SINK|SOURCE|SUBSCRIPTION) (\S+)", what)
    if m:
        return _show_create(session, m.group(1), m.group(2).lower().strip('"'))
    if what == "PARAMETERS":
        from rw_cli.meta import system_params

        stored = session.catalog.system_params
        rows = [[n, system_params.value(stored, n), "true" if mutable else "false"]
                for n, (_, mutable) in system_params.PARAMS.items()]
        return text_result(f"SHOW {len(rows)}", ["Name", "Value", "Mutable"], rows)
    if what == "FUNCTIONS":
        return _show_functions(session)
    if what == "PROCESSLIST":
        return _show_processlist(session)
    if what == "ALL":
        rows = [[k, v, ""] for k, v in session.settings.items()]
        return text_result(f"SHOW {len(rows)}", ["Name", "Setting", "Description"], rows)
    name = what.lower().replace(" ", "")
    if session.settings.known(name):
        return text_result("SHOW", [name], [[session.settings.show(name)]])
    raise BindError(f'unrecognized configuration parameter "{what.lower()}"')


def _show_functions(session) -> Result:
    """SHOW FUNCTIONS: the user-defined functions, one row per overload, as RisingWave lists
    them (name, argument types, return type, language, link)."""
    from rw_cli.sql.sql_udf import overloads

    rows = []
    for name in sorted(session.catalog.functions):
        for r in overloads(session.catalog.functions[name]):
            table = r.get("table")
            returns = "TABLE (" + ", ".join(f"{c} {t}" for c, t in table) + ")" if table else r.get("returns")
            rows.append([name, ", ".join(t for _, t in r["args"]), returns, r.get("language", "sql"), None])
    return text_result(f"SHOW {len(rows)}", ["Name", "Arguments", "Return Type", "Language", "Link"], rows)


def _show_processlist(session) -> Result:
    """SHOW PROCESSLIST of an embedded session: itself, running this statement (`rw serve`
    lists each of its connections: rw_cli.server.server, in the same columns)."""
    import os

    from rw_cli.handler.authz import current_user
    from rw_cli.meta.access import DEFAULT_DATABASE

    row = [str(os.getpid()), current_user(session), "local", DEFAULT_DATABASE, "active", "0", "SHOW PROCESSLIST"]
    return text_result("SHOW 1", ["Id", "User", "Host", "Database", "State", "Time", "Info"], [row])


def handle_describe(session, tree: exp.Describe) -> Result:
    target = tree.this
    return describe(session, f"{target.text('db')}.{target.name}" if target.text("db") else target.name)


def describe(session, name: str, with_keys: bool = True) -> Result:
    """DESCRIBE relation (`with_keys`) and SHOW COLUMNS FROM relation: each column with its
    type, whether it is hidden and its comment; DESCRIBE adds the primary key, the
    distribution key, the relation's indexes and its own comment, as RisingWave shows them."""
    from rw_cli.meta.catalog import RW_TIMESTAMP, INDEX, SINK

    catalog = session.catalog
    schema, _, bare = name.lower().strip('"').rpartition(".")
    rel = catalog.get(catalog.qualified(bare, schema or None)) if schema in ("", "public") or \
        schema in catalog.schemas else None
    if rel is None:
        return _describe_system(session, schema, bare, with_keys)
    rows = [row + [rel.comments.get(c.name) if row[0] == _column_name(c) else None]
            for c in rel.columns for row in column_rows(_column_name(c), _column_type(c), c.type, c.hidden)]
    if rel.kind in (TABLE, MATERIALIZED_VIEW):
        rows.append([RW_TIMESTAMP, "timestamp with time zone", "true", None])
    if with_keys:
        pk = ", ".join(rel.columns[k].name for k in rel.pk)
        if rel.kind != SINK:  # a sink has a distribution, no primary key (RisingWave)
            rows.append(["primary key", pk, None, None])
        if rel.pk:
            rows.append(["distribution key", pk, None, None])
        for idx in catalog.in_creation_order():
            if idx.kind == INDEX and rel.id in idx.dependencies:
                keys, include, dist = index_description(idx)
                rows.append([idx.name.rpartition(".")[2],
                             f"index({keys}) include({include}) distributed by({dist})", None, None])
        rows.append(["table description", bare, None, rel.comments.get("")])
    return text_result(f"SHOW {len(rows)}", ["Name", "Type", "Is Hidden", "Description"], rows)


def _describe_system(session, schema: str, name: str, with_keys: bool) -> Result:
    """DESCRIBE / SHOW COLUMNS of a system catalog (pg_catalog.pg_matviews, rw_tables, ...)."""
    from rw_cli.common.types import DataType
    from rw_cli.sql.pg_catalog import system_table

    data = system_table(schema or None, name, session.catalog, session)
    if data is None:
        raise CatalogError(f'relation "{name}" does not exist')
    rows = [[f.name, DataType.from_field(f).name, "false", None] for f in data.schema]
    if with_keys:
        rows.append(["table description", name, None, None])
    return text_result(f"SHOW {len(rows)}", ["Name", "Type", "Is Hidden", "Description"], rows)


def column_rows(name: str, shown: str, t, hidden: bool) -> list[list]:
    """A column's rows in SHOW COLUMNS: the column, then (as RisingWave expands them) each
    element of a list (`v[1]`) and each field of a struct (`v[1].a`), recursively."""
    from rw_cli.sql.rename import quote_name

    def display(t) -> str:
        if t.is_list:
            return display(t.inner[0]) + "[]"
        return "struct" if t.is_struct else t.name

    rows = [[name, shown if not (t.is_list or t.is_struct) else display(t), "true" if hidden else "false"]]
    if t.is_list and (t.inner[0].is_struct or t.inner[0].is_list):
        rows += column_rows(f"{name}[1]", display(t.inner[0]), t.inner[0], hidden)
    elif t.is_struct:
        for field_name, inner in zip(t.field_names, t.inner):
            rows += column_rows(f"{name}.{quote_name(field_name)}", display(inner), inner, hidden)
    return rows


def _column_type(c) -> str:
    """A column's type as DESCRIBE shows it: the row id of a table without a key is a serial
    (also as an MV's or sink's hidden `t._row_id`)."""
    from rw_cli.meta.catalog import ROW_ID

    row_id = c.name == ROW_ID or c.name.endswith("." + ROW_ID)
    return "serial" if row_id and c.hidden else c.type.name


def _column_name(c) -> str:
    """A column's name as DESCRIBE shows it: quoted when it holds a dot (`"t._row_id"`)."""
    from rw_cli.sql.rename import quote_name

    return quote_name(c.name) if "." in c.name else c.name


def index_description(idx) -> tuple[str, str, str]:
    """(key columns with their order, included columns, distribution key) of an index, from
    its definition: `v1 ASC, v2 DESC`, `v3`, `v1`."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(idx.definition)
    params = tree.this.args.get("params")
    cols = (params.args.get("columns") or []) if params is not None else []
    keys = []
    for o in cols:
        col = o.this if isinstance(o, exp.Ordered) else o
        keys.append((col.name, "DESC" if isinstance(o, exp.Ordered) and o.args.get("desc") else "ASC"))
    names = [k for k, _ in keys]
    include = [c.name for c in idx.visible_columns if c.name not in names]
    dist = tree.args.get("distributed_by") or names[:1]
    return ", ".join(f"{k} {d}" for k, d in keys), ", ".join(include), ", ".join(dist)


# RisingWave's notice for BEGIN without READ ONLY
READ_WRITE_NOTICE = ("Read-write transaction is not supported yet. Please specify `READ ONLY` to start a "
                     "read-only transaction.\nFor compatibility, this statement will still succeed but no "
                     "transaction is actually started.")


def handle_transaction(session, tree) -> Result:
    """START TRANSACTION READ ONLY ... COMMIT | ROLLBACK: a transaction block for reads, as
    RisingWave supports. Writes are refused inside it (see `check_not_in_transaction`). A
    BEGIN without READ ONLY starts nothing (RisingWave's notice says so, as drivers send it
    on their own): each statement after it is its own transaction, as outside one."""
    if isinstance(tree, exp.Transaction):
        if session.in_transaction:
            return Result("BEGIN", notices=["there is already a transaction in progress"])
        modes = [" ".join(str(m).upper().split()) for m in tree.args.get("modes") or []]
        if "READ ONLY" not in modes:
            return Result("BEGIN", notices=[READ_WRITE_NOTICE])
        transaction.begin(session)  # its queries read the tables as committed now
        return Result("BEGIN")
    savepoint = isinstance(tree, Savepoint) or (isinstance(tree, exp.Rollback) and tree.args.get("savepoint"))
    if savepoint:  # the block's reads undo nothing: a savepoint only needs the block open
        tag = "ROLLBACK" if isinstance(tree, exp.Rollback) else ("RELEASE" if tree.args.get("release") else "SAVEPOINT")
        if not session.in_transaction:
            raise ExecutionError(f"{tag if tag != 'ROLLBACK' else 'ROLLBACK TO SAVEPOINT'} can only be used in "
                                 "transaction blocks")
        return Result(tag)
    tag = "COMMIT" if isinstance(tree, exp.Commit) else "ROLLBACK"
    if not session.in_transaction:
        return Result(tag, notices=["there is no transaction in progress"])
    transaction.end(session)
    return Result(tag)


def check_not_in_transaction(session, what: str) -> None:
    """rw runs each write as a transaction of its own; inside a read-only transaction it
    refuses writes."""
    if getattr(session, "in_transaction", False):
        raise ReadOnlyError(f"cannot execute {what} in a read-only transaction",
                            hint="COMMIT or ROLLBACK first, then run it")
