"""The dialect routes what sqlglot leaves to `Command` and reports syntax errors with positions."""
import pytest
from sqlglot import exp

from rw_cli.errors import BindError, NotSupported, SqlSyntaxError
from rw_cli.sql.dialect import Explain, Flush, Show, parse_statement


@pytest.mark.parametrize("sql,kind", [
    ("flush", Flush), ("FLUSH", Flush), ("show tables", Show), ("SHOW MATERIALIZED VIEWS", Show),
    ("explain create materialized view m as select 1 from t", Explain),
    ("create table t (a int)", exp.Create), ("select 1", exp.Select),
])
def test_statements(sql, kind):
    assert isinstance(parse_statement(sql), kind)


def test_show_targets():
    assert parse_statement("show materialized views").this == "MATERIALIZED VIEWS"
    s = parse_statement("show columns from t")
    assert (s.this, s.args["target"]) == ("COLUMNS", "t")


def test_append_only_is_a_flag_not_a_command():
    tree = parse_statement("create table t (v int) append only")
    assert isinstance(tree, exp.Create) and tree.args.get("append_only")


def test_flush_as_a_column_is_still_a_column():
    assert isinstance(parse_statement("select flush from t"), exp.Select)


@pytest.mark.parametrize("sql,offset,pos,near", [
    ("select * fro t", 0, 13, '"t"'),
    ("selec 1", 0, 6, '"1"'),
    ("select 1;\nselect * fro t", 10, 23, '"t"'),
])
def test_syntax_error_positions(sql, offset, pos, near):
    text = sql[offset:]
    with pytest.raises(SqlSyntaxError) as e:
        parse_statement(text, offset)
    assert e.value.position == pos
    assert near in e.value.message and "at or near" in e.value.message


def test_commands_are_refused():
    with pytest.raises(NotSupported) as e:
        parse_statement("lock table t")
    assert e.value.message.startswith("not supported")


@pytest.mark.parametrize("sql", [
    "DELETE FROM t WHERE k IN ({})".format(", ".join(map(str, range(100)))),
    "SELECT * FROM t WHERE s IN ({}) AND k NOT IN ({})".format(
        ", ".join(f"'v{i}''x'" for i in range(20)), ", ".join(str(i / 4) for i in range(20))),
    "SELECT * FROM t WHERE k IN ({}, -1)".format(", ".join(map(str, range(20)))),
    "SELECT * FROM t WHERE k IN ({}, 1 + 2)".format(", ".join(map(str, range(20)))),
    "SELECT * FROM t WHERE k IN ({} /* c */, 3)".format(", ".join(map(str, range(20)))),
])
def test_long_literal_in_lists_parse_as_the_grammar_does(sql, monkeypatch):
    """A long `IN (literals)` is read token by token: the same tree as the grammar's."""
    from rw_cli.sql import dialect

    fast = parse_statement(sql)
    monkeypatch.setattr(dialect, "LITERAL_LIST_MIN", 10 ** 9)
    assert fast == parse_statement(sql)
    assert fast.sql() == parse_statement(sql).sql()


def test_long_literal_in_list_errors_as_the_grammar_does():
    with pytest.raises(SqlSyntaxError):
        parse_statement("SELECT * FROM t WHERE k IN ({}".format(", ".join(map(str, range(20)))))


@pytest.mark.parametrize("template", [
    "DELETE FROM t WHERE id IN ({ids})",
    "select * from t where x in ({ids}) or y NOT IN ({ids})",
    "select * from t where y = 'in ({ids})' and x in ({ids})",  # one list inside a string
    "select 'a in ({ids})'",
    "update t set v = 1 where (id) in ({ids}) returning id",
])
def test_long_integer_lists_parse_as_written(template):
    """A long list of integers after IN skips the tokenizer: the tree is the one the whole
    text gives, also when such a list sits inside a string literal."""
    ids = ", ".join(str(i * 7) for i in range(300)) + ", 00012, 9223372036854775808"
    sql = template.format(ids=ids)
    assert parse_statement(sql) == parse_statement(sql, hide_lists=False)


def test_syntax_error_after_a_long_integer_list_keeps_its_position():
    sql = "select * from t where x in (" + ", ".join(map(str, range(200))) + ") and and y"
    with pytest.raises(SqlSyntaxError) as hidden:
        parse_statement(sql)
    with pytest.raises(SqlSyntaxError) as whole:
        parse_statement(sql, hide_lists=False)
    assert (str(hidden.value), hidden.value.position) == (str(whole.value), whole.value.position)


@pytest.mark.parametrize("sql", ['create table ""(v int)', 'select 1 as ""', 'select "" from t'])
def test_zero_length_quoted_identifier_is_a_syntax_error(sql):
    """`""` names nothing, whatever it would have named (PostgreSQL's lexer refuses it)."""
    with pytest.raises(SqlSyntaxError, match="zero-length delimited identifier"):
        parse_statement(sql)


def test_doubled_quotes_in_a_string_are_no_identifier():
    assert parse_statement("""select 'a""b' as x""").sql() == """SELECT 'a""b' AS x"""


@pytest.mark.parametrize("sql, name", [("reset timezone", "timezone"), ("RESET ALL;", "all"),
                                       ("reset rw_implicit_flush", "rw_implicit_flush")])
def test_reset_is_set_to_default(sql, name):
    """RESET name is SET name TO DEFAULT (RESET ALL: every parameter)."""
    tree = parse_statement(sql)
    eq = tree.expressions[0].this
    assert isinstance(tree, exp.Set) and eq.this.name == name and eq.expression.name == "default"


@pytest.mark.parametrize("sql, field", [
    ("create table t (s struct<a int, a varchar>)", "a"),
    ("create table t (s struct<Value int, VALUE varchar>)", "value"),  # unquoted names fold
    ('create table t (s struct<"Value" int, "Value" varchar>)', "Value"),
    ("create table t (s struct<n struct<a int, a varchar>>[])", "a"),
    ("create table t (s map(varchar, struct<a int, a varchar>))", "a"),
    ("select row(1, 'x')::struct<a int, a varchar>", "a"),
    ("alter table t alter column s type struct<a int, a varchar>", "a"),
])
def test_struct_fields_are_named_once(sql, field):
    with pytest.raises(BindError, match=f'struct field "{field}" specified more than once'):
        parse_statement(sql)


def test_struct_fields_distinct_by_quoted_case():
    assert parse_statement('create table t (s struct<value int, "Value" varchar>)') is not None


def test_sqlglots_compiled_build_is_refused_plainly(monkeypatch):
    """sqlglotc (sqlglot's mypyc build, which other tools pull in) cannot run this dialect's
    Python subclasses: rw says so and how to fix it, rather than failing at each statement."""
    import sqlglot.parser

    from rw_cli.errors import RwError
    from rw_cli.sql.dialect import require_pure_sqlglot

    require_pure_sqlglot()  # the pure build: nothing to say
    monkeypatch.setattr(sqlglot.parser, "__file__", "/site-packages/sqlglot/parser.cpython-311-x86_64-linux-gnu.so")
    with pytest.raises(RwError, match="compiled build") as err:
        require_pure_sqlglot()
    assert err.value.hint == "pip uninstall sqlglotc"
