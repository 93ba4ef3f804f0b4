"""Non-strict evaluation (streaming, and batch with batch_expr_strict_mode off): an expression
that fails on a row gives NULL there; DuckDB refuses TRY around its error(), so every macro
that raises must be known, and inline error() calls become NULL."""
import duckdb
import pytest
from sqlglot import exp

from rw_cli.engine import duck
from rw_cli.engine.duck_functions import MACROS, RAISING_MACROS, non_strict_name
from rw_cli.sql.duckdb_dialect import duckdb_dialect
from rw_cli.sql.non_strict import non_strict


def test_every_macro_calling_error_is_a_raising_macro():
    """Read from the bodies: a macro that calls error(), directly or through another, is one."""
    for macro in MACROS:
        name = macro.split()[4].split("(")[0]
        body = macro.split(" AS ", 1)[1]
        if name.endswith("_or_null"):
            continue
        if "error(" in body or any(f"{r}(" in body for r in RAISING_MACROS if r != name):
            assert name in RAISING_MACROS, name


@pytest.mark.parametrize("name", sorted(RAISING_MACROS))
def test_each_raising_macro_has_a_non_strict_form_without_error(name):
    forms = [m for m in MACROS if f"MACRO {non_strict_name(name)}(" in m]
    assert len(forms) == 1
    assert "error(" not in forms[0].split(" AS ", 1)[1]


def test_jsonb_delete_from_a_scalar_is_null_when_non_strict():
    with pytest.raises(Exception, match="cannot delete from scalar"):
        duck.query("SELECT pg_jsonb_delete_key('1'::JSON, 'a')")
    tree = non_strict(exp.Anonymous(this="pg_jsonb_delete_key", expressions=[
        exp.Cast(this=exp.Literal.string("1"), to=exp.DataType.build("JSON", dialect="duckdb")),
        exp.Literal.string("a")]))
    assert duck.query(f"SELECT {tree.sql(dialect=duckdb_dialect())} AS x").column(0).to_pylist() == [None]


def test_inline_error_is_null_and_not_inside_try():
    bad = exp.Cast(this=exp.Anonymous(this="error", expressions=[exp.Literal.string("bad")]),
                   to=exp.DataType.build("INT"))
    tree = non_strict(exp.Add(this=bad, expression=exp.Literal.number(1)))
    sql = tree.sql(dialect=duckdb_dialect())
    assert "error(" not in sql.lower()
    assert duckdb.sql(f"SELECT {sql}").fetchall() == [(None,)]
