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


def _check_time_zone(text: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if text.upper() in ("UTC", "GMT", "Z", "LOCAL", "DEFAULT"):
        return "UTC"
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, IsADirectoryError):
        raise BindError(f'invalid value for parameter "TimeZone": "{text}"') from None
    return text


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
            text = _check_time_zone(text)
        if name == "implicit_flush":  # RisingWave's other name for it
            name = "rw_implicit_flush"
        if name == "rw_implicit_flush" and text.lower() not in ("true", "false", "on", "off"):
            raise BindError(f'invalid value for parameter "rw_implicit_flush": "{text}"')
        session.settings[name] = text
    return Result("SET_VARIABLE")


# Session parameters with their defaults (SHOW, SHOW ALL, current_setting, pg_settings).
DEFAULT_SETTINGS: dict[str, str] = {
    "rw_implicit_flush": "false",
    "timezone": "UTC",
    "application_name": "",
    "client_encoding": "UTF8",
    "client_min_messages": "notice",
    "datestyle": "ISO, MDY",
    "extra_float_digits": "1",
    "intervalstyle": "postgres",
    "search_path": '"$user", public',
    "server_encoding": "UTF8",
    "server_version": "13.14.0",
    "server_version_num": "130014",
    "standard_conforming_strings": "on",
    "streaming_parallelism": "default",
    "enable_two_phase_agg": "true",
    "force_two_phase_agg": "false",
    "query_mode": "auto",
    "batch_parallelism": "0",
    "transaction_isolation": "read committed",
    "statement_timeout": "0",
}


def all_settings(session) -> list[tuple[str, str]]:
    merged = dict(DEFAULT_SETTINGS)
    merged.update(getattr(session, "settings", {}) or {})
    return sorted(merged.items())


def _show_create(session, kind: str, name: str) -> Result:
    from rw_cli.meta.catalog import VIEW

    want = {"TABLE": TABLE, "MATERIALIZED VIEW": MATERIALIZED_VIEW, "VIEW": VIEW}[kind]
    rel = session.catalog.get(name)
    if rel is None or rel.kind != want:
        raise BindError(f'{want} "{name}" does not exist')
    sql = rel.definition.strip().rstrip(";") if rel.definition else ""
    if not sql and want == TABLE:
        cols = ", ".join(f"{c.name} {c.type.name.upper()}" for c in rel.columns if not c.hidden)
        if rel.user_pk:
            cols += ", PRIMARY KEY (" + ", ".join(rel.columns[k].name for k in rel.pk) + ")"
        sql = f"CREATE TABLE {rel.name} ({cols})"
    return text_result("SHOW", ["Name", "Create Sql"], [[f"public.{rel.name}", sql]])


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
    m = re.fullmatch(r"CREATE (TABLE|MATERIALIZED VIEW|VIEW) (\S+)", what)
    if m:
        return _show_create(session, m.group(1), m.group(2).lower().strip('"').split(".")[-1])
    if what == "ALL":
        rows = [[k, v, ""] for k, v in all_settings(session)]
        return text_result(f"SHOW {len(rows)}", ["Name", "Setting", "Description"], rows)
    name = what.lower().replace(" ", "")
    if name == "timezone" or name in session.settings or name in DEFAULT_SETTINGS:
        value = dict(all_settings(session)).get(name, "")
        if name == "enable_two_phase_agg" and \
                session.settings.get("rw_force_two_phase_agg", "false").lower() in ("true", "on"):
            value = "true"  # forcing two-phase aggregation enables it
        return text_result("SHOW", [name], [[value]])
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
    """Each statement is its own transaction; BEGIN/COMMIT are accepted as RisingWave does."""
    if isinstance(tree, exp.Transaction):
        return Result("BEGIN")
    if isinstance(tree, exp.Commit):
        return Result("COMMIT")
    return Result("ROLLBACK")
