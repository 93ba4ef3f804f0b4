"""sqllogictest files, as sqllogictest-rs (RisingWave's runner) reads them.

SQLite's classic files (`*.test`, see is_classic) have the same records; only their results
are written differently (one value per line, or `N values hashing to MD5`: see classic.py).

A file is a sequence of records separated by blank lines:

    statement ok | statement error [regex] | statement count N
    query <types> [nosort|rowsort|valuesort] [label] | query error [regex]
    include <path-or-glob>     skipif <engine>     onlyif <engine>
    control sortmode <mode>    sleep 1s            halt        hash-threshold N

The SQL of a statement or query starts on the line after its header (even when that line
is blank) and runs until a blank line or `----`. A query's expected rows follow `----`
until a blank line; an expected error message after `----` runs until two blank lines.
`statement`/`query` headers may end with `retry N backoff <duration>`.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field

ENGINE = "risingwave"
# the names a classic (SQLite-corpus) file's `skipif` / `onlyif` address rw by: its records
# checked against PostgreSQL apply to rw, as do RisingWave-format conditions
CLASSIC_ENGINES = frozenset({"postgresql", "rw", ENGINE})
CLASSIC_SUFFIX = ".test"
SORT_MODES = ("nosort", "rowsort", "valuesort")


class SltParseError(Exception):
    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass
class Record:
    """One record; `line` is 1-based, of its header."""

    kind: str  # statement | query | include | control | sleep | halt | hash-threshold | skipped
    path: str
    line: int
    sql: str = ""
    expect_error: bool = False
    error_regex: str | None = None
    error_text: str | None = None  # the multi-line expected error after `----`
    types: str = ""
    sort_mode: str | None = None  # None: the file's current `control sortmode`
    label: str | None = None
    expected: list[str] = field(default_factory=list)
    retry: int = 0
    backoff_s: float = 0.0
    arg: str = ""  # include pattern, control setting, sleep duration
    conditions: list[tuple[str, str]] = field(default_factory=list)  # (skipif|onlyif, engine)
    connection: str | None = None  # `connection name` before it: run on that connection

    @property
    def counted(self) -> bool:
        """Statements and queries are what pass or fail."""
        return self.kind in ("statement", "query")

    def applies(self, engine: str | frozenset[str] = ENGINE) -> bool:
        """Whether the record's `skipif` / `onlyif` conditions let an engine answering to
        `engine` (one name or several) run it."""
        names = frozenset((engine,)) if isinstance(engine, str) else engine
        for cond, name in self.conditions:
            if cond == "skipif" and name in names:
                return False
            if cond == "onlyif" and name not in names:
                return False
        return True


def is_classic(path: str) -> bool:
    """SQLite's classic sqllogictest files end in `.test`; RisingWave's in `.slt`/`.slt.part`.
    The two differ in how results are written and compared, not in their records."""
    return path.endswith(CLASSIC_SUFFIX)


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")


def parse_duration(text: str) -> float:
    """`1s`, `500ms`, `2m`, `1h` as seconds."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"bad duration {text!r}")
    value = float(m.group(1))
    return value * {"ms": 0.001, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[m.group(2)]


def _header_tokens(line: str) -> list[str]:
    # a `#` after the header words starts a comment
    if " #" in line:
        line = line[: line.index(" #")]
    return line.split()


def _take_retry(tokens: list[str], rec: Record, path: str, lineno: int) -> list[str]:
    if "retry" in tokens:
        i = tokens.index("retry")
        try:
            rec.retry = int(tokens[i + 1])
            if len(tokens) > i + 3 and tokens[i + 2] == "backoff":
                rec.backoff_s = parse_duration(tokens[i + 3])
        except (IndexError, ValueError):
            raise SltParseError(path, lineno, "expected `retry N backoff DURATION`") from None
        tokens = tokens[:i]
    return tokens


def _error_regex(raw: str, rec: Record) -> str | None:
    """What follows `statement error` / `query error` on the header line."""
    rest = raw.strip().split(None, 2)[2:]
    text = rest[0] if rest else ""
    if " #" in text:
        text = text.split(" #")[0]
    if rec.retry:
        text = re.sub(r"\s*\bretry\s+\d+.*$", "", text)
    return text.strip() or None


def parse(text: str, path: str = "<string>") -> list[Record]:
    """All records of one file, in order (includes are not expanded here)."""
    lines = text.splitlines()
    n = len(lines)
    records: list[Record] = []
    conditions: list[tuple[str, str]] = []
    connection: str | None = None
    i = 0

    def read_sql(start: int) -> tuple[str, int]:
        """SQL from line `start` until a blank line or `----`; the first line is always SQL."""
        body: list[str] = []
        j = start
        while j < n:
            ln = lines[j]
            if j > start and (not ln.strip() or ln.strip() == "----"):
                break
            if ln.strip() == "----":
                break
            if not ln.lstrip().startswith("#"):
                body.append(ln)
            j += 1
        return "\n".join(body).strip(), j

    def read_rows(start: int) -> tuple[list[str], int]:
        rows: list[str] = []
        j = start
        while j < n and lines[j].strip():
            rows.append(lines[j])
            j += 1
        return rows, j

    def read_error_text(start: int) -> tuple[str, int]:
        body: list[str] = []
        j = start
        while j < n:
            if not lines[j].strip() and (j + 1 >= n or not lines[j + 1].strip()):
                j += 2
                break
            body.append(lines[j])
            j += 1
        return "\n".join(body).strip(), j

    while i < n:
        raw = lines[i]
        line = raw.strip()
        lineno = i + 1
        if not line or line.startswith(("#", "--")):  # `--`: an SQL comment between records
            i += 1
            continue
        tokens = _header_tokens(line)
        head = tokens[0]
        if head in ("skipif", "onlyif"):
            if len(tokens) < 2:
                raise SltParseError(path, lineno, f"{head} needs an engine name")
            conditions.append((head, tokens[1]))
            i += 1
            continue
        if head == "connection" and len(tokens) == 2:  # the next record runs on that connection
            connection = tokens[1]
            i += 1
            continue
        rec = Record(kind=head, path=path, line=lineno, conditions=conditions, connection=connection)
        conditions, connection = [], None
        if head == "statement":
            tokens = _take_retry(tokens, rec, path, lineno)
            mode = tokens[1] if len(tokens) > 1 else ""
            if mode == "error":
                rec.expect_error = True
                rec.error_regex = _error_regex(raw, rec)
            elif mode not in ("ok", "count"):
                raise SltParseError(path, lineno, f"unknown statement mode {mode!r}")
            rec.sql, i = read_sql(i + 1)
            if i < n and lines[i].strip() == "----":
                if rec.expect_error and rec.error_regex is None:
                    rec.error_text, i = read_error_text(i + 1)
                else:  # results of a statement, or an empty block after `error <regex>`
                    _, i = read_rows(i + 1)
        elif head == "query":
            tokens = _take_retry(tokens, rec, path, lineno)
            if len(tokens) > 1 and tokens[1] == "error":
                rec.expect_error = True
                rec.error_regex = _error_regex(raw, rec)
            else:
                rec.types = tokens[1] if len(tokens) > 1 else ""
                rest = tokens[2:]
                if rest and rest[0] in SORT_MODES:
                    rec.sort_mode = rest.pop(0)
                if rest:
                    rec.label = rest[0]
            rec.sql, i = read_sql(i + 1)
            if i < n and lines[i].strip() == "----":
                if rec.expect_error and rec.error_regex is None:
                    rec.error_text, i = read_error_text(i + 1)
                elif rec.expect_error:  # `query error <regex>` then `----`: the regex is what counts
                    _, i = read_rows(i + 1)
                else:
                    rec.expected, i = read_rows(i + 1)
        elif head == "include":
            rec.arg = line.split(None, 1)[1].strip() if len(tokens) > 1 else ""
            if not rec.arg:
                raise SltParseError(path, lineno, "include needs a path")
            i += 1
        elif head == "control":
            if len(tokens) < 3 or tokens[1] != "sortmode" or tokens[2] not in SORT_MODES:
                # other controls (e.g. substitution) are accepted and ignored
                rec.kind, rec.arg = "control-other", " ".join(tokens[1:])
            else:
                rec.arg = tokens[2]
            i += 1
        elif head == "sleep":
            rec.arg = tokens[1] if len(tokens) > 1 else "0s"
            i += 1
        elif head == "restart":
            # rw's own extension: close the database (checkpointing) and open it again
            i += 1
        elif head in ("halt", "hash-threshold"):
            rec.arg = " ".join(tokens[1:])
            i += 1
        else:
            # an unknown record (`system ok`, `connection`, ...): skip its body
            rec.kind = "unsupported"
            rec.arg = line
            j = i + 1
            while j < n and lines[j].strip():
                j += 1
            i = j
        records.append(rec)
    return records


def parse_file(path: str) -> list[Record]:
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path)


def include_paths(rec: Record) -> list[str]:
    """The files an `include` names: relative to the including file's folder or absolute,
    globs expanded in sorted order."""
    pattern = rec.arg
    if not os.path.isabs(pattern):
        pattern = os.path.join(os.path.dirname(rec.path) or ".", pattern)
    pattern = os.path.normpath(pattern)
    if glob.has_magic(pattern):
        return sorted(glob.glob(pattern))
    return [pattern]
