"""The interactive shell: prompt-toolkit input, psql's prompts and backslash commands.

Enter submits when the text is complete (`rw_cli.sql.split.is_complete`: a `;` outside
quotes/comments/brackets, or a backslash command); otherwise it starts a new line and the
continuation prompt shows what is still open (`rw'> `, `rw(> `, `rw-> `).
"""
from __future__ import annotations

import os
import sys
from typing import TextIO

from rw_cli.common import startup_gc
from rw_cli.common.lazy_import import lazy_import
from rw_cli.shell.execute import StatementRunner
from rw_cli.errors import NotSupported, RwError
from rw_cli.sql.split import is_complete, split_meta, split_statements, why_incomplete

# imported when a backslash command or completion first needs them, not for `rw -c SQL`
catalog = lazy_import("rw_cli.shell.catalog")
meta = lazy_import("rw_cli.shell.meta")

PROMPT = "rw=> "
_OPEN_CHAR = {"'": "'", '"': '"', "/*": "*", "(": "(", "[": "["}
_RUNS_THE_BUFFER = {"\\watch", "\\e", "\\edit", "\\g"}


def continuation_prompt(text_so_far: str) -> str:
    """The prompt for a continuation line, given the text of the lines above it."""
    why = why_incomplete(text_so_far)
    if why is None:
        ch = "-"
    elif why.startswith("$"):
        ch = "$"
    else:
        ch = _OPEN_CHAR.get(why, "-")
    return f"rw{ch}> "


def ensure_history_file(path: str) -> None:
    """Create the history file (and its folder) readable only by the user."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if not os.path.exists(path):
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        os.close(fd)
    os.chmod(path, 0o600)


class Shell:
    """The state of one shell: settings (`cfg`, changed by `\\x`, `\\pset`...), the query
    buffer, the catalog snapshot; `handle` runs one submitted input."""

    def __init__(self, session, cfg=None, out: TextIO | None = None, err: TextIO | None = None):
        from rw_cli.config import Config

        self.session = session
        self.cfg = cfg or Config()
        self.runner = StatementRunner(session, self.cfg, out, err)
        self.err = self.runner.err
        self.last_query = ""  # the last SQL run (for \watch, \e, \g)
        self.query_buffer = ""  # SQL typed before a backslash command on the same input
        self.next_input = ""  # text to put into the next prompt (after \e)
        self.failed = False  # a statement or command failed (for scripts' exit status)
        self._signature: tuple | None = None
        self._relations: tuple[catalog.Relation, ...] = ()

    @property
    def out(self) -> TextIO:
        return self.runner.out

    def print(self, text: str) -> None:
        self.runner.write_result(text)

    def relations(self) -> tuple[catalog.Relation, ...]:
        """The catalog snapshot, re-read only when a relation was created or dropped."""
        sig = catalog.signature(self.session)
        if sig != self._signature:
            self._relations = catalog.snapshot(self.session)
            self._signature = sig
        return self._relations

    def run_sql(self, sql: str) -> bool:
        ok = self.runner.run(sql)
        self.failed |= not ok
        return ok

    def handle(self, text: str) -> bool:
        """Run one submitted input: SQL, a backslash command, or SQL followed by one.
        Returns False when the shell should quit."""
        if not text.strip():
            return True
        sql, command = split_meta(text)
        try:
            if command is None:
                self.last_query = sql
                self.run_sql(sql)
                return True
            name = meta.parse(command)[0]
            if sql.strip() and name in _RUNS_THE_BUFFER:
                self.query_buffer = sql
                try:
                    self.failed |= not meta.run(self, command)
                finally:
                    self.query_buffer = ""
                return True
            if sql.strip() and is_complete(sql):
                self.last_query = sql
                self.run_sql(sql)
            elif sql.strip():
                self.next_input = sql.rstrip()  # not run yet: keep it for the next prompt
            self.failed |= not meta.run(self, command)
        except meta.Quit:
            return False
        except KeyboardInterrupt:  # between statements of `\i`, in `\e`...: back to the prompt
            self.out.flush()
            self.err.write("Cancel request sent\n")
            self.err.flush()
            self.runner.canceled = True
            self.failed = True
        return True

    def copy_from_stdin(self, chunk: str) -> str | None:
        """When `chunk` ends with `COPY ... FROM STDIN`, the rows follow it in the script (up
        to a line `\\.`, as pg_dump writes them): run what comes before the COPY and return
        the COPY's text; else None."""
        from rw_cli.server.copy import copy_kind

        statements = split_statements(chunk)
        if not statements or copy_kind(statements[-1][0]) != "in":
            return None
        before = chunk[: statements[-1][1]]
        if before.strip():
            self.handle(before)
        return statements[-1][0]

    def copy_rows(self, statement: str, lines: list[str]) -> bool:
        """Load the data lines of a script's `COPY ... FROM STDIN` (psql's way)."""
        from rw_cli.handler.copy import copy_in_types
        from rw_cli.server.copy import parse_copy, parse_rows
        from rw_cli.shell.render import render_result

        try:
            stmt = parse_copy(statement)
            if stmt.binary:
                raise NotSupported("COPY FROM STDIN in binary format in a script", hint="use FORMAT text or csv")
            width = len(copy_in_types(self.session, stmt.table, stmt.columns))
            data = parse_rows(stmt, "".join(line + "\n" for line in lines).encode(), width)
            result = self.session.copy_in(stmt.table, stmt.columns, data)
        except RwError as err:
            self.runner.error(err, statement)
            self.failed = True
            return False
        self.runner.write_result(render_result(result, self.cfg.format))
        return True

    def run_script(self, text: str, stop_on_error: bool = False) -> bool:
        """Run a script as if typed line by line (`\\i`, `rw -f`, `rw -c`): SQL and backslash
        commands; the rows after a `COPY ... FROM STDIN` up to `\\.` are its data. Returns
        False when it stopped early: at `\\q`, at Ctrl-C, or at the first failure when
        `stop_on_error`."""
        buffer: list[str] = []
        chunks = iter(text.splitlines() + [None])
        for line in chunks:
            if line is not None:
                buffer.append(line)
                chunk = "\n".join(buffer)
                if not (chunk.strip() and is_complete(chunk)):
                    continue
            else:
                chunk = "\n".join(buffer)
                if not chunk.strip():
                    break
            buffer = []
            failed_before, self.failed = self.failed, False
            copy = self.copy_from_stdin(chunk) if line is not None else None
            if copy is not None:
                rows = []
                for data_line in chunks:
                    if data_line is None or data_line == "\\.":
                        break
                    rows.append(data_line)
                go_on = self.failed or self.copy_rows(copy, rows) or not stop_on_error
            else:
                go_on = self.handle(chunk)
            failed_now = self.failed
            self.failed = failed_before or failed_now
            if not go_on or (stop_on_error and failed_now) or self.runner.canceled:
                return False  # Ctrl-C ends the whole script, as in psql
            if self.next_input:  # SQL before a backslash command stays in the query buffer
                buffer, self.next_input = [self.next_input], ""
        return True


