"""sqlglot's DuckDB dialect, which writes the SQL that DuckDB runs for every statement.

Building sqlglot's DuckDB generator parses ~20 SQL templates for functions of other
dialects (Snowflake's ZIPF, MINHASH, RANDSTR ...) that a PostgreSQL statement never
contains: about 20 ms of CPU, a sixth of what `rw -c "select 1"` spends beyond importing its
libraries. This module builds the dialect with those templates parsed when first read.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

_GENERATOR_MODULE = "sqlglot.generators.duckdb"
_lock = threading.Lock()
_dialect: Dialect | None = None


class _DeferredTemplate:
    """A template of the DuckDB generator, parsed on its first use (always through one of
    its attributes: sqlglot fills a template in with `exp.replace_placeholders`)."""

    def __init__(self, args: tuple, kwargs: dict) -> None:
        object.__setattr__(self, "_call", (args, kwargs))
        object.__setattr__(self, "_tree", None)

    def _parsed(self) -> exp.Expression:
        tree = object.__getattribute__(self, "_tree")
        if tree is None:
            args, kwargs = object.__getattribute__(self, "_call")
            tree = _maybe_parse(*args, **kwargs)
            object.__setattr__(self, "_tree", tree)
        return tree

    @property
    def __class__(self) -> type:  # isinstance(template, exp.Expression) holds
        return type(self._parsed())

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._parsed(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._parsed(), attr, value)


_maybe_parse = exp.maybe_parse


def _deferring_maybe_parse(*args: Any, **kwargs: Any) -> Any:
    """exp.maybe_parse, deferred when the DuckDB generator's module body calls it with text."""
    caller = sys._getframe(1).f_globals.get("__name__")
    if caller == _GENERATOR_MODULE and args and isinstance(args[0], str):
        return _DeferredTemplate(args, kwargs)
    return _maybe_parse(*args, **kwargs)


def duckdb_dialect() -> Dialect:
    """The DuckDB dialect (an instance, as `sql(dialect=...)` takes), built once."""
    global _dialect
    if _dialect is None:
        with _lock:
            if _dialect is None:
                if _GENERATOR_MODULE not in sys.modules:
                    exp.maybe_parse = _deferring_maybe_parse
                    try:
                        import sqlglot.dialects.duckdb  # noqa: F401  (registers the dialect)
                    finally:
                        exp.maybe_parse = _maybe_parse
                _dialect = Dialect.get_or_raise("duckdb")
    return _dialect
