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
        if name == "rw_implicit_flush" and text.lower() not in ("true", "false", "on", "off"):
            raise BindError(f'invalid value for parameter "rw_implicit_flush": "{text}"')
        session.settings[name] = text
    return Result("SET_VARIABLE")


def handle_show(session, tree) -> Result:
    what = tree.this
    if what in ("TABLES", "MATERIALIZED VIEWS"):
        kind = TABLE if what == "TABLES" else MATERIALIZED_VIEW
        names = sorted(r.name for r in session.catalog.relations.values() if r.kind == kind)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "COLUMNS":
        return describe(session, tree.args["target"], with_keys=False)
    name = what.lower()
    if name in session.settings or name == "rw_implicit_flush":
        value = session.settings.get(name, "false")
        return text_result("SHOW", [name], [[value]])
    raise NotSupported(f"SHOW {what}")


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
