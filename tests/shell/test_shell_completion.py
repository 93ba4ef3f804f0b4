import pytest

from rw_cli.shell.catalog import Column, Relation
from rw_cli.shell.completer import candidates
from rw_cli.shell.completion import MV, TABLE, Suggestion, suggest, tables_in_scope

K = Suggestion("keyword")
F = Suggestion("function")
REL = Suggestion("relation")


def cols(*rels):
    return Suggestion("column", relations=tuple(rels))


@pytest.mark.parametrize("text,expected", [
    ("", {K}),
    ("sel", {K}),
    ("select * from ", {REL}),
    ("select * from or", {REL}),
    ("SELECT * FROM orders o JOIN ", {REL}),
    ("select * from a, ", {REL}),
    ("select * from orders ", {K}),
    ("select * from orders o wh", {K}),
    ("select  from orders", None),  # cursor after `select `: checked below
    ("select * from orders where ", {cols("orders"), F, K}),
    ("select * from orders o join customers c on o.", {cols("orders")}),
    ("select * from orders o join customers c on c.na", {cols("customers")}),
    ("select orders. from orders", None),
    ("insert into ", {Suggestion("relation", kinds=(TABLE,))}),
    ("insert into orders (", {cols("orders")}),
    ("update orders set ", {cols("orders"), F, K}),
    ("delete from ", {Suggestion("relation", kinds=(TABLE,))}),
    ("drop materialized view ", {Suggestion("relation", kinds=(MV,))}),
    ("drop table ", {Suggestion("relation", kinds=(TABLE,))}),
    ("drop sink ", {Suggestion("relation", kinds=("sink",))}),
    ("drop index ", {Suggestion("relation", kinds=("index",))}),
    ("describe ", {REL}),
    ("create table t (v ", {Suggestion("datatype"), K}),
    ("create table t (", set()),
    ("select 'from ", set()),
    ("select 1 -- from ", set()),
    ("select 1; select * from ", {REL}),
    ("select 1;", {K}),
    ("\\", {Suggestion("meta_command")}),
    ("\\d", {Suggestion("meta_command")}),
    ("\\d ", {REL}),
    ("\\dm ", {Suggestion("relation", kinds=(MV,))}),
    ("\\dt+ or", {Suggestion("relation", kinds=(TABLE,))}),
    ("\\x ", {Suggestion("value", values=("on", "off", "auto"))}),
    ("\\pset format ", {Suggestion("value", values=("table", "expanded", "csv", "tsv", "json", "jsonl",
                                                    "markdown"))}),
    ("\\i ", {Suggestion("file")}),
    ("select * from mv \\watch ", set()),
])
def test_suggest(text, expected):
    if expected is not None:
        assert suggest(text) == expected


def test_cursor_in_the_middle_sees_the_whole_statement():
    text = "select  from orders o join customers c on true"
    assert suggest(text, len("select ")) == {cols("orders", "customers"), F, K}
    text = "select orders. from orders"
    assert suggest(text, len("select orders.")) == {cols("orders")}


def test_tables_in_scope():
    assert tables_in_scope("select * from a x, b as y join c on true where z") == [
        ("a", "x"), ("b", "y"), ("c", None)]
    assert tables_in_scope('select * from "Weird" w') == [("Weird", "w")]
    assert tables_in_scope("insert into t (a) values (1)") == [("t", None)]


RELS = [
    Relation(1, "orders", TABLE, (Column("order_id", "integer"), Column("_row_id", "serial", True))),
    Relation(2, "order_totals", MV, (Column("total", "numeric"),)),
    Relation(3, "Mixed", TABLE, (Column("select", "integer"),)),
]


def test_candidates_show_kinds_and_quote():
    assert candidates({REL}, "ord", RELS) == [("orders", "table"), ("order_totals", "materialized view")]
    assert candidates({Suggestion("relation", kinds=(MV,))}, "", RELS) == [("order_totals", "materialized view")]
    assert candidates({cols("orders")}, "", RELS) == [("order_id", "column (orders)")]  # hidden skipped
    assert candidates({cols("Mixed")}, "", RELS) == [('"select"', "column (Mixed)")]
    assert candidates({REL}, "Mi", RELS) == [('"Mixed"', "table")]
    assert ("WHERE", "keyword") in candidates({K}, "WH", RELS)
    assert ("where", "keyword") in candidates({K}, "wh", RELS)
    assert candidates({Suggestion("meta_command")}, "\\dm", RELS) == [("\\dm", "list materialized views")]
    assert candidates({cols("orders"), F, K}, "co", RELS)[0] == ("coalesce", "function")
