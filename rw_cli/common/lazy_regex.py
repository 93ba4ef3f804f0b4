"""A regular expression compiled on first use.

The statement parser keeps ~30 patterns for RisingWave's statements that sqlglot does not
read (subscriptions, cursors, `ON CONFLICT`, `EMIT ON WINDOW CLOSE` ...). Compiling them all
when the module is imported cost ~10 ms of every `rw -c` run, though a statement uses only
the few that its first keyword selects. A `LazyRegex` compiles on the first call and then
costs what the compiled pattern costs.
"""
from __future__ import annotations

import re
from typing import Any


class LazyRegex:
    """Stands for `re.compile(pattern, flags)`: the first attribute read compiles it; the
    attribute is then kept on this object (so `.match` is the bound method of the pattern)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, attr: str) -> Any:
        value = getattr(re.compile(*self._args), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy regex {self._args[0]!r}>"


def lazy_regex(pattern: str, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)`, compiled when first used."""
    return LazyRegex(pattern, flags)
