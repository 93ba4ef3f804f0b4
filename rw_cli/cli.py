"""The `rw` command: run SQL (-c, -f, stdin), open the shell, or run sqllogictest files.

Importing this module must stay cheap (`rw -c "select 1"` starts in well under a second):
the session, the shell and the slt runner are imported inside the commands that use them.
"""
from __future__ import annotations

import errno
import os
import sys

import click

from rw_cli import __version__
from rw_cli.common import startup_gc
from rw_cli.config import FORMATS  # cheap: the standard library and rw_cli.errors only

ENGINES = ("embedded", "spark")
DEFAULT_DATA_DIR = "./rw-data"


def _session_factory(data_dir: str, engine: str, read_only: bool = False):
    """Open a Session (tests replace this)."""
    from rw_cli import session as session_module
    from rw_cli.errors import NotSupported

    supported = getattr(session_module, "ENGINES", ("embedded",))
    if engine not in supported:
        raise NotSupported(f"engine {engine}")
    options = dict(_STORE_OPTIONS, read_only=True) if read_only else _STORE_OPTIONS
    return session_module.Session(data_dir, engine=engine, **options)


# --state-store / --s3-endpoint / --cache-size: given before the subcommand, used by every
# session this process opens
_STORE_OPTIONS: dict = {}


def _store_option(ctx: click.Context, param: click.Parameter, value):
    if value is not None:
        _STORE_OPTIONS[param.name] = value
    return value


def _error(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _render_exception(err: BaseException, sql: str | None = None) -> str:
    from rw_cli.errors import RwError
    from rw_cli.shell.render import render_error

    if isinstance(err, RwError):
        return render_error(err, sql)
    if os.environ.get("RW_DEBUG"):
        raise err
    from rw_cli.errors import InternalError

    return render_error(InternalError.of(err), sql)


def _load_config(path: str | None, no_config: bool):
    from rw_cli import config
    from rw_cli.errors import RwError

    try:
        cfg = config.load(path, no_config=no_config)
    except RwError as err:
        _error(_render_exception(err))
        sys.exit(2)
    config.warn(cfg)
    return cfg


def _close(session) -> bool:
    """Close (and so commit) the session; False, with the error printed, if that failed."""
    try:
        session.close()
        return True
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        return False


def run_sql(session, sql: str, out=None, cfg=None) -> bool:
    """Run a script (SQL and backslash commands, as psql -f does), printing each result;
    stop at the first error (printed to stderr) or `\\q`. Returns True when nothing failed."""
    from rw_cli.config import Config
    from rw_cli.shell.repl import Shell
    from rw_cli.sql.split import split_meta

    shell = Shell(session, cfg or Config(), out=out or sys.stdout)
    shell.runner.begin_document()
    try:
        if split_meta(sql)[1] is None:  # plain SQL: one run, error positions count from its start
            shell.run_sql(sql)
        else:
            shell.run_script(sql, stop_on_error=True)
    finally:
        shell.runner.end_document()
        shell.runner.set_output(None)
    return not shell.failed


_CANNOT_WRITE_ERRNOS = (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT)


def run_stream(session, lines, out=None, cfg=None) -> bool:
    """Run a script that arrives line by line (a pipe): each statement or backslash command
    runs once its text is complete, before the next line is read; stop at the first error or
    `\\q`. Returns True when nothing failed."""
    from rw_cli.config import Config
    from rw_cli.shell.repl import Shell
    from rw_cli.sql.split import is_complete

    shell = Shell(session, cfg or Config(), out=out or sys.stdout)
    shell.runner.begin_document()
    pending = ""
    lines_before = 0  # an error's LINE counts from the start of the input, as with -f
    try:
        for line in lines:
            pending += line
            if not pending.strip() or not is_complete(pending):
                continue
            copy = shell.copy_from_stdin("\n" * lines_before + pending)
            if copy is not None:  # its rows follow, up to a line `\.`
                rows = []
                for data in lines:
                    if data.rstrip("\r\n") == "\\.":
                        break
                    rows.append(data.rstrip("\n"))
                go_on = not shell.failed and shell.copy_rows(copy, rows)
                lines_before += pending.count("\n") + len(rows) + 1
            else:
                go_on = shell.handle("\n" * lines_before + pending)
                lines_before += pending.count("\n")
            pending = ""
            if not go_on or shell.failed:
                return not shell.failed
        if pending.strip():  # the last statement needs no `;`
            shell.handle("\n" * lines_before + pending)
    finally:
        shell.runner.end_document()
        shell.runner.set_output(None)
    return not shell.failed


def _open(data_dir: str, engine: str):
    r"""The session of `-c`, `-f`, stdin and the shell. While another process writes the data
    directory (`rw run`, another shell) this one opens it read-only, as DuckDB allows
    read-only connections: SELECT, SHOW, EXPLAIN and \d on its latest commit."""
    from rw_cli.errors import LockedError, StorageError

    try:
        try:
            return _session_factory(data_dir, engine)
        except LockedError as locked:
            session = _session_factory(data_dir, engine, read_only=True)
            _error(f"NOTICE:  {locked.message}: opened read-only (SELECT, SHOW, EXPLAIN)\n")
            return session
        except StorageError as cannot_write:
            # a full disk or a read-only file system: what is committed can still be read
            if not any(f"[Errno {n}]" in cannot_write.message for n in _CANNOT_WRITE_ERRNOS):
                raise
            session = _session_factory(data_dir, engine, read_only=True)
            _error(f"NOTICE:  {cannot_write.message}: opened read-only (SELECT, SHOW, EXPLAIN)\n")
            return session
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        sys.exit(1)


def _connect(host: str, port: int, user: str):
    """`rw --host`: a session that runs every statement on a server."""
    from rw_cli.server.client import RemoteSession

    try:
        return RemoteSession(host, port, user=user,
                             password=os.environ.get("RW_PASSWORD") or os.environ.get("PGPASSWORD"))
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        sys.exit(1)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="rw", message="%(prog)s %(version)s")
@click.option("--data-dir", metavar="DIR", default=None,
              help=f"Data directory (default: $RW_DATA_DIR, the config file, or {DEFAULT_DATA_DIR}).")
