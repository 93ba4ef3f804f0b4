"""Backslash commands with psql's letters and meanings. Each registers itself with
`@meta_command`; `\\?` is generated from the registry.

A command is a function `(shell, args, plus)`: `shell` is the running `repl.Shell`, `args` the
text after the command name, `plus` whether it was written with a trailing `+` (`\\d+`).
"""
from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Callable

from rw_cli.shell.render import render_table
from rw_cli.shell.terminal import no_control_echo

SECTIONS = ("General", "Query Buffer", "Input/Output", "Informational", "Formatting")


class Quit(Exception):
    """Raised by `\\q`."""


class MetaError(Exception):
    """A usage error of a backslash command: printed as psql does (`\\x: ...`)."""


@dataclass(frozen=True)
class MetaCommand:
    name: str
    args: str
    help: str
    section: str
    func: Callable
    aliases: tuple[str, ...] = ()
    plus: bool = False


COMMANDS: dict[str, MetaCommand] = {}  # every name and alias -> command
ORDER: list[MetaCommand] = []  # registration order, for `\?`


def meta_command(name: str, args: str = "", help: str = "", section: str = "General",
                 aliases: tuple[str, ...] = (), plus: bool = False):
    def register(func: Callable) -> Callable:
        cmd = MetaCommand(name, args, help, section, func, aliases, plus)
        for n in (name, *aliases):
            COMMANDS[n] = cmd
        ORDER.append(cmd)
        return func

    return register


def parse(text: str) -> tuple[str, bool, str]:
    """`"\\d+ t"` -> `("\\d", True, "t")`."""
    text = text.strip()
    head, _, rest = text.partition(" ")
    if "\t" in head:
        head, _, more = head.partition("\t")
        rest = more + " " + rest
    plus = head.endswith("+") and len(head) > 2
    if plus:
        head = head[:-1]
    return head, plus, rest.strip()


def run(shell, text: str) -> bool:
    """Run one backslash command; False when it failed. Raises Quit for `\\q`."""
    name, plus, args = parse(text)
    cmd = COMMANDS.get(name)
    if getattr(shell, "restrict_key", None) is not None and name != "\\unrestrict":
        shell.err.write("backslash commands are restricted; only \\unrestrict is allowed\n")
        shell.err.flush()
        return False
    if cmd is None or (plus and not cmd.plus):
        shell.err.write(f"invalid command {name}{'+' if plus else ''}\nTry \\? for help.\n")
        shell.err.flush()
        return False
    try:
        cmd.func(shell, args, plus)
        return True
    except MetaError as e:
        shell.err.write(f"{name}: {e}\n")
    except OSError as e:
        shell.err.write(f"{name}: {e.strerror or e}\n")
    finally:
        shell.err.flush()
    return False


def help_text() -> str:
    lines: list[str] = []
    for section in SECTIONS:
        cmds = [c for c in ORDER if c.section == section]
        if not cmds:
            continue
        lines.append(section)
        for c in cmds:
            usage = c.name + ("[+]" if c.plus else "") + (" " + c.args if c.args else "")
            lines.append(f"  {usage:<24}{c.help}")
        lines.append("")
    lines.append("A statement runs when it ends with `;` (Alt-Enter inserts a new line). Ctrl-C cancels")
    lines.append("the running statement or clears the input; Ctrl-D quits; Ctrl-R searches the history.")
    return "\n".join(lines) + "\n"


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError as e:
        raise MetaError(str(e)) from None


def _on_off(value: str, current: bool, what: str) -> bool:
    if not value:
        return not current
    v = value.lower()
    if v in ("on", "true", "1", "yes"):
        return True
    if v in ("off", "false", "0", "no"):
        return False
    raise MetaError(f'unrecognized value "{value}" for "{what}": Boolean expected')


# -- General -----------------------------------------------------------------------------------

@meta_command("\\restrict", "KEY", "allow no other backslash command until \\unrestrict KEY (pg_dump's scripts)")
def _restrict(shell, args: str, plus: bool) -> None:
    key = args.strip()
    if not key or not key.isalnum():
        raise MetaError("restrict key may only contain alphanumeric characters")
    shell.restrict_key = key


