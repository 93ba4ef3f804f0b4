"""Run SQL and print what it returns: used by one-shot runs (`rw -c`, `-f`, stdin) and by the
shell. Results go to stdout (or the `\\o` file) in the configured format, through the pager
when they are taller than the terminal; errors go to stderr in psql's layout with a "did you
mean" hint; `\\timing` adds `Time: ... ms`; Ctrl-C cancels the running statement.

Ctrl-C: a read-only statement (SELECT, SHOW, ...) is interrupted at once, its DuckDB query
too (Python runs a signal handler only once C code returns, so a thread woken by the signal
stops the query: `_Watcher`). A statement that changes data is asked to stop at its next
safe point (every `Progress.update` in the engine is one); a second Ctrl-C stops it at
once, and then the shell exits without committing, so the data directory keeps its last
committed state.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import TextIO

from rw_cli.common import progress as progress_hook
from rw_cli.errors import QueryCanceled, RwError
from rw_cli.shell import data_formats
from rw_cli.shell.render import render_error, render_notices, render_result
from rw_cli.sql.split import split_statements

_LABEL = re.compile(r"^(ERROR|WARNING|HINT|NOTICE):", re.M)
_LABEL_COLORS = {"ERROR": "01;31", "WARNING": "01;35", "HINT": "01;36", "NOTICE": "01;36"}
_READ_ONLY = re.compile(r"^\s*(select|with|values|table|show|describe|explain)\b", re.I)
CANCELED = QueryCanceled().message


def is_read_only(statement: str) -> bool:
    return bool(_READ_ONLY.match(statement))


def format_timing(seconds: float) -> str:
    """psql's `\\timing` line: `Time: 1.234 ms`, with `(mm:ss.fff)` from a second on."""
    ms = seconds * 1000
    text = f"Time: {ms:.3f} ms"
    if ms >= 1000:
        m, s = divmod(seconds, 60)
        h, m = divmod(int(m), 60)
        clock = f"{h:02d}:{m:02d}:{s:06.3f}" if h else f"{m:02d}:{s:06.3f}"
        text += f" ({clock})"
    return text


class _Interrupts:
    """The SIGINT handler while a statement runs."""

    def __init__(self, err: TextIO):
        self.err = err
        self.read_only = True
        self.fired = False  # Ctrl-C was pressed during the current statement
        self.forced = False  # ...and a statement that changes data was stopped mid-way

    def __call__(self, signum, frame) -> None:
        self.fired = True
        if self.read_only or progress_hook.cancel_requested():
            progress_hook.clear_cancel()
            if not self.read_only:
                self.forced = True
            else:  # should the exception be lost, the statement's next DuckDB query stops
                progress_hook.request_interrupt(threading.get_ident())
            raise KeyboardInterrupt
        progress_hook.request_cancel()
        self.err.write("Cancel request sent\n")
        self.err.flush()


