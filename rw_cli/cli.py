"""The `rw` command: run SQL (-c, -f, stdin), open the shell, or run sqllogictest files.

Importing this module must stay cheap (`rw -c "select 1"` starts in well under a second):
the session, the shell and the slt runner are imported inside the commands that use them.
"""
from __future__ import annotations

import os
import sys

import click

ENGINES = ("embedded", "spark")
DEFAULT_DATA_DIR = "./rw-data"
DEFAULT_HISTORY = "~/.rw_history"


def _session_factory(data_dir: str, engine: str):
    """Open a Session (tests replace this)."""
    from rw_cli import session as session_module
    from rw_cli.errors import NotSupported

    supported = getattr(session_module, "ENGINES", ("embedded",))
    if engine not in supported:
        raise NotSupported(f"engine {engine}")
    return session_module.Session(data_dir, engine=engine)


def _data_dir(given: str | None) -> str:
    return given or os.environ.get("RW_DATA_DIR") or DEFAULT_DATA_DIR


def _history_path() -> str:
    return os.path.expanduser(os.environ.get("RW_HISTFILE") or DEFAULT_HISTORY)


def _error(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _render_exception(err: BaseException, sql: str | None = None) -> str:
    from rw_cli.errors import RwError
    from rw_cli.shell.format import render_error

    if isinstance(err, RwError):
        return render_error(err, sql)
    if os.environ.get("RW_DEBUG"):
        raise err
    return f"ERROR:  internal error: {type(err).__name__}: {err}\n"


def run_sql(session, sql: str, out=None) -> bool:
    """Run every statement of `sql`, printing each result; stop at the first error (printed
    to stderr). Returns True when all succeeded."""
    from rw_cli.shell.format import render_notices, render_result

    out = out or sys.stdout
    try:
        for result in session.execute_iter(sql):
            notices = render_notices(result)
            if notices:
                _error(notices)
            out.write(render_result(result))
            out.flush()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001 - every failure is reported, not raised
        out.flush()
        _error(_render_exception(err, sql))
        return False
    return True


def _open(data_dir: str, engine: str):
    try:
        return _session_factory(data_dir, engine)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        sys.exit(1)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data-dir", metavar="DIR", default=None,
              help=f"Data directory (default: $RW_DATA_DIR or {DEFAULT_DATA_DIR}).")
@click.option("--engine", type=click.Choice(ENGINES), default="embedded", show_default=True,
              help="Runtime that executes the streaming jobs.")
@click.option("-c", "--command", "commands", multiple=True, metavar="SQL",
              help="Run SQL and exit (may be given several times).")
@click.option("-f", "--file", "file", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Run the SQL in FILE and exit.")
@click.pass_context
def main(ctx: click.Context, data_dir: str | None, engine: str, commands: tuple[str, ...],
         file: str | None) -> None:
    """A streaming database in one command: RisingWave's SQL, embedded.

    With -c or -f (or SQL on a non-terminal stdin) run the statements and exit; otherwise
    open the interactive shell.
    """
    ctx.ensure_object(dict)
    ctx.obj.update(data_dir=data_dir, engine=engine)
    if ctx.invoked_subcommand is not None:
        if commands or file:
            raise click.UsageError("-c and -f cannot be combined with a subcommand")
        return

    scripts: list[str] = list(commands)
    if file is not None:
        try:
            if file == "-":
                scripts.append(sys.stdin.read())
            else:
                with open(file, encoding="utf-8") as f:
                    scripts.append(f.read())
        except OSError as e:
            raise click.FileError(file, hint=e.strerror) from None
    interactive = not scripts and sys.stdin.isatty()
    if not scripts and not interactive:
        scripts.append(sys.stdin.read())

    session = _open(_data_dir(data_dir), engine)
    ok = True
    try:
        if interactive:
            from rw_cli.shell.repl import run_shell

            run_shell(session, _history_path())
        else:
            for sql in scripts:
                if not run_sql(session, sql):
                    ok = False
                    break
    finally:
        try:
            session.close()
        except Exception as err:  # noqa: BLE001
            _error(_render_exception(err))
            ok = False
    sys.exit(0 if ok else 1)


@main.command("slt")
@click.option("--keep-going", is_flag=True, help="Run every record of a file even after a failure.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_context
def slt_command(ctx: click.Context, keep_going: bool, paths: tuple[str, ...]) -> None:
    """Run sqllogictest files, directories (*.slt) or globs."""
    from rw_cli.slt.runner import run_files

    obj = ctx.obj or {}
    rc = run_files(list(paths), keep_going=keep_going, data_dir=obj.get("data_dir"),
                   engine=obj.get("engine", "embedded"), out=sys.stdout,
                   session_factory=_session_factory)
    sys.exit(rc)


if __name__ == "__main__":  # pragma: no cover
    main()