@meta_command("\\unrestrict", "KEY", "end \\restrict mode")
def _unrestrict(shell, args: str, plus: bool) -> None:
    key = getattr(shell, "restrict_key", None)
    if key is None:
        raise MetaError("not currently in restricted mode")
    if args.strip() != key:
        raise MetaError("wrong key")
    shell.restrict_key = None


@meta_command("\\q", help="quit rw", aliases=("\\quit",))
def _quit(shell, args, plus):
    raise Quit()


@meta_command("\\?", help="show this help", aliases=("\\h", "\\help"))
def _help(shell, args, plus):
    shell.out.write(help_text())


@meta_command("\\timing", "[on|off]", "toggle timing of statements")
def _timing(shell, args, plus):
    shell.cfg.timing = _on_off(args, shell.cfg.timing, "timing")
    shell.out.write(f"Timing is {'on' if shell.cfg.timing else 'off'}.\n")


_JOB_KINDS = ("materialized view", "index", "sink", "source")


def _job_status(shell) -> dict[str, str]:
    """Each job's progress as SHOW JOBS reports it (rows read, backlog, a Kafka source's lag
    per partition, rows delivered); empty where it cannot say (a read-only session)."""
    from rw_cli.errors import RwError

    try:
        return {str(r[0]): r[3] for r in shell.session.execute("SHOW JOBS").fetchall()}
    except RwError:
        return {}


@meta_command("\\jobs", help="list the streaming jobs (materialized views, indexes, sinks, sources)")
def _jobs(shell, args, plus):
    jobs = [r for r in shell.relations() if r.kind in _JOB_KINDS]
    status = _job_status(shell)
    rows = [[str(r.id), r.name, r.kind, status.get(str(r.id), "running"), " ".join(r.definition.split())]
            for r in jobs]
    shell.print(render_table(["Id", "Name", "Kind", "Status", "Definition"], rows, title="Stream jobs"))


@meta_command("\\watch", "[SEC] [c=N]", "run the query every SEC seconds (default 2) until Ctrl-C")
def _watch(shell, args, plus):
    interval, count = 2.0, None
    for word in _words(args):
        key, eq, value = word.partition("=")
        try:
            if eq and key in ("c", "count"):
                count = int(value)
            elif eq and key in ("i", "interval"):
                interval = float(value)
            elif not eq:
                interval = float(word)
            else:
                raise ValueError
        except ValueError:
            raise MetaError(f'incorrect interval value "{word}"') from None
    if interval < 0:
        raise MetaError(f'incorrect interval value "{args}"')
    query = shell.query_buffer or shell.last_query
    if not query.strip():
        raise MetaError("cannot be used with an empty query")
    shell.last_query = query
    done = 0
    with no_control_echo():
        try:
            while count is None or done < count:
                shell.out.write(f"{time.strftime('%c')} (every {interval:g}s)\n\n")
                if not shell.run_sql(query):
                    return
                done += 1
                if count is None or done < count:
                    time.sleep(interval)
        except KeyboardInterrupt:
            shell.out.flush()


# -- Query buffer --------------------------------------------------------------------------------

@meta_command("\\e", "[FILE]", "edit the query (or FILE) with $VISUAL / $EDITOR", section="Query Buffer",
              aliases=("\\edit",))
def _edit(shell, args, plus):
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    words = _words(args)
    if words:
        path, temp = os.path.expanduser(words[0]), False
    else:
        fd, path = tempfile.mkstemp(prefix="rw_edit_", suffix=".sql")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write((shell.query_buffer or shell.last_query).strip())
        temp = True
    try:
        rc = subprocess.call(f"{editor} {shlex.quote(path)}", shell=True)
        if rc != 0:
            raise MetaError(f"editor exited with status {rc}")
        with open(path, encoding="utf-8") as f:
            shell.next_input = f.read().rstrip("\n")
    finally:
        if temp:
            os.unlink(path)


@meta_command("\\g", help="run the query (also after SQL on the same line)", section="Query Buffer")
def _go(shell, args, plus):
    query = shell.query_buffer or shell.last_query
    if query.strip():
        shell.run_sql(query)


# -- Input/Output ------------------------------------------------------------------------------------

@meta_command("\\i", "FILE", "run the commands in FILE", section="Input/Output", aliases=("\\include",))
def _include(shell, args, plus):
    words = _words(args)
    if not words:
        raise MetaError("missing required argument")
    with open(os.path.expanduser(words[0]), encoding="utf-8") as f:
        shell.run_script(f.read())