class StatementRunner:
    """Runs SQL on a session and prints results with the current settings (a `Config`)."""

    def __init__(self, session, cfg, out: TextIO | None = None, err: TextIO | None = None):
        self.session = session
        self.cfg = cfg
        self.stdout = out or sys.stdout
        self.err = err or sys.stderr
        self.out = self.stdout  # where results go: stdout or the `\o` file
        self.out_file: TextIO | None = None
        self.canceled = False  # a statement was cancelled with Ctrl-C (scripts stop there)
        self.json_rows: list[str] | None = None  # a script's `json` rows, written as one document

    def begin_document(self) -> None:
        """A script starts: with `--format json` its results become one JSON document."""
        self.json_rows = []

    def end_document(self) -> None:
        rows, self.json_rows = self.json_rows, None
        if rows is not None and self.cfg.format == "json":
            self.write_result(data_formats.json_document(rows))

    # -- output -------------------------------------------------------------------------------
    def set_output(self, path: str | None) -> None:
        """`\\o FILE` sends results to FILE (`|command` to a pipe is not supported); `\\o` back
        to stdout."""
        if self.out_file is not None:
            self.out_file.close()
            self.out_file = None
        if path:
            self.out_file = open(os.path.expanduser(path), "w", encoding="utf-8")
            self.out = self.out_file
        else:
            self.out = self.stdout

    def _terminal_size(self) -> os.terminal_size | None:
        if self.out is not self.stdout:
            return None
        try:
            if not self.out.isatty():
                return None
            return os.get_terminal_size(self.out.fileno())
        except (AttributeError, OSError, ValueError):
            return None

    def write_result(self, text: str) -> None:
        size = self._terminal_size()
        pager = self.cfg.pager_command if size is not None else ""
        if pager and self.cfg.format in ("table", "expanded") and _too_big(text, size):
            if self._page(text, pager):
                return
        self.out.write(text)
        self.out.flush()

    def _page(self, text: str, command: str) -> bool:
        try:
            proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, text=True, encoding="utf-8",
                                    errors="replace")
        except OSError:
            return False
        try:
            proc.communicate(text)
        except BrokenPipeError:
            pass
        except KeyboardInterrupt:  # the pager handles Ctrl-C itself; wait for it to quit
            proc.wait()
        return True

    def error(self, err: BaseException, sql: str | None = None, statement: tuple[str, int] | None = None) -> None:
        self.out.flush()
        self.write_err(self.render_exception(err, sql, statement))

    def write_err(self, text: str) -> None:
        """Write to stderr, with psql's colours for the labels on a terminal (PG_COLORS'
        defaults: error bold red, warning bold magenta, hint/notice bold cyan)."""
        if self.cfg.use_color(self.err):
            text = _LABEL.sub(lambda m: f"\x1b[{_LABEL_COLORS[m.group(1)]}m{m.group(1)}:\x1b[0m", text)
        self.err.write(text)
        self.err.flush()

    def render_exception(self, err: BaseException, sql: str | None, statement: tuple[str, int] | None) -> str:
        if not isinstance(err, RwError):
            if os.environ.get("RW_DEBUG"):
                raise err
            from rw_cli.errors import InternalError

            err = InternalError.of(err)
        if statement is not None and err.hint is None:
            from rw_cli.shell import catalog
            from rw_cli.shell.hints import did_you_mean

            hint, where = did_you_mean(err.message, statement[0], catalog.snapshot(self.session))
            position = err.position
            if position is None and where is not None:
                position = statement[1] + where
            return render_error(RwError(err.message, position=position, hint=hint, context=err.context), sql)
        return render_error(err, sql)

    # -- running ------------------------------------------------------------------------------
    def run(self, sql: str) -> bool:
        """Run every statement of `sql`; stop at the first error. True when all succeeded."""
        statements = split_statements(sql)
        listener = _progress_listener(self.err)
        token = progress_hook.install(listener)
        interrupts = _Interrupts(self.err)
        previous = _set_sigint(interrupts)
        index = 0
        try:
            results = self.session.execute_iter(sql)
            while True:
                interrupts.read_only = index >= len(statements) or is_read_only(statements[index][0])
                interrupts.fired = False
                progress_hook.clear_cancel()
                progress_hook.clear_interrupt(threading.get_ident())
                started = time.perf_counter()
                # the statement's own line (elapsed time) until the engine reports finer progress
                running = _statement_progress(statements[index][0]) if listener and index < len(statements) \
                    else None
                try:
                    result = next(results)
                except StopIteration:
                    return True
                except KeyboardInterrupt:
                    raise
                except Exception as e:  # noqa: BLE001 - reported, not raised
                    if interrupts.fired or isinstance(e, QueryCanceled):
                        raise KeyboardInterrupt from e
                    self.error(e, sql, statements[index] if index < len(statements) else None)
                    return False
                finally:
                    if running is not None:
                        running.close()
                elapsed = time.perf_counter() - started
                interrupts.read_only = True  # printing the result can always be interrupted
                notices = render_notices(result)
                if notices:
                    self.write_err(notices)
                if self.json_rows is not None and self.cfg.format == "json":
                    if result.table is not None:  # into the script's one document
                        self.json_rows.extend(data_formats.json_objects(result.columns, result.text_rows(),
                                                                        result.types))
                else:
                    self.write_result(render_result(result, self.cfg.format, expanded=self.cfg.expanded,
                                                    null=self.cfg.null, width=self._width()))
                if self.cfg.timing:
                    self.out.write(format_timing(elapsed) + "\n")
                    self.out.flush()
                index += 1
        except KeyboardInterrupt:
            self._canceled(interrupts)
            return False
        finally:
            progress_hook.clear_cancel()
            progress_hook.clear_interrupt(threading.get_ident())
            _restore_sigint(previous)
            progress_hook.uninstall(token)

    def _width(self) -> int | None:
        size = self._terminal_size()
        return size.columns if size is not None else None

    def _canceled(self, interrupts: _Interrupts) -> None:
        self.canceled = True
        self.out.flush()
        self.write_err(f"ERROR:  {CANCELED}\n")
        if interrupts.forced:
            self.write_err("WARNING:  a statement that changes data was stopped mid-way; exiting without "
                           "committing it (the data directory keeps its last committed state)\n")
            os._exit(1)


def _statement_progress(statement: str) -> progress_hook.Progress:
    label = " ".join(statement.split())
    if len(label) > 40:
        label = label[:39] + "…"
    return progress_hook.Progress(label, unit="rows")


def _too_big(text: str, size: os.terminal_size) -> bool:
    lines = text.split("\n")
    if len(lines) - 1 > size.lines - 1:
        return True
    return any(len(line) > size.columns for line in lines)


def _progress_listener(err: TextIO):
    from rw_cli.shell.progress import listener_for

    return listener_for(err)


class _Watcher:
    """Reads the bytes the C-level signal handler writes (`signal.set_wakeup_fd`) while the
    main thread may be inside a DuckDB query; on SIGINT during a read-only statement it stops
    that query (`progress.interrupt`). A statement that changes data is left to its safe
    points."""

    def __init__(self):
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)
        self.current: _Interrupts | None = None
        threading.Thread(target=self._loop, name="rw-sigint", daemon=True).start()

    def _loop(self) -> None:
        main = threading.main_thread().ident
        while True:
            signals = os.read(self.read_fd, 64)
            current = self.current
            if signal.SIGINT in signals and current is not None and current.read_only:
                progress_hook.interrupt(main)


_watcher: _Watcher | None = None


def _set_sigint(handler: _Interrupts):
    """Install `handler` for SIGINT (and the watcher's wakeup); the previous state, to restore."""
    global _watcher
    if threading.current_thread() is not threading.main_thread():
        return None
    if _watcher is None:
        _watcher = _Watcher()
    outer, _watcher.current = _watcher.current, handler  # (a run within a run gets it back)
    wakeup = signal.set_wakeup_fd(_watcher.write_fd, warn_on_full_buffer=False)
    return signal.signal(signal.SIGINT, handler), wakeup, outer


def _restore_sigint(previous) -> None:
    if previous is not None:
        handler, wakeup, outer = previous
        signal.signal(signal.SIGINT, handler)
        signal.set_wakeup_fd(wakeup)
        _watcher.current = outer

