import pytest

from rw_cli.shell.catalog import Column, Relation
from rw_cli.shell.hints import did_you_mean, locate

RELS = [
    Relation(1, "orders", "table", (Column("order_id", "integer"), Column("amount", "numeric"),
                                    Column("_row_id", "serial", True))),
    Relation(2, "customers", "table", (Column("id", "integer"), Column("name", "character varying"))),
    Relation(3, "order_totals", "materialized view", (Column("total", "numeric"),)),
]


@pytest.mark.parametrize("message,sql,hint,name", [
    ('relation "ordrs" does not exist', "select * from ordrs", 'Perhaps you meant the table "orders".', "ordrs"),
    ('relation "order_total" does not exist', "select * from order_total",
     'Perhaps you meant the materialized view "order_totals".', "order_total"),
    ('column "amout" does not exist', "select amout from orders",
     'Perhaps you meant to reference the column "orders.amount".', "amout"),
    ('column "nme" does not exist', "select nme from customers",
     'Perhaps you meant to reference the column "customers.name".', "nme"),
    ('column "row_id" does not exist', "select row_id from orders", None, "row_id"),  # hidden
    ('relation "zzz" does not exist', "select * from zzz", None, "zzz"),
    ('division by zero', "select 1/0", None, None),
])
def test_did_you_mean(message, sql, hint, name):
    got_hint, where = did_you_mean(message, sql, RELS)
    assert got_hint == hint
    assert where == (None if name is None else sql.index(name))


def test_locate_whole_words():
    assert locate("v", "select vv, v from t") == 11
    assert locate("x", 'select "x" from t') == 7
    assert locate("q", "select 1") is None
