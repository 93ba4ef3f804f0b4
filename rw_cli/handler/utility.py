"""SET, SHOW, DESCRIBE, EXPLAIN and transaction statements."""
from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from rw_cli.common.types import VARCHAR
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import MATERIALIZED_VIEW, TABLE
from rw_cli.result import Result


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
        if name == "timezone":
            text = _time_zone_text(value, text)
        session.settings.set(name, text)
    return Result("SET_VARIABLE")


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
    from rw_cli.meta.catalog import INDEX, SINK, SOURCE, VIEW

    want = {"TABLE": TABLE, "MATERIALIZED VIEW": MATERIALIZED_VIEW, "VIEW": VIEW, "INDEX": INDEX,
            "SINK": SINK, "SOURCE": SOURCE}[kind]
    rel = session.catalog.get(name)
    if rel is None or rel.kind != want:
        raise BindError(f'{want} "{name}" does not exist')
    sql = rel.definition.strip().rstrip(";") if rel.definition else ""
    if not sql and want == TABLE:
        sql = table_sql(rel)
    return text_result("SHOW", ["Name", "Create Sql"], [[f"public.{rel.name}", sql]])


# RisingWave's spelling of a type in the CREATE TABLE it shows (its purified definition)
_TYPE_WORDS = {"integer": "INT", "double precision": "DOUBLE", "time without time zone": "TIME",
               "timestamp without time zone": "TIMESTAMP"}


def type_sql(t) -> str:
    """A column type as RisingWave's SHOW CREATE TABLE spells it: INT, CHARACTER VARYING,
    TIMESTAMP WITH TIME ZONE, STRUCT<a INT, b BIGINT>, INT[]."""
    from rw_cli.sql.rename import quote_name

    if t.is_list:
        return type_sql(t.inner[0]) + "[]"
    if t.is_struct:
        return "STRUCT<" + ", ".join(f"{quote_name(n)} {type_sql(f)}" for n, f in zip(t.field_names, t.inner)) + ">"
    return _TYPE_WORDS.get(t.name, t.name.upper())


def table_sql(rel) -> str:
    """The CREATE TABLE of a table that keeps no definition text, from its catalog: columns,
    the primary key (inline when it is one column), the watermark, APPEND ONLY."""
    from rw_cli.sql.rename import quote_name

    visible = [c for c in rel.columns if not c.hidden]
    single_pk = rel.columns[rel.pk[0]].name if rel.user_pk and len(rel.pk) == 1 else None
    items = [f"{quote_name(c.name)} {type_sql(c.type)}" + (" PRIMARY KEY" if c.name == single_pk else "")
             for c in visible]
    if rel.user_pk and single_pk is None:
        items.append("PRIMARY KEY (" + ", ".join(quote_name(rel.columns[k].name) for k in rel.pk) + ")")
    if rel.watermark:
        items.append(f"WATERMARK FOR {quote_name(rel.watermark[0])} AS {rel.watermark[1]}")
    sql = f"CREATE TABLE {quote_name(rel.name.rpartition('.')[2])} ({', '.join(items)})"
    return sql + (" APPEND ONLY" if rel.append_only else "")


def handle_show(session, tree) -> Result:
    import re

    from rw_cli.meta.catalog import VIEW

    what = tree.this
    listing = {"TABLES": TABLE, "MATERIALIZED VIEWS": MATERIALIZED_VIEW, "VIEWS": VIEW}
    if what in listing:
        kind = listing[what]
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == kind)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "COLUMNS":
        return describe(session, tree.args["target"], with_keys=False)
    m = re.fullmatch(r"CREATE (TABLE|MATERIALIZED VIEW|VIEW|INDEX|SINK|SOURCE) (\S+)", what)
    if m:
        return _show_create(session, m.group(1), m.group(2).lower().strip('"').split(".")[-1])
    if what == "ALL":
        rows = [[k, v, ""] for k, v in session.settings.items()]
        return text_result(f"SHOW {len(rows)}", ["Name", "Setting", "Description"], rows)
    name = what.lower().replace(" ", "")
    if session.settings.known(name):
        return text_result("SHOW", [name], [[session.settings.show(name)]])
    raise BindError(f'unrecognized configuration parameter "{what.lower()}"')


def handle_describe(session, tree: exp.Describe) -> Result:
    return describe(session, tree.this.name)


def describe(session, name: str, with_keys: bool = True) -> Result:
    rel = session.catalog.must_get(name)
    rows = [[c.name, c.type.name, "true" if c.hidden else "false", None] for c in rel.columns]
    if with_keys:
        pk = ", ".join(rel.columns[k].name for k in rel.pk)
        rows.append(["primary key", pk, None, None])
    return text_result(f"SHOW {len(rows)}", ["Name", "Type", "Is Hidden", "Description"], rows)


def handle_transaction(session, tree) -> Result:
    """BEGIN ... COMMIT | ROLLBACK: a transaction block for reads, as RisingWave supports.
    Writes are refused inside it (see `check_not_in_transaction`): each write is its own
    transaction, so a ROLLBACK never has anything to undo."""
    if isinstance(tree, exp.Transaction):
        if session.in_transaction:
            return Result("BEGIN", notices=["there is already a transaction in progress"])
        session.in_transaction = True
        return Result("BEGIN")
    tag = "COMMIT" if isinstance(tree, exp.Commit) else "ROLLBACK"
    if not session.in_transaction:
        return Result(tag, notices=["there is no transaction in progress"])
    session.in_transaction = False
    return Result(tag)


def check_not_in_transaction(session, what: str) -> None:
    """rw runs each write as a transaction of its own; inside BEGIN ... it refuses writes
    rather than pretend that ROLLBACK could undo them."""
    if getattr(session, "in_transaction", False):
        raise NotSupported(f"{what} in a transaction block",
                           hint="rw supports read-only transactions: COMMIT or ROLLBACK first, then run it")