@click.option("--engine", type=click.Choice(ENGINES), default=None,
              help="Runtime that executes the streaming jobs (default: embedded).")
@click.option("-c", "--command", "commands", multiple=True, metavar="SQL",
              help="Run SQL and exit (may be given several times).")
@click.option("-f", "--file", "file", type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Run the SQL in FILE and exit.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: table; also `format` in the config file, $RW_FORMAT).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, metavar="PATH",
              help="Config file (default: $RW_CONFIG or ~/.config/rw/config.toml).")
@click.option("--no-config", is_flag=True, help="Read no config file.")
@click.option("--state-store", metavar="URL", default=None, expose_value=False, callback=_store_option,
              help="Where SSTs and versions live: a directory, file://DIR or s3://BUCKET/PREFIX "
                   "(default: DIR/store under the data directory).")
@click.option("--s3-endpoint", metavar="URL", default=None, expose_value=False, callback=_store_option,
              help="S3-compatible endpoint for an s3:// state store (credentials: AWS_* variables).")
@click.option("--cache-size", metavar="SIZE", default=None, expose_value=False, callback=_store_option,
              help="Block and meta cache limit, e.g. 128MiB (default: 256MiB).")
@click.option("--spark-master", metavar="URL", default=None, expose_value=False, callback=_store_option,
              help="With --engine spark: local[N] (default local[2]), spark://HOST:PORT or sc://HOST:PORT.")
@click.option("--host", metavar="HOST", default=None,
              help="Connect to a running `rw serve` (or any PostgreSQL server) at HOST instead of "
                   "opening a data directory (password: $RW_PASSWORD or $PGPASSWORD).")
