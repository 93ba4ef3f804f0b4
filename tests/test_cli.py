import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import rw_cli.cli as cli
from _fake_session import FakeSession
from rw_cli.errors import LockedError


@pytest.fixture
def fake(monkeypatch):
    FakeSession.instances.clear()
    opened = []

    def factory(data_dir, engine):
        opened.append((data_dir, engine))
        return FakeSession(data_dir, engine)

    monkeypatch.setattr(cli, "_session_factory", factory)
    monkeypatch.delenv("RW_DATA_DIR", raising=False)
    return opened


def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 keeps stderr apart already
        return CliRunner()


def test_c_runs_and_prints(fake):
    r = runner().invoke(cli.main, ["-c", "create table t (v int); insert into t values (5)",
                                   "-c", "select v from t"])
    assert r.exit_code == 0, r.output
    assert r.stdout == "CREATE_TABLE\nINSERT 0 1\n v \n---\n 5\n(1 row)\n\n"
    assert fake == [("./rw-data", "embedded")]
    assert FakeSession.instances[0].closed


def test_first_error_stops_with_exit_1(fake):
    r = runner().invoke(cli.main, ["-c", "select 1 as a; fail now; select 2", "-c", "select 3"])
    assert r.exit_code == 1
    assert r.stdout == " a \n---\n 1\n(1 row)\n\n"
    sql = "select 1 as a; fail now; select 2"
    caret = " " * (len("LINE 1: ") + sql.index("now")) + "^"
    assert r.stderr == f"ERROR:  forced failure\nLINE 1: {sql}\n{caret}\nHINT:  test hint\n"


def test_file_and_data_dir(fake, tmp_path):
    f = tmp_path / "x.sql"
    f.write_text("select 7 as n;\n")
    r = runner().invoke(cli.main, ["--data-dir", str(tmp_path / "d"), "-f", str(f)])
    assert r.exit_code == 0 and " 7" in r.stdout
    assert fake == [(str(tmp_path / "d"), "embedded")]


def test_env_data_dir(fake, monkeypatch):
    monkeypatch.setenv("RW_DATA_DIR", "/from/env")
    r = runner().invoke(cli.main, ["-c", "select 1"])
    assert r.exit_code == 0 and fake == [("/from/env", "embedded")]


def test_stdin_when_not_a_tty(fake):
    r = runner().invoke(cli.main, [], input="create table t (v int);\nselect 1 as x;\n")
    assert r.exit_code == 0
    assert r.stdout.startswith("CREATE_TABLE\n x \n")


def test_interactive_opens_shell(fake, monkeypatch, tmp_path):
    import rw_cli.shell.repl as repl

    seen = []
    monkeypatch.setattr(repl, "run_shell", lambda s, h: seen.append((s, h)))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setenv("RW_HISTFILE", str(tmp_path / "hist"))

    class TtyInput:
        def isatty(self):
            return True

    monkeypatch.setattr(cli.sys, "stdin", TtyInput())
    with pytest.raises(SystemExit) as e:
        cli.main.main([], standalone_mode=False)
    assert e.value.code == 0
    assert seen and seen[0][1] == str(tmp_path / "hist")
    assert FakeSession.instances[0].closed


def test_locked(monkeypatch):
    def locked(data_dir, engine):
        raise LockedError(f"data directory {data_dir} is locked by process 123")

    monkeypatch.setattr(cli, "_session_factory", locked)
    r = runner().invoke(cli.main, ["--data-dir", "/d", "-c", "select 1"])
    assert r.exit_code == 1
    assert r.stderr == "ERROR:  data directory /d is locked by process 123\n"


def test_spark_not_supported_yet(monkeypatch):
    import types

    fake_mod = types.ModuleType("rw_cli.session")
    fake_mod.Session = FakeSession
    monkeypatch.setitem(sys.modules, "rw_cli.session", fake_mod)
    r = runner().invoke(cli.main, ["--engine", "spark", "-c", "select 1"])
    assert r.exit_code == 1
    assert r.stderr.startswith("ERROR:  not supported: engine spark\n")


def test_usage_errors_exit_2(fake):
    assert runner().invoke(cli.main, ["--engine", "oracle", "-c", "x"]).exit_code == 2
    assert runner().invoke(cli.main, ["--bogus"]).exit_code == 2
    assert runner().invoke(cli.main, ["slt"]).exit_code == 2
    assert runner().invoke(cli.main, ["-c", "select 1", "slt", "x.slt"]).exit_code == 2


def test_slt_subcommand(fake, tmp_path):
    f = tmp_path / "a.slt"
    f.write_text("statement ok\ncreate table t (v int);\n\nquery I\nselect 1;\n----\n1\n")
    r = runner().invoke(cli.main, ["slt", str(f)])
    assert r.exit_code == 0, r.output
    assert r.stdout.endswith("2 passed, 0 failed\n")
    assert fake[0][0] != "./rw-data"  # a fresh temporary directory, not the default

    r = runner().invoke(cli.main, ["--data-dir", str(tmp_path / "dd"), "slt", "--keep-going", str(f)])
    assert r.exit_code == 0 and fake[-1] == (str(tmp_path / "dd"), "embedded")

    f.write_text("query I\nselect 2;\n----\n1\n")
    r = runner().invoke(cli.main, ["slt", str(f)])
    assert r.exit_code == 1 and r.stdout.endswith("0 passed, 1 failed\n")


def test_import_is_cheap():
    code = ("import sys, rw_cli.cli; heavy = [m for m in ('pyarrow', 'pyspark', 'duckdb', 'sqlglot', "
            "'prompt_toolkit', 'pandas', 'rw_cli.session') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
