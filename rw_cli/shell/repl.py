"""The interactive shell: prompt-toolkit input, psql-like prompts, results via format.py.

Enter submits when the text is complete (`rw_cli.sql.split.is_complete`: a `;` outside
quotes/comments/brackets, or a backslash command); otherwise it starts a new line and the
continuation prompt shows what is still open (`rw'> `, `rw(> `, `rw-> `).
"""
from __future__ import annotations

import os
import sys
from typing import TextIO

from rw_cli.shell.format import render_notices, render_result
from rw_cli.sql.split import is_complete, why_incomplete

PROMPT = "rw=> "
HELP = """\
General
  \\q          quit rw
  \\?          show this help
Input
  A statement runs when it ends with `;`. Ctrl-C clears the input, Ctrl-D quits.
"""

_OPEN_CHAR = {"'": "'", '"': '"', "/*": "*", "(": "(", "[": "["}


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


def handle_input(session, text: str, out: TextIO | None = None, err: TextIO | None = None) -> bool:
    """Run one submitted input: a meta command or SQL. Returns False when the shell should
    quit."""
    out = out or sys.stdout
    err = err or sys.stderr
    stripped = text.strip()
    if not stripped:
        return True
    if stripped.startswith("\\"):
        cmd = stripped.split()[0]
        if cmd in ("\\q", "\\quit"):
            return False
        if cmd in ("\\?", "\\h", "\\help"):
            out.write(HELP)
            return True
        err.write(f"invalid command {cmd}\nTry \\? for help.\n")
        return True
    try:
        for result in session.execute_iter(text):
            notices = render_notices(result)
            if notices:
                err.write(notices)
            out.write(render_result(result))
            out.flush()
    except KeyboardInterrupt:
        err.write("Cancel request sent\n")
    except Exception as e:  # noqa: BLE001 - the shell reports every error and goes on
        from rw_cli.cli import _render_exception

        out.flush()
        err.write(_render_exception(e, text))
    err.flush()
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
        if is_complete(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("escape", "enter")
    def _(event) -> None:  # Alt-Enter: always a new line
        event.current_buffer.insert_text("\n")

    return kb


def run_shell(session, history_path: str | None, *, input=None, output=None) -> None:
    """Read, run and print until `\\q` or Ctrl-D. `input`/`output` are prompt-toolkit
    Input/Output objects (tests pass pipe input and a dummy output)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application.current import get_app
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    history = InMemoryHistory()
    if history_path:
        try:
            ensure_history_file(history_path)
            history = FileHistory(history_path)
        except OSError as e:
            sys.stderr.write(f"WARNING:  cannot use history file {history_path}: {e}\n")

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
    prompt = PromptSession(
        message=PROMPT,
        multiline=True,
        history=history,
        key_bindings=_key_bindings(),
        prompt_continuation=prompt_continuation,
        enable_history_search=False,
        **kwargs,
    )
    while True:
        try:
            text = prompt.prompt()
        except KeyboardInterrupt:  # Ctrl-C: drop the input, keep going
            continue
        except EOFError:  # Ctrl-D on an empty line
            break
        if not handle_input(session, text):
            break