@click.option("--port", type=int, default=4566, show_default=True, help="With --host: the server's port.")
@click.option("--user", "-U", "user", default="root", show_default=True, help="With --host: the user name.")
@click.pass_context
def main(ctx: click.Context, data_dir: str | None, engine: str | None, commands: tuple[str, ...],
         file: str | None, fmt: str | None, config_path: str | None, no_config: bool, host: str | None,
         port: int, user: str) -> None:
    """A streaming database in one command: RisingWave's SQL, embedded.

    With -c or -f (or SQL on a non-terminal stdin) run the statements and exit; otherwise
    open the interactive shell.
    """
    startup_gc.pause()  # until the first statement ends (rw_cli.common.startup_gc)
    ctx.call_on_close(startup_gc.resume)
    ctx.ensure_object(dict)
    if ctx.invoked_subcommand == "config":
        ctx.obj.update(config_path=config_path)
        return
    cfg = _load_config(config_path, no_config)
    if data_dir is not None:
        cfg.data_dir = data_dir
    if engine is not None:
        cfg.engine = engine
    if fmt is not None:
        cfg.format = fmt
    ctx.obj.update(data_dir=data_dir, engine=cfg.engine, config=cfg)
    if ctx.invoked_subcommand is not None:
        startup_gc.resume()  # a subcommand (slt, run, serve, store ...) may run long before a statement
        if commands or file:
            raise click.UsageError("-c and -f cannot be combined with a subcommand")
        if host is not None:
            raise click.UsageError("--host connects the shell and -c/-f to a server; it takes no subcommand")
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
    piped = not scripts and not interactive

    session = _open(cfg.data_dir, cfg.engine) if host is None else _connect(host, port, user)
    ok = True
    try:
        if interactive:
            from rw_cli.stream.driver import BackgroundDriver
            from rw_cli.shell.repl import run_shell

            # sources ingest while the shell waits (a read-only shell runs no jobs)
            driver = None if getattr(session, "read_only", False) else BackgroundDriver(session).start()
            try:
                run_shell(session, cfg)
            finally:
                if driver is not None:
                    driver.stop()
        elif piped:  # each statement runs as soon as it has arrived, as psql runs a pipe
            ok = run_stream(session, iter(sys.stdin.readline, ""), cfg=cfg)
        else:
            for sql in scripts:  # each -c / -f runs in its own shell state, as psql does
                if not run_sql(session, sql, cfg=cfg):
                    ok = False
                    break
    except OSError as e:  # statements report their own errors: this is the output going away
        _error(f"could not write to standard output: {e.strerror or e}\n")
        _silence_stdout()
        ok = False
    finally:
        ok = _close(session) and ok
    sys.exit(0 if ok else 1)


