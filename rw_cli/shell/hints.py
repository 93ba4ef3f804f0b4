""""Did you mean" for misspelled relations and columns, computed from the catalog snapshot.

Pure functions: given the error message, the failing statement and the relations, return a
hint and where the misspelled name is in the statement.
"""
from __future__ import annotations

import difflib
import re
from typing import Sequence

from rw_cli.shell.catalog import Relation

_MISSING = re.compile(r'^(relation|table|materialized view|column) "([^"]+)" does not exist')
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def _close(name: str, candidates: Sequence[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def locate(name: str, statement: str) -> int | None:
    """The offset of `name` as a whole word (or a quoted identifier) in `statement`."""
    m = re.search(r'(?<![A-Za-z0-9_$"])' + re.escape(name) + r'(?![A-Za-z0-9_$])', statement, re.I)
    if m is None:
        m = re.search(re.escape(f'"{name}"'), statement)
    return m.start() if m else None


def did_you_mean(message: str, statement: str, relations: Sequence[Relation]) -> tuple[str | None, int | None]:
    """(hint, offset of the unknown name in `statement`) for `relation "x" does not exist`
    and `column "x" does not exist`; (None, None) for other errors."""
    m = _MISSING.match(message)
    if not m:
        return None, None
    what, name = m.group(1), m.group(2)
    if "." in name and what == "column":
        name = name.rsplit(".", 1)[1]
    where = locate(name, statement)
    if what != "column":
        kinds = {"table": ("table",), "materialized view": ("materialized view",)}.get(what)
        pool = [r for r in relations if kinds is None or r.kind in kinds]
        best = _close(name, [r.name for r in pool])
        if best is None:
            return None, where
        kind = next(r.kind for r in pool if r.name == best)
        return f'Perhaps you meant the {kind} "{best}".', where
    words = {w.lower() for w in _WORD.findall(statement)}
    in_scope = [r for r in relations if r.name.lower() in words] or list(relations)
    owners: dict[str, str] = {}
    for r in in_scope:
        for c in r.visible_columns:
            owners.setdefault(c.name, r.name)
    best = _close(name, list(owners))
    if best is None:
        return None, where
    return f'Perhaps you meant to reference the column "{owners[best]}.{best}".', where
