"""Lexical statement splitting and the shell's "submit now?" rule.

Pure functions over text, no parser: a small scanner that knows PostgreSQL's quoting
(`'...'`, `E'...'` with backslash escapes, `"..."`, `$$...$$` / `$tag$...$tag$`), comments
(`--` to end of line, nested `/* */`) and bracket depth. A `;` splits statements only
outside all of those, as psql does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Any non-ASCII character may be part of an identifier or a dollar-quote tag, as in
# PostgreSQL. Written as a negated ASCII class: a class of the range \u0080-\uffff takes
# ~10 ms to compile, a tenth of what `rw -c` spends on start-up beyond its libraries.
_DOLLAR_TAG = re.compile(r"\$((?:[A-Za-z_]|[^\x00-\x7f])(?:[A-Za-z0-9_]|[^\x00-\x7f])*)?\$")
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_$]|[^\x00-\x7f]")

# characters that start or end nothing the scanner tracks, skipped a run at a time (`e` and `$`
# after an identifier's character: they start an E'' string or a dollar quote only after others)
_PLAIN = re.compile(r"(?:[^'\"$\\;()\[\]\-/eE]|(?<=[^\x00-\x23\x25-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f])[eE$])+")

_OPENERS = {"(": ")", "[": "]"}
_CLOSERS = {")", "]"}


@dataclass
class _Scan:
    """The outcome of scanning a text: statement spans and the state at the end."""

    spans: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each statement
    open: str | None = None  # the construct still open at the end: "'", '"', "$tag$", "/*", "(", "["
    open_at: int | None = None  # where that construct (a quote or a comment) begins
    ends_with_semicolon: bool = False  # the last significant token is a top-level `;`
    meta: int | None = None  # offset of a backslash command outside quotes and comments


def _scan(text: str, stop_at_meta: bool = False) -> _Scan:
    out = _Scan()
    n = len(text)
    i = 0
    stack: list[str] = []  # open brackets
    start: int | None = None  # first significant char of the current statement
    last_end = 0  # end of the last significant token of the current statement
    ends_semi = False

    def mark(begin: int, end: int) -> None:
        nonlocal start, last_end, ends_semi
        if start is None:
            start = begin
        last_end = end
        ends_semi = False

    while i < n:
        m = _PLAIN.match(text, i)
        if m is not None:  # a run of characters that open nothing (words, numbers, commas)
            j = m.end()
            run = text[i:j]
            body = run.strip()
            if body:
                begin = i + len(run) - len(run.lstrip())
                mark(begin, begin + len(body))
            i = j
            if i >= n:
                break
        c = text[i]
        if c.isspace():
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < n else ""
        # -- line comment
        if c == "-" and nxt == "-":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        # /* nested block comment */
        if c == "/" and nxt == "*":
            j, closed = _block_comment_end(text, i)
            if not closed:
                out.open, out.open_at = "/*", i
                i = n
                break
            i = j
            continue
        # 'string', E'string' with backslash escapes
        if c == "'" or (c in "eE" and nxt == "'" and not (i > 0 and _IDENT_CHAR.match(text[i - 1]))):
            escapes = c != "'"
            j, closed = _string_end(text, i + (2 if escapes else 1), "'", escapes)
            mark(i, min(j, n))
            if not closed:
                out.open, out.open_at = "'", i
                i = n
                break
            i = j
            continue
        # "quoted identifier"
        if c == '"':
            j, closed = _string_end(text, i + 1, '"', False)
            mark(i, j)
            if not closed:
                out.open, out.open_at = '"', i
                i = n
                break
            i = j
            continue
        # $tag$ dollar quoted string $tag$
        if c == "$" and not (i > 0 and _IDENT_CHAR.match(text[i - 1])):
            m = _DOLLAR_TAG.match(text, i)
            if m:
                tag = m.group(0)
                j = text.find(tag, m.end())
                if j < 0:
                    mark(i, n)
                    out.open, out.open_at = tag, i
                    i = n
                    break
                mark(i, j + len(tag))
                i = j + len(tag)
                continue
        if c == "\\" and stop_at_meta:  # a backslash command (`\\g`, `\\watch 2`) runs to the end of the text
            out.meta = i
            break
        if c in _OPENERS:
            stack.append(c)
        elif c in _CLOSERS:
            if stack and _OPENERS[stack[-1]] == c:
                stack.pop()
        elif c == ";" and not stack:
            if start is not None:
                out.spans.append((start, last_end))
            start = None
            ends_semi = True
            i += 1
            continue
        # an ordinary token character (identifiers and numbers are scanned as a run)
        j = i + 1
        if _IDENT_CHAR.match(c):
            while j < n and _IDENT_CHAR.match(text[j]):
                j += 1
        mark(i, j)
        i = j

    if start is not None:
        out.spans.append((start, last_end))
    if out.open is None and stack:
        out.open = stack[-1]
    out.ends_with_semicolon = ends_semi and out.open is None
    return out


def _string_end(text: str, j: int, quote: str, escapes: bool) -> tuple[int, bool]:
    """Where a quoted string or identifier whose body starts at `j` ends (after its closing
    quote; a doubled quote is one quote of the body; with `escapes`, a backslash escapes the
    next character), and whether it is closed."""
    n = len(text)
    while True:
        q = text.find(quote, j)
        if escapes:
            b = text.find("\\", j, n if q < 0 else q)
            if b >= 0:
                j = b + 2
                continue
        if q < 0:
            return n, False
        if q + 1 < n and text[q + 1] == quote:
            j = q + 2
            continue
        return q + 1, True


def split_statements(text: str) -> list[tuple[str, int]]:
    """Each statement's text (without the trailing `;` and surrounding whitespace or
    comments) and its 0-based start offset in `text`. Empty statements are dropped."""
    return [(text[s:e], s) for s, e in _scan(text).spans]


def _is_meta_command(text: str) -> bool:
    return text.lstrip().startswith("\\")


def split_meta(text: str) -> tuple[str, str | None]:
    """The SQL before a backslash command and the command (`"select 1 \\watch 2"` ->
    `("select 1 ", "\\watch 2")`); the command is None when there is none."""
    at = _scan(text, stop_at_meta=True).meta
    if at is None:
        return text, None
    return text[:at], text[at:].strip()


def is_complete(text: str) -> bool:
    """The shell's submit rule: empty input, a backslash meta command (`\\q`, `\\d t`,
    also after SQL: `select 1 \\watch 2`), or text ending with a `;` outside quotes,
    comments and brackets."""
    if not text.strip() or _is_meta_command(text):
        return True
    scan = _scan(text, stop_at_meta=True)
    return scan.ends_with_semicolon or scan.meta is not None


_UNTERMINATED = {"'": "quoted string", '"': "quoted identifier", "/*": "/* comment"}


def unterminated(text: str) -> tuple[str, int] | None:
    """PostgreSQL's lexer error for a quote or comment left open (`unterminated quoted
    string at or near "'abc"`) and the offset it points at; None when all are closed."""
    scan = _scan(text)
    if scan.open_at is None:
        return None
    what = _UNTERMINATED.get(scan.open, "dollar-quoted string")
    return f'unterminated {what} at or near "{text[scan.open_at:].rstrip()}"', scan.open_at


def why_incomplete(text: str) -> str | None:
    """The construct left open at the end of `text` (`'`, `"`, `$$` or `$tag$`, `/*`,
    `(` or `[`), for the continuation prompt; None when nothing is open."""
    if not text.strip() or _is_meta_command(text):
        return None
    return _scan(text).open


def _block_comment_end(text: str, i: int) -> tuple[int, bool]:
    """The index after the `/* ... */` opening at `i` (block comments nest), and whether it
    closes before the text ends."""
    depth, j, n = 1, i + 2, len(text)
    while j < n and depth:
        if text.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif text.startswith("*/", j):
            depth, j = depth - 1, j + 2
        else:
            j += 1
    return j, depth == 0


def comment_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of every comment outside quotes: `--` to the end of its line (the newline
    not included), nested `/* */`."""
    spans: list[tuple[int, int]] = []
    n, i = len(text), 0
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "-" and nxt == "-":
            j = text.find("\n", i)
            j = n if j < 0 else j
            spans.append((i, j))
            i = j
        elif c == "/" and nxt == "*":
            j = _block_comment_end(text, i)[0]
            spans.append((i, j))
            i = j
        elif c in "'\"":
            i = _quoted_end(text, i)
        elif c == "$" and (i == 0 or not _IDENT_CHAR.match(text[i - 1])) and _DOLLAR_TAG.match(text, i):
            tag = _DOLLAR_TAG.match(text, i).group(0)
            j = text.find(tag, i + len(tag))
            i = n if j < 0 else j + len(tag)
        else:
            i += 1
    return spans


def _quoted_end(text: str, i: int) -> int:
    """The index after the quoted literal or identifier opening at `i` ('' and "" repeat the
    quote; E'...' also escapes with a backslash)."""
    q, n = text[i], len(text)
    escapes = q == "'" and i > 0 and text[i - 1] in "eE" and (i < 2 or not _IDENT_CHAR.match(text[i - 2]))
    j = i + 1
    while j < n:
        if escapes and text[j] == "\\":
            j += 2
        elif text[j] == q:
            if j + 1 < n and text[j + 1] == q:
                j += 2
            else:
                return j + 1
        else:
            j += 1
    return n


def blank_comments(text: str) -> str:
    """`text` with its comments turned into spaces (newlines kept), so every position stays
    where it was: what reads a statement's words never trips on a comment between them."""
    if "--" not in text and "/*" not in text:
        return text
    chars = list(text)
    for a, b in comment_spans(text):
        for k in range(a, b):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)
