"""The prompt-toolkit completer: turns `completion.suggest` into names from the catalog.

The catalog comes from a callable (`Shell.relations`) that re-reads the session's catalog
only after DDL changed it, so completions are always current without a background thread
(reading the in-process catalog takes microseconds).
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from prompt_toolkit.completion import Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

from rw_cli.shell.catalog import Relation
from rw_cli.shell.completion import DATATYPES, FUNCTIONS, KEYWORDS, Suggestion, suggest


def _word_before_cursor(text: str) -> str:
    """The partial name before the cursor (`ord` in `select * from ord`, `\\d` at a command)."""
    i = len(text)
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_$"):
        i -= 1
    if i > 0 and text[i - 1] == "\\":
        return text[i - 1:]
    if i > 0 and text[i - 1] == '"':
        i -= 1
    return text[i:]


def _matches(word: str, name: str) -> bool:
    return name.lower().startswith(word.lower().lstrip('"'))


def _quote(name: str) -> str:
    if name.isidentifier() and name == name.lower() and name.upper() not in KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


def candidates(suggestions: Iterable[Suggestion], word: str, relations: Sequence[Relation]) -> list[tuple[str, str]]:
    """(text to insert, kind shown beside it), best first: columns, relations, functions,
    keywords. Pure, like `suggest`."""
    from rw_cli.shell import meta

    out: list[tuple[str, str]] = []
    upper = word[:1].isupper()
    for s in sorted(suggestions, key=lambda s: ("column", "relation", "value", "meta_command", "datatype",
                                                 "function", "keyword", "file").index(s.type)):
        if s.type == "column":
            wanted = set(s.relations)
            for r in relations:
                if r.name in wanted:
                    out += [(_quote(c.name), f"column ({r.name})") for c in r.visible_columns
                            if _matches(word, c.name)]
        elif s.type == "relation":
            out += [(_quote(r.name), r.kind) for r in relations
                    if (not s.kinds or r.kind in s.kinds) and _matches(word, r.name)]
        elif s.type == "function":
            out += [(f, "function") for f in FUNCTIONS if _matches(word, f)]
        elif s.type == "keyword":
            out += [(k if upper or not word else k.lower(), "keyword") for k in KEYWORDS
                    if _matches(word, k)]
        elif s.type == "datatype":
            out += [(t, "type") for t in DATATYPES if _matches(word, t)]
        elif s.type == "value":
            out += [(v, "") for v in s.values if _matches(word, v)]
        elif s.type == "meta_command":
            seen = set()
            for c in meta.ORDER:
                if c.name.startswith(word) and c.name not in seen:
                    seen.add(c.name)
                    out.append((c.name, c.help))
    seen_names: set[str] = set()
    unique = []
    for name, kind in out:
        if name not in seen_names:
            seen_names.add(name)
            unique.append((name, kind))
    return unique


class SqlCompleter(Completer):
    def __init__(self, relations: Callable[[], Sequence[Relation]]):
        self.relations = relations
        self._paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event):
        text = document.text_before_cursor
        suggestions = suggest(document.text, document.cursor_position)
        if any(s.type == "file" for s in suggestions):
            arg = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
            yield from self._paths.get_completions(Document(arg, len(arg)), complete_event)
            return
        word = _word_before_cursor(text)
        for name, kind in candidates(suggestions, word, self.relations()):
            yield Completion(name, start_position=-len(word), display_meta=kind)

