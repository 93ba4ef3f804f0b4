"""SELECTs bound once: the same statement text run again reuses its bound, transpiled form.

Parsing, binding (sqlglot's qualify) and transpiling a SELECT cost several milliseconds,
more than DuckDB takes to run a small query; dashboards, tests and drivers run the same
statements over and over between writes. What binding produces depends on the statement's
text, the catalog (relations, views, functions, privileges, system parameters) and the
session's parameters, and on nothing else once these conditions hold:
- the catalog is the same object at the same `version` (the session bumps it after every
  statement that may change it; a read-only session keeps its object while the committed
  catalog is the same: rw_cli.session);
- the session SET the same parameters (`SessionConfig.fingerprint`) and acts as its default
  user (another user's privileges are checked on the tree, each time);
- the query reads no system catalog (those rows are taken while binding) and is no primary
  key lookup (answered from the store before binding).
The rows are not kept: each run reads the committed snapshots anew.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import pyarrow as pa

from rw_cli.meta.catalog import Catalog, RelationCatalog

MAX_ENTRIES = 512
MAX_TEXT = 64 << 10  # longer texts are rarely run twice, and their keys cost to hash


@dataclass(frozen=True)
class BoundSelect:
    """A query bound and transpiled: what runs it, given the snapshots of its relations.
    It holds nothing of the data, so it stays valid while the catalog and the session's
    parameters stay the same (kept here across statements)."""

    sql: str                                   # DuckDB's SQL
    relations: dict[str, RelationCatalog]      # registered name -> relation
    system: dict[str, pa.Table]                # registered name -> rows of a system catalog
    names: list[str] | None                    # PostgreSQL's output names (None: DuckDB's)
    named_hidden: frozenset[str] = frozenset()  # hidden columns the query names (`_row_id`, ...)
    rw_timestamp: bool = False
    # registered name -> FOR SYSTEM_TIME AS OF expression, evaluated at each run (`now() - ...`)
    as_of: dict = field(default_factory=dict)
    # a one-relation query's key range (`point_lookup.PkRange`, or an index's:
    # `index_lookup.IndexRange`): where its snapshot is not kept, only that range is read
    key_range: object | None = None


@dataclass(frozen=True)
class Prepared:
    """A bound SELECT and what it was bound under."""

    catalog: Catalog  # the Catalog itself: held, so its id cannot be reused while kept
    version: int
    bound: BoundSelect


_ENTRIES: OrderedDict[tuple, Prepared] = OrderedDict()
_LOCK = threading.Lock()  # the server's connections run statements on their own threads


def _key(session, text: str) -> tuple | None:
    """What an entry for `text` is found under in this session, or None when the session
    must bind every statement (acting as another user)."""
    from rw_cli.handler.authz import current_user
    from rw_cli.meta.access import DEFAULT_USER

    if len(text) > MAX_TEXT:
        return None
    settings = getattr(session, "settings", None)
    if settings is None or current_user(session) != DEFAULT_USER:
        return None
    return id(session.catalog), text, settings.fingerprint()


def find(session, text: str) -> BoundSelect | None:
    """The bound form of statement `text`, when it was bound under the same catalog and
    parameters; None otherwise."""
    key = _key(session, text)
    if key is None:
        return None
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is None:
            return None
        if entry.catalog is not session.catalog or entry.version != session.catalog.version:
            del _ENTRIES[key]  # stale: it is bound again when run
            return None
        _ENTRIES.move_to_end(key)
        return entry.bound


def remember(session, text: str, bound: BoundSelect) -> None:
    """Keep `bound` for statement `text` (when it may be reused: see the module's doc)."""
    key = _key(session, text)
    if key is None or bound.system:
        return
    with _LOCK:
        _ENTRIES[key] = Prepared(session.catalog, session.catalog.version, bound)
        _ENTRIES.move_to_end(key)
        while len(_ENTRIES) > MAX_ENTRIES:
            _ENTRIES.popitem(last=False)


def clear() -> None:
    """Forget every bound statement."""
    with _LOCK:
        _ENTRIES.clear()
