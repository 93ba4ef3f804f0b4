import io
import os
import stat

import pytest

from _fake_session import FakeSession
from rw_cli.shell.repl import continuation_prompt, ensure_history_file, handle_input, run_shell


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


def test_handle_input():
    s = FakeSession("x")
    out, err = io.StringIO(), io.StringIO()
    assert handle_input(s, "create table t (v int); insert into t values (1);", out, err)
    assert handle_input(s, "select v from t;", out, err)
    assert handle_input(s, "select * from nope;", out, err)
    assert handle_input(s, "\\x", out, err)
    assert out.getvalue() == "CREATE_TABLE\nINSERT 0 1\n v \n---\n 1\n(1 row)\n\n"
    assert err.getvalue().startswith("ERROR:  ") and "invalid command \\x" in err.getvalue()
    assert handle_input(s, "\\q", out, err) is False
    assert handle_input(s, "  ", out, err) is True


def test_handle_input_error_position():
    s = FakeSession("x")
    out, err = io.StringIO(), io.StringIO()
    handle_input(s, "select 1;\nfail here;", out, err)
    assert err.getvalue() == "ERROR:  forced failure\nLINE 2: fail here;\n             ^\nHINT:  test hint\n"


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
        run_shell(s, str(hist), input=inp, output=DummyOutput())
    out = capsys.readouterr().out
    assert out == " v  \n----\n 42\n(1 row)\n\n"
    assert s.executed == ["select\n 42 as v"]
    assert "42 as v;" in hist.read_text()


def test_run_shell_ctrl_d(tmp_path, capsys):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    s = FakeSession("x")
    with create_pipe_input() as inp:
        inp.send_text("\x04")
        run_shell(s, None, input=inp, output=DummyOutput())
    assert s.executed == []