def _key_bindings():
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @Condition
    def not_searching() -> bool:
        from prompt_toolkit.application.current import get_app

        return not get_app().layout.is_searching

    @kb.add("enter", filter=not_searching)
    def _(event) -> None:
        buf = event.current_buffer
        if buf.complete_state and buf.complete_state.current_completion is not None:
            buf.apply_completion(buf.complete_state.current_completion)
            return
        if is_complete(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("escape", "enter")
    def _(event) -> None:  # Alt-Enter: always a new line
        event.current_buffer.insert_text("\n")

    return kb


def _history(path: str | None):
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    if path:
        try:
            ensure_history_file(path)
            return FileHistory(path)
        except OSError as e:
            sys.stderr.write(f"WARNING:  cannot use history file {path}: {e}\n")
    return InMemoryHistory()


def _lexer_and_style(cfg):
    if not cfg.use_color(sys.stdout):
        return None, None
    from prompt_toolkit.lexers import PygmentsLexer
    from prompt_toolkit.styles import style_from_pygments_cls
    from pygments.lexers.sql import PostgresLexer
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        style = style_from_pygments_cls(get_style_by_name(cfg.syntax_style))
    except ClassNotFound:
        sys.stderr.write(f"WARNING:  unknown syntax_style {cfg.syntax_style!r}\n")
        style = style_from_pygments_cls(get_style_by_name("default"))
    return PygmentsLexer(PostgresLexer), style


def run_shell(session, cfg=None, *, input=None, output=None, history: str | None | bool = True) -> None:
    """Read, run and print until `\\q` or Ctrl-D. `input`/`output` are prompt-toolkit
    Input/Output objects (tests pass pipe input and a dummy output); `history` is a path,
    None for no file, or True for the configured one."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application.current import get_app
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory

    from rw_cli.config import Config
    from rw_cli.shell.completer import SqlCompleter

    cfg = cfg or Config()
    shell = Shell(session, cfg)

    def prompt_continuation(width: int, line_number: int, is_soft_wrap: bool) -> str:
        if is_soft_wrap:
            return " " * width
        lines = get_app().current_buffer.document.lines
        return continuation_prompt("\n".join(lines[:line_number]) + "\n")

    kwargs = {}
    if input is not None:
        kwargs["input"] = input
    if output is not None:
        kwargs["output"] = output
    lexer, style = _lexer_and_style(cfg)
    prompt = PromptSession(
        message=PROMPT,
        multiline=True,
        history=_history(cfg.history_path if history is True else history),
        key_bindings=_key_bindings(),
        prompt_continuation=prompt_continuation,
        enable_history_search=False,
        completer=SqlCompleter(shell.relations),
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        lexer=lexer,
        style=style,
        include_default_pygments_style=False,
        vi_mode=cfg.vi,
        **kwargs,
    )
    from rw_cli import __version__

    shell.out.write(f"rw {__version__} ({cfg.engine}, data directory {getattr(session, 'data_dir', '?')})\n"
                    "Type \\? for help.\n\n")
    shell.out.flush()
    startup_gc.resume()  # the shell may wait long for its first statement (rw_cli.common.startup_gc)
    while True:
        default, shell.next_input = shell.next_input, ""
        shell.runner.canceled = False
        try:
            text = prompt.prompt(default=default)
        except KeyboardInterrupt:  # Ctrl-C: drop the input, keep going
            continue
        except EOFError:  # Ctrl-D on an empty line
            break
        if not shell.handle(text):
            break
    shell.runner.set_output(None)