def _silence_stdout() -> None:
    """Standard output failed (a full disk, a closed pipe): what is still buffered goes
    nowhere, so the interpreter does not fail again flushing it at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@main.group("config")
def config_group() -> None:
    """Manage the config file."""


@config_group.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.argument("path", required=False)
@click.pass_context
def config_init(ctx: click.Context, force: bool, path: str | None) -> None:
    """Write a commented config template (to PATH, --config, $RW_CONFIG or the default)."""
    from rw_cli import config
    from rw_cli.errors import RwError

    target = config.config_path(path or (ctx.obj or {}).get("config_path"))
    try:
        config.write_template(target, force=force)
    except RwError as err:
        _error(_render_exception(err))
        sys.exit(1)
    click.echo(f"wrote {target}")


@config_group.command("path")
@click.pass_context
def config_path_command(ctx: click.Context) -> None:
    """Print the path of the config file rw reads."""
    from rw_cli import config

    click.echo(config.config_path((ctx.obj or {}).get("config_path")))


@main.command("run")
@click.option("--until-idle", is_flag=True,
              help="Exit once every bounded source is exhausted and its last epoch is committed.")
@click.option("--tick-rows", type=int, default=10_000, show_default=True, metavar="N",
              help="Rows read from each source split per tick.")
@click.option("--barrier-interval-ms", type=int, default=None, metavar="MS",
              help="Milliseconds between barriers (checkpoints); default 1000.")
@click.pass_context
def run_command(ctx: click.Context, until_idle: bool, tick_rows: int, barrier_interval_ms: int | None) -> None:
    """Keep every stream job running, with a live status line, until Ctrl-C (which
    checkpoints and exits cleanly)."""
    from rw_cli.stream.driver import run

    obj = ctx.obj or {}
    cfg = obj.get("config")
    session = _open(cfg.data_dir if cfg is not None else (obj.get("data_dir") or DEFAULT_DATA_DIR),
                    obj.get("engine", "embedded"))
    if barrier_interval_ms is not None:
        session.settings.set("barrier_interval_ms", str(barrier_interval_ms))
    ok = True
    try:
        run(session, until_idle=until_idle, tick_rows=tick_rows, status_out=sys.stderr)
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        ok = False
    finally:
        ok = _close(session) and ok
    sys.exit(0 if ok else 1)


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=4566, show_default=True, help="Port to listen on (RisingWave's).")
@click.option("--password", default=None, metavar="TEXT",
              help="Require this password (SCRAM-SHA-256) from every client (default: $RW_PASSWORD; "
                   "none: trust).")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None, help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None, help="TLS private key (PEM).")
@click.pass_context
def serve_command(ctx: click.Context, host: str, port: int, password: str | None, tls_cert: str | None,
                  tls_key: str | None) -> None:
    """Serve PostgreSQL clients (psql, psycopg, JDBC, GUI tools) while keeping every stream
    job running, as `rw run` does. Ctrl-C (or SIGTERM) checkpoints and exits."""
    import signal

    from rw_cli.server.server import serve, ssl_context

    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    password = password if password is not None else os.environ.get("RW_PASSWORD") or None
    obj = ctx.obj or {}
    cfg = obj.get("config")
    session = _open(cfg.data_dir if cfg is not None else (obj.get("data_dir") or DEFAULT_DATA_DIR),
                    obj.get("engine", "embedded"))
    if getattr(session, "read_only", False):
        _error("ERROR:  rw serve needs to write the data directory: stop the process that holds it\n")
        session.close()
        sys.exit(1)

    def _terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    ok = True
    try:
        serve(session, host, port, password=password,
              ssl_ctx=ssl_context(tls_cert, tls_key) if tls_cert else None)
    except OSError as err:
        _error(f"ERROR:  could not listen on {host}:{port}: {err.strerror or err}\n")
        ok = False
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        ok = False
    finally:
        ok = _close(session) and ok
    sys.exit(0 if ok else 1)


@main.command("slt")
@click.option("--keep-going", is_flag=True, help="Run every record of a file even after a failure.")
@click.option("--mv", is_flag=True,
              help="Differential mode: also create every query as a materialized view and compare it "
                   "with the query, at once and after later statements (cross products included: "
                   "rw_streaming_allow_cross_join is set). One line per file; exit 1 only if an MV "
                   "differs (implies --keep-going).")
@click.option("-v", "--verbose", is_flag=True, help="With --mv: list the refused and different queries "
                                                     "and the batch failures.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Stop a file after this many seconds; the records it did not reach count as failed.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=1, metavar="N",
              help="Run N files at once, each in a process of its own over its own data directory "
                   "(0: one per CPU); the output is the same, in the same order.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_context
def slt_command(ctx: click.Context, keep_going: bool, mv: bool, verbose: bool, timeout: float | None,
                jobs: int, paths: tuple[str, ...]) -> None:
    """Run sqllogictest files, directories (*.slt, and SQLite's classic *.test) or globs."""
    from rw_cli.slt.runner import RunOptions, run_files

    obj = ctx.obj or {}
    options = RunOptions(keep_going=keep_going, timeout=timeout, mv=mv, verbose=verbose,
                         jobs=jobs or os.cpu_count() or 1)
    if options.jobs > 1 and obj.get("data_dir") and len(paths) > 0:
        # the files share the one data directory, which only one process may write
        click.echo(f"NOTICE:  -j {options.jobs} ignored: with --data-dir the files run one after "
                   "another in that directory", err=True)
    rc = run_files(list(paths), keep_going=keep_going, data_dir=obj.get("data_dir"),
                   engine=obj.get("engine", "embedded"), out=sys.stdout,
                   session_factory=_session_factory, options=options)
    sys.exit(rc)


@main.command("compact")
@click.pass_context
def compact_command(ctx: click.Context) -> None:
    """Compact the state store now (every level merged into the bottom one, old versions
    and tombstones dropped), then vacuum objects no version references."""
    obj = ctx.obj or {}
    cfg = obj.get("config")
    session = _open(cfg.data_dir if cfg is not None else (obj.get("data_dir") or DEFAULT_DATA_DIR),
                    obj.get("engine", "embedded"))
    ok = True
    try:
        store = session.store
        before = sum(len(lv) for lv in store.version.levels)
        logs_before = sum(len(s) for s in store.version.logs.values())
        tasks = store.compact(full=True)
        deleted = store.vacuum()
        levels = [len(lv) for lv in store.version.levels]
        logs = f"; {logs_before} append log segment(s) before, {len(store.version.logs)} after" if logs_before else ""
        click.echo(f"COMPACT {tasks} task(s): {before} SST(s) before, {sum(levels)} after "
                   f"(per level {levels}){logs}; {deleted} object(s) vacuumed")
        if store.compaction_error is not None:  # a background task failed meanwhile
            _error(f"ERROR:  compaction failed: {store.compaction_error}\n")
            ok = False
    except Exception as err:  # noqa: BLE001
        _error(_render_exception(err))
        ok = False
    finally:
        ok = _close(session) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