@meta_command("\\o", "[FILE]", "send query results to FILE (or back to stdout)", section="Input/Output",
              aliases=("\\out",))
def _output(shell, args, plus):
    words = _words(args)
    shell.runner.set_output(words[0] if words else None)


@meta_command("\\copy", "...", "load or unload a table: COPY with a file name that needs no quotes",
              section="Input/Output")
def _copy(shell, args, plus):
    shell.run_sql(copy_statement(args))


_COPY_FILE = re.compile(r"""(?ix) ^(?P<head>.*?\b(?:from|to)\s+) (?P<file>'(?:[^']|'')*'|[^\s;]+) (?P<tail>.*)$""", re.S)


def copy_statement(args: str) -> str:
    """psql's `\\copy t from data.csv csv header` as the COPY statement it stands for: the
    file is read by rw itself either way (a file name without quotes gets them)."""
    depth, cut = 0, None
    for i, ch in enumerate(args):  # the FROM / TO after the table or the parenthesized query
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and re.match(r"(?i)\s(?:from|to)\s", args[i:]):
            cut = i
            break
    m = _COPY_FILE.match(args[cut:]) if cut is not None else None
    if m is None:
        raise MetaError("\\copy: arguments required: TABLE FROM|TO FILE [options]")
    file = m.group("file")
    if not file.startswith("'") and file.upper() not in ("STDIN", "STDOUT"):
        file = "'" + file.replace("'", "''") + "'"
    return f"COPY {args[:cut]}{m.group('head')}{file}{m.group('tail')}"


@meta_command("\\echo", "TEXT", "write TEXT to stdout", section="Input/Output")
def _echo(shell, args, plus):
    shell.out.write(" ".join(_words(args)) + "\n")


# -- Informational ------------------------------------------------------------------------------------

_KIND_TITLE = {"table": "Table", "materialized view": "Materialized view", "view": "View",
               "source": "Source", "index": "Index", "sink": "Sink"}


def _list(shell, kinds: tuple[str, ...] | None, pattern: str, plus: bool) -> None:
    rels = [r for r in shell.relations() if kinds is None or r.kind in kinds]
    if pattern:
        rels = [r for r in rels if fnmatch.fnmatchcase(r.name, pattern)]
    if not rels:
        if pattern:
            shell.err.write(f'Did not find any relation named "{pattern}".\n')
        else:
            shell.err.write("Did not find any relations.\n")
        return
    rels.sort(key=lambda r: r.name)
    columns = ["Schema", "Name", "Type"] + (["Columns", "Definition"] if plus else [])
    rows = []
    for r in rels:
        row = ["public", r.name, r.kind]
        if plus:
            row += [str(len(r.visible_columns)), " ".join(r.definition.split())]
        rows.append(row)
    shell.print(render_table(columns, rows, title="List of relations"))


def _describe(shell, name: str, plus: bool) -> None:
    matches = [r for r in shell.relations() if r.name == name or fnmatch.fnmatchcase(r.name, name)]
    if not matches:
        shell.err.write(f'Did not find any relation named "{name}".\n')
        return
    for r in matches:
        # psql's columns (no collations here), and with + whether rw hides the column
        columns = ["Column", "Type", "Collation", "Nullable", "Default"] + (["Hidden"] if plus else [])
        rows = [[c.name, c.type, "", "not null" if c.not_null else "", c.default]
                + (["true" if c.hidden else "false"] if plus else [])
                for c in r.columns if plus or not c.hidden]
        footer = []
        if r.pk and (plus or not all(c.hidden for c in r.columns if c.name in r.pk)):
            footer.append(f"Primary key: {', '.join(r.pk)}")
        if plus and r.definition:
            footer.append("Definition:")
            footer.append("    " + " ".join(r.definition.split()))
        title = f'{_KIND_TITLE.get(r.kind, r.kind.capitalize())} "public.{r.name}"'
        shell.print(render_table(columns, rows, title=title, footer="\n".join(footer) if footer else ""))


@meta_command("\\d", "[NAME]", "list relations, or describe NAME", section="Informational", plus=True)
def _d(shell, args, plus):
    words = _words(args)
    if words:
        _describe(shell, words[0], plus)
    else:
        _list(shell, None, "", plus)


