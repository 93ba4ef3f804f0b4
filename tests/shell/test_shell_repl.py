import io
import os
import re
import stat

import pytest

from _fake_session import FakeSession
from rw_cli.config import Config
from rw_cli.shell import meta
from rw_cli.shell.repl import Shell, continuation_prompt, ensure_history_file, run_shell


@pytest.mark.parametrize("text,prompt", [
    ("select 1\n", "rw-> "),
    ("select 'a\n", "rw'> "),
    ('select "a\n', 'rw"> '),
    ("select $$a\n", "rw$> "),
    ("select /* a\n", "rw*> "),
    ("select (1,\n", "rw(> "),
])
def test_continuation_prompt(text, prompt):
    assert continuation_prompt(text) == prompt


def test_history_file_mode(tmp_path):
    path = tmp_path / "sub" / "hist"
    ensure_history_file(str(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    os.chmod(path, 0o644)
    ensure_history_file(str(path))  # an existing file is made private too
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def shell(session=None, **cfg):
    out, err = io.StringIO(), io.StringIO()
    sh = Shell(session or FakeSession("x"), Config(pager="", **cfg), out, err)
    return sh, out, err


def test_sql_and_unknown_command():
    sh, out, err = shell()
    assert sh.handle("create table t (v int); insert into t values (1);")
    assert sh.handle("select v from t;")
    assert sh.handle("select * from nope;")
    assert sh.handle("\\bogus")
    assert out.getvalue() == "CREATE_TABLE\nINSERT 0 1\n v \n---\n 1\n(1 row)\n\n"
    assert err.getvalue().startswith("ERROR:  ") and err.getvalue().endswith(
        "invalid command \\bogus\nTry \\? for help.\n")
    assert sh.handle("\\q") is False
    assert sh.handle("  ") is True


def test_error_position():
    sh, out, err = shell()
    sh.handle("select 1;\nfail here;")
    assert err.getvalue() == "ERROR:  forced failure\nLINE 2: fail here;\n             ^\nHINT:  test hint\n"


def test_help_is_generated_from_the_registry():
    sh, out, err = shell()
    sh.handle("\\?")
    text = out.getvalue()
    for cmd in meta.ORDER:
        assert cmd.name in text and cmd.help in text
    for section in ("General", "Informational", "Formatting", "Input/Output", "Query Buffer"):
        assert section + "\n" in text
    assert "  \\d[+] [NAME]" in text


def test_x_timing_pset():
    sh, out, err = shell()
    sh.handle("\\x")
    sh.handle("select 1 as a;")
    sh.handle("\\x auto")
    sh.handle("\\x off")
    sh.handle("\\timing on")
    sh.handle("select 2 as b;")
    sh.handle("\\timing")
    sh.handle("\\pset null (null)")
    sh.handle("select null as n;")
    sh.handle("\\pset format csv")
    sh.handle("select 3 as c;")
    sh.handle("\\pset format xml")
    sh.handle("\\x maybe")
    text = re.sub(r"Time: \d+\.\d{3} ms", "Time: X ms", out.getvalue())
    assert text == ("Expanded display is on.\n"
                    "-[ RECORD 1 ]\na | 1\n\n"
                    "Expanded display is used automatically.\n"
                    "Expanded display is off.\n"
                    "Timing is on.\n"
                    " b \n---\n 2\n(1 row)\n\nTime: X ms\n"
                    "Timing is off.\n"
                    'Null display is "(null)".\n'
                    "   n   \n--------\n (null)\n(1 row)\n\n".replace("   n   \n--------", "   n    \n--------")
                    + "Output format is csv.\n"
                    "c\n3\n")
    assert err.getvalue() == ("\\pset: allowed formats are table, expanded, csv, tsv, json, jsonl, markdown\n"
                              '\\x: unrecognized value "maybe" for "expanded": Boolean expected\n')


def test_o_and_i_and_echo(tmp_path):
    sh, out, err = shell()
    script = tmp_path / "s.sql"
    script.write_text("create table t (v int);\ninsert into t\n  values (1), (2);\n\\echo inserted\n"
                      "select count(*) as n\nfrom t;\n")
    target = tmp_path / "out.txt"
    sh.handle(f"\\o {target}")
    sh.handle(f"\\i {script}")
    sh.handle("\\o")
    sh.handle("select 9 as z;")
    assert target.read_text() == "CREATE_TABLE\nINSERT 0 2\ninserted\n n \n---\n 2\n(1 row)\n\n"
    assert out.getvalue() == " z \n---\n 9\n(1 row)\n\n"
    sh.handle("\\i /nonexistent/file.sql")
    assert err.getvalue() == "\\i: No such file or directory\n"


def test_watch_with_count_and_sql_on_the_same_line():
    sh, out, err = shell()
    sh.handle("select 5 as v \\watch 0 c=2")
    text = out.getvalue()
    assert text.count("(every 0s)\n\n v \n---\n 5\n(1 row)\n\n") == 2
    sh.handle("\\watch c=1 0")  # the last query again
    assert out.getvalue().count(" 5\n") == 3
    fresh, _, err2 = shell()
    fresh.handle("\\watch 1")
    assert err2.getvalue() == "\\watch: cannot be used with an empty query\n"


def test_sql_then_command_and_incomplete_sql_is_kept():
    sh, out, err = shell()
    sh.handle("select 1 as a; \\x on")
    assert out.getvalue() == " a \n---\n 1\n(1 row)\n\nExpanded display is on.\n"
    sh.handle("select 2 \\x off")
    assert sh.next_input == "select 2"


def test_edit_puts_the_edited_query_into_the_next_prompt(tmp_path, monkeypatch):
    editor = tmp_path / "ed.sh"
    editor.write_text('#!/bin/sh\nsed -i "s/1/42/" "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    sh, out, err = shell()
    sh.handle("select 1 as v;")
    sh.handle("\\e")
    assert sh.next_input == "select 42 as v;"
    sh.handle("select 7 \\e")
    assert sh.next_input == "select 7"


def test_run_shell_with_pipe_input(tmp_path, capsys):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    s = FakeSession("x")
    hist = tmp_path / "h"
    with create_pipe_input() as inp:
        # a statement over two lines, a Ctrl-C'd partial input, then \q
        inp.send_text("select\r 42 as v;\r")
        inp.send_text("select 'never\x03")
        inp.send_text("\\q\r")
        run_shell(s, Config(pager=""), input=inp, output=DummyOutput(), history=str(hist))
    out = capsys.readouterr().out
    assert out == "rw 0.1.0 (embedded, data directory x)\nType \\? for help.\n\n v  \n----\n 42\n(1 row)\n\n"
    assert s.executed == ["select\n 42 as v"]
    assert "42 as v;" in hist.read_text()


def test_run_shell_ctrl_d(capsys):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    s = FakeSession("x")
    with create_pipe_input() as inp:
        inp.send_text("\x04")
        run_shell(s, Config(), input=inp, output=DummyOutput(), history=None)
    assert s.executed == []


@pytest.fixture
def real(tmp_path):
    from rw_cli.session import Session

    s = Session(str(tmp_path / "d"))
    s.execute("create table orders (id int primary key, amount int); "
              "create table items (v varchar); "
              "create materialized view totals as select id, sum(amount) as total from orders group by id;")
    yield s
    s.close()


def test_describe_commands(real):
    sh, out, err = shell(real)
    sh.handle("\\d")
    assert out.getvalue() == (
        "          List of relations\n"
        " Schema |  Name  |       Type        \n"
        "--------+--------+-------------------\n"
        " public | items  | table\n"
        " public | orders | table\n"
        " public | totals | materialized view\n"
        "(3 rows)\n\n")
    out.truncate(0), out.seek(0)
    sh.handle("\\dm")
    assert " public | totals | materialized view\n(1 row)" in out.getvalue()
    out.truncate(0), out.seek(0)
    sh.handle("\\d orders")
    assert out.getvalue() == (
        '               Table "public.orders"\n'
        " Column |  Type   | Collation | Nullable | Default \n"
        "--------+---------+-----------+----------+---------\n"
        " id     | integer |           | not null | \n"
        " amount | integer |           |          | \n"
        "Primary key: id\n\n")
    out.truncate(0), out.seek(0)
    sh.handle("\\d+ items")
    assert re.search(r"_row_id +\| \w+ +\| +\| +\| +\| true", out.getvalue())
    out.truncate(0), out.seek(0)
    sh.handle("\\d+ totals")
    assert 'Materialized view "public.totals"' in out.getvalue()
    assert "Definition:\n    " in out.getvalue() and "sum(amount)" in out.getvalue().lower()
    out.truncate(0), out.seek(0)
    sh.handle("\\jobs")
    assert "totals" in out.getvalue() and "running" in out.getvalue()
    sh.handle("\\dv")
    sh.handle("\\d nope")
    assert err.getvalue() == 'Did not find any relations.\nDid not find any relation named "nope".\n'
    # the snapshot follows DDL
    sh.handle("drop materialized view totals;")
    assert [r.name for r in sh.relations()] == ["orders", "items"]


def test_list_commands_by_kind(real):
    real.execute("create index orders_amount on orders (amount); create view big as select * from orders where amount > 10;")
    sh, out, err = shell(real)

    def listed(cmd):
        out.truncate(0), out.seek(0)
        sh.handle(cmd)
        return [(line.split("|")[1].strip(), line.split("|")[2].strip())
                for line in out.getvalue().splitlines() if line.startswith(" public ")]

    assert listed("\\dt") == [("items", "table"), ("orders", "table")]
    assert listed("\\dt ord*") == [("orders", "table")]
    assert listed("\\dv") == [("big", "view")]
    assert listed("\\dm") == [("totals", "materialized view")]
    assert listed("\\di") == [("orders_amount", "index")]
    assert err.getvalue() == ""


def test_listings_of_functions_schemas_databases_and_users(real):
    real.execute("create function plus1(a int) returns int language sql as 'select a + 1'")
    sh, out, err = shell(real)
    for cmd, expected in (("\\df", " plus1 | integer   | integer     | sql      |"),
                          ("\\dn", " public"), ("\\l", " dev"), ("\\du", " root      | Superuser")):
        out.truncate(0), out.seek(0)
        sh.handle(cmd)
        assert expected in out.getvalue(), (cmd, out.getvalue())
    assert err.getvalue() == "" and not sh.failed
    real.execute("drop function plus1")


def test_restrict_allows_no_backslash_command_until_unrestrict_with_its_key():
    """psql 17's `\\restrict KEY` (pg_dump writes it first): SQL still runs, backslash
    commands other than `\\unrestrict KEY` are refused."""
    sh, out, err = shell()
    assert sh.run_script("\\restrict Ab12\nselect 1;\n\\timing on\n\\unrestrict nope\n\\unrestrict Ab12\n\\timing off\n")
    assert "backslash commands are restricted" in err.getvalue()
    assert "\\unrestrict: wrong key" in err.getvalue()
    assert "Timing is off." in out.getvalue() and "Timing is on." not in out.getvalue()
    assert sh.failed
