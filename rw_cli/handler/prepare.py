"""PREPARE name [(type, ...)] AS statement, EXECUTE name [(value, ...)], DEALLOCATE
[PREPARE] {name | ALL}: prepared statements of SQL text, kept by the session.

A prepared statement is a query or DML (SELECT, VALUES, INSERT, UPDATE, DELETE) with
placeholders `$1`, `$2`...; EXECUTE puts its values in their places, each cast to its declared
type, and runs the statement as if it had been sent so (a read-only transaction refuses a
prepared INSERT as it refuses an INSERT). The values are constants (literals, typed literals,
NULL, a negative number): what the extended protocol's Bind would send. DEALLOCATE of a name
that is not prepared does nothing, as in RisingWave.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.result import Result
from rw_cli.sql.dialect import PreparedStatement, RwDialect, parse_statement
from rw_cli.sql.placeholders import parameter_count, substitute

# the statements a PREPARE takes (their first keyword)
_PREPARABLE = ("select", "values", "with", "table", "insert", "update", "delete", "(")


@dataclass(frozen=True)
class Prepared:
    types: list[str]  # the declared parameter types, as SQL (may be fewer than the placeholders)
    body: str


def statements(session) -> dict[str, Prepared]:
    if not hasattr(session, "sql_prepared_statements"):
        session.sql_prepared_statements = {}
    return session.sql_prepared_statements


def handle(session, tree: PreparedStatement) -> Result:
    """PREPARE and DEALLOCATE (EXECUTE: `bound_sql`, which the dispatcher runs)."""
    kind, name = tree.args["kind"], tree.args.get("this")
    kept = statements(session)
    if kind == "deallocate":
        if name is None:
            kept.clear()
        else:
            kept.pop(name, None)
        return Result("DEALLOCATE")
    if kind == "prepare":
        if name in kept:
            raise CatalogError(f'prepared statement "{name}" already exists')
        body = tree.args["body"]
        head = body.lstrip()[:1] if body.lstrip().startswith("(") else body.split(None, 1)[0].lower()
        if head not in _PREPARABLE:
            raise NotSupported(f"PREPARE of {head.upper()}", hint="a prepared statement is a query or DML")
        parse_statement(body)  # a statement that does not parse is refused now, not at EXECUTE
        kept[name] = Prepared([t.sql(dialect=RwDialect) for t in tree.expressions], body)
        return Result("PREPARE")
    raise ValueError(f"not a PREPARE or DEALLOCATE: {kind}")


def bound_sql(session, tree: PreparedStatement) -> str:
    """EXECUTE name (values): the prepared statement's text with the values in the places
    of its placeholders, each cast to its declared type."""
    name, values = tree.args.get("this"), tree.expressions
    prepared = statements(session).get(name)
    if prepared is None:
        raise CatalogError(f'prepared statement "{name}" does not exist')
    want = max(len(prepared.types), parameter_count(prepared.body))
    if len(values) != want:
        raise BindError(f'wrong number of parameters for prepared statement "{name}"',
                        hint=f"Expected {want} parameters but got {len(values)}.")
    literals = []
    for i, value in enumerate(values):
        if not _is_constant(value):
            raise BindError(f"unsupported EXECUTE parameter expression: {value.sql(dialect=RwDialect)}",
                            hint="EXECUTE takes constants: literals, typed literals or NULL")
        text = value.sql(dialect=RwDialect)
        literals.append(f"CAST({text} AS {prepared.types[i]})" if i < len(prepared.types) else text)
    return substitute(prepared.body, literals)


def _is_constant(value: exp.Expression) -> bool:
    if isinstance(value, exp.Paren):
        return _is_constant(value.this)
    if isinstance(value, (exp.Literal, exp.Null, exp.Boolean)):
        return True
    if isinstance(value, exp.Neg):
        return isinstance(value.this, exp.Literal) and not value.this.is_string
    return isinstance(value, exp.Cast) and isinstance(value.this, exp.Literal)  # `date '2024-01-01'`