def _lister(kinds: tuple[str, ...]):
    def list_kind(shell, args, plus):
        words = _words(args)
        _list(shell, kinds, words[0] if words else "", plus)

    return list_kind


meta_command("\\dt", "[PATTERN]", "list tables", section="Informational", plus=True)(_lister(("table",)))
meta_command("\\dv", "[PATTERN]", "list views", section="Informational", plus=True)(_lister(("view",)))
meta_command("\\dm", "[PATTERN]", "list materialized views", section="Informational",
             plus=True)(_lister(("materialized view",)))
meta_command("\\di", "[PATTERN]", "list indexes", section="Informational", plus=True)(_lister(("index",)))
meta_command("\\ds", "[PATTERN]", "list sources", section="Informational", plus=True)(_lister(("source",)))


def _sql_lister(sql: str):
    """A listing that is a statement's result (rendered as any result is)."""
    def list_by_sql(shell, args, plus):
        shell.run_sql(sql)

    return list_by_sql


meta_command("\\df", help="list functions", section="Informational")(_sql_lister("SHOW FUNCTIONS"))
meta_command("\\dn", help="list schemas", section="Informational")(_sql_lister("SHOW SCHEMAS"))
meta_command("\\l", help="list databases", section="Informational", aliases=("\\list",))(
    _sql_lister("SHOW DATABASES"))
meta_command("\\du", help="list users", section="Informational", aliases=("\\dg",))(_sql_lister(
    "SELECT name AS \"Role name\", concat_ws(', ', CASE WHEN is_super THEN 'Superuser' END, "
    "CASE WHEN create_db THEN 'Create DB' END, CASE WHEN create_user THEN 'Create role' END, "
    "CASE WHEN NOT can_login THEN 'Cannot login' END) AS \"Attributes\" FROM rw_catalog.rw_users ORDER BY name"))


# -- Formatting ------------------------------------------------------------------------------------

_EXPANDED_TEXT = {"on": "Expanded display is on.", "off": "Expanded display is off.",
                  "auto": "Expanded display is used automatically."}
_FORMAT_ALIASES = {"aligned": "table"}


def _set_expanded(shell, value: str) -> None:
    cfg = shell.cfg
    v = value.lower()
    if v == "auto":
        cfg.expanded = "auto"
    else:
        cfg.expanded = "on" if _on_off(value, cfg.expanded == "on", "expanded") else "off"
    if cfg.format == "expanded" and cfg.expanded == "off":
        cfg.format = "table"
    shell.out.write(_EXPANDED_TEXT[cfg.expanded] + "\n")


@meta_command("\\x", "[on|off|auto]", "toggle expanded output", section="Formatting")
def _x(shell, args, plus):
    _set_expanded(shell, args.strip())


def _pset_show(shell) -> None:
    cfg = shell.cfg
    pager = cfg.pager_command or "off"
    shell.out.write(f"expanded {cfg.expanded}\nformat   {cfg.format}\nnull     '{cfg.null}'\n"
                    f"pager    {pager}\n")


@meta_command("\\pset", "[NAME [VALUE]]", "set table output option (format, null, pager, expanded)",
              section="Formatting")
def _pset(shell, args, plus):
    from rw_cli.config import FORMATS

    words = _words(args)
    if not words:
        _pset_show(shell)
        return
    name, value = words[0], (words[1] if len(words) > 1 else "")
    cfg = shell.cfg
    if name == "format":
        if not value:
            shell.out.write(f"Output format is {cfg.format}.\n")
            return
        fmt = _FORMAT_ALIASES.get(value.lower(), value.lower())
        if fmt not in FORMATS:
            raise MetaError(f"allowed formats are {', '.join(FORMATS)}")
        cfg.format = fmt
        shell.out.write(f"Output format is {fmt}.\n")
    elif name == "null":
        cfg.null = value
        shell.out.write(f'Null display is "{value}".\n')
    elif name == "pager":
        if value and value.lower() not in ("on", "off", "true", "false", "always"):
            cfg.pager = value
        else:
            on = _on_off(value, bool(cfg.pager_command), "pager")
            cfg.pager = None if on else ""
        shell.out.write(f"Pager usage is {'on' if cfg.pager_command else 'off'}.\n")
    elif name in ("expanded", "x"):
        _set_expanded(shell, value)
    else:
        raise MetaError(f"unknown option: {name}")

