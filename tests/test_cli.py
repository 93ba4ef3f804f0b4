import subprocess
import sys

import pytest
from click.testing import CliRunner

import rw_cli.cli as cli
from _fake_session import FakeSession
from rw_cli.errors import LockedError


@pytest.fixture
def fake(monkeypatch, tmp_path):
    FakeSession.instances.clear()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for var in ("RW_CONFIG", "RW_FORMAT", "RW_ENGINE", "RW_TIMING", "RW_EXPANDED", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
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
    assert seen and seen[0][1].history_path == str(tmp_path / "hist")
    assert FakeSession.instances[0].closed


def test_locked_opens_read_only(monkeypatch):
    """A locked data directory opens read-only (issue 20, item 8); when that fails too, its
    error is the one printed."""
    from rw_cli.errors import StorageError

    calls = []

    def locked(data_dir, engine, read_only=False):
        calls.append(read_only)
        if not read_only:
            raise LockedError(f"data directory {data_dir} is locked by process 123")
        raise StorageError("the state store is unreachable")

    monkeypatch.setattr(cli, "_session_factory", locked)
    r = runner().invoke(cli.main, ["--data-dir", "/d", "-c", "select 1"])
    assert r.exit_code == 1 and calls == [False, True]
    assert r.stderr == "ERROR:  the state store is unreachable\n"


def test_spark_engine_refuses_a_local_store_with_a_cluster_master(tmp_path):
    """Checked before Spark starts or the data directory is touched: exit 1, psql-style error."""
    p = subprocess.run([sys.executable, "-m", "rw_cli.cli", "--data-dir", str(tmp_path / "d"), "--engine", "spark",
                        "--spark-master", "spark://127.0.0.1:7077", "-c", "select 1"], capture_output=True, text=True)
    assert p.returncode == 1
    assert p.stderr.startswith("ERROR:  the Spark master spark://127.0.0.1:7077 needs a shared state store")
    assert "HINT:  pass --state-store s3://" in p.stderr
    assert not (tmp_path / "d").exists()


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


def test_format_option(fake):
    r = runner().invoke(cli.main, ["--format", "csv", "-c", "create table t (v int); select 1 as a, 'x' as b"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "a,b\n1,x\n"
    r = runner().invoke(cli.main, ["--format", "jsonl", "-c", "select 1 as a", "-c", "select 2 as a"])
    assert r.stdout == '{"a": 1}\n{"a": 2}\n'
    r = runner().invoke(cli.main, ["--format", "expanded", "-c", "select 1 as a"])
    assert r.stdout == "-[ RECORD 1 ]\na | 1\n\n"
    assert runner().invoke(cli.main, ["--format", "xml", "-c", "select 1"]).exit_code == 2


def test_config_file_env_and_option(fake, tmp_path, monkeypatch):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[shell]\nformat = "tsv"\ntiming = false\n[database]\ndata_dir = "/from/config"\n')
    r = runner().invoke(cli.main, ["--config", str(cfg), "-c", "select 1 as a"])
    assert r.stdout == "a\n1\n" and fake[-1][0] == "/from/config"
    monkeypatch.setenv("RW_FORMAT", "csv")
    r = runner().invoke(cli.main, ["--config", str(cfg), "-c", "select 1 as a"])
    assert r.stdout == "a\n1\n"  # csv and tsv agree here; check the override with json
    monkeypatch.setenv("RW_FORMAT", "json")
    r = runner().invoke(cli.main, ["--config", str(cfg), "-c", "select 1 as a"])
    assert r.stdout == '[\n{"a": 1}\n]\n'
    r = runner().invoke(cli.main, ["--config", str(cfg), "--format", "table", "-c", "select 1 as a"])
    assert r.stdout.startswith(" a \n")
    monkeypatch.delenv("RW_FORMAT")
    r = runner().invoke(cli.main, ["--config", str(cfg), "--no-config", "-c", "select 1 as a"])
    assert r.stdout.startswith(" a \n") and fake[-1][0] == "./rw-data"
    r = runner().invoke(cli.main, ["--config", str(tmp_path / "missing.toml"), "-c", "select 1"])
    assert r.exit_code == 2 and r.stderr.startswith("ERROR:  cannot read config file")
    cfg.write_text('[shell]\nformt = "csv"\n')
    r = runner().invoke(cli.main, ["--config", str(cfg), "-c", "select 1 as a"])
    assert r.exit_code == 0 and r.stderr == f"WARNING:  {cfg}: unknown key shell.formt\n"


def test_config_init(fake, tmp_path):
    from rw_cli.config import template

    r = runner().invoke(cli.main, ["config", "init"])
    target = tmp_path / "xdg" / "rw" / "config.toml"
    assert r.exit_code == 0 and r.stdout == f"wrote {target}\n"
    assert target.read_text() == template()
    r = runner().invoke(cli.main, ["config", "init"])
    assert r.exit_code == 1 and "already exists" in r.stderr and "HINT:  use --force" in r.stderr
    assert runner().invoke(cli.main, ["config", "init", "--force"]).exit_code == 0
    other = tmp_path / "other.toml"
    assert runner().invoke(cli.main, ["--config", str(other), "config", "init"]).exit_code == 0
    assert other.exists()
    r = runner().invoke(cli.main, ["config", "path"])
    assert r.stdout == f"{target}\n"
    assert fake == []  # no session was opened


def test_misspelled_names_get_a_hint_and_caret(tmp_path):
    """Against the real engine: an unknown relation or column gets a caret and a hint."""
    data = str(tmp_path / "d")
    r = runner().invoke(cli.main, ["--no-config", "--data-dir", data, "-c",
                                   "create table orders (amount int); select amout from orders"])
    assert r.exit_code == 1
    assert r.stderr == ('ERROR:  column "amout" does not exist\n'
                        "LINE 1: create table orders (amount int); select amout from orders\n"
                        + " " * (8 + 41) + "^\n"
                        'HINT:  Perhaps you meant to reference the column "orders.amount".\n')
    r = runner().invoke(cli.main, ["--no-config", "--data-dir", data, "-c", "select * from order"])
    assert 'HINT:  Perhaps you meant the table "orders".' in r.stderr or "syntax error" in r.stderr
    r = runner().invoke(cli.main, ["--no-config", "--data-dir", data, "-c", "select * from ordrs"])
    assert r.stderr == ('ERROR:  relation "ordrs" does not exist\n'
                        "LINE 1: select * from ordrs\n"
                        "                      ^\n"
                        'HINT:  Perhaps you meant the table "orders".\n')


def test_scripts_take_backslash_commands(fake, tmp_path):
    f = tmp_path / "s.sql"
    f.write_text("\\pset format csv\nselect 1 as a,\n  2 as b;\n\\x on\n\\echo done\nselect 3 as c;\n"
                 "\\q\nselect 4;\n")
    r = runner().invoke(cli.main, ["-f", str(f)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "Output format is csv.\na,b\n1,2\nExpanded display is on.\ndone\nc\n3\n"
    r = runner().invoke(cli.main, ["-c", "\\bogus", "-c", "select 1"])
    assert r.exit_code == 1 and r.stderr == "invalid command \\bogus\nTry \\? for help.\n" and r.stdout == ""
    r = runner().invoke(cli.main, [], input="select 1 as x;\nfail here;\nselect 2;\n")
    assert r.exit_code == 1 and r.stdout == " x \n---\n 1\n(1 row)\n\n"
    assert r.stderr.startswith("ERROR:  forced failure\nLINE 2: fail here;\n")  # counted from the start


def test_version():
    import subprocess
    import sys

    import rw_cli

    for flag in ("--version", "-V"):
        out = subprocess.run([sys.executable, "-m", "rw_cli.cli", flag], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout == f"rw {rw_cli.__version__}\n"
