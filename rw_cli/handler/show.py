"""SHOW DATABASES | SCHEMAS | USERS, SHOW TABLES | VIEWS | MATERIALIZED VIEWS | SOURCES |
SINKS [FROM schema] [LIKE pattern], SHOW INDEXES FROM relation.

As RisingWave lists them: relations named `schema.name`, from the schemas of the session's
search_path unless a schema is named, ordered by schema (in search-path order) then name.
"""
from __future__ import annotations

import re

from rw_cli.errors import CatalogError
from rw_cli.meta.access import DEFAULT_USER
from rw_cli.meta.catalog import (DEFAULT_SCHEMA, INDEX, MATERIALIZED_VIEW, SINK, SOURCE, SYSTEM_SCHEMA_NAMES, TABLE,
                                 VIEW)
from rw_cli.result import Result

LISTED = {"TABLES": TABLE, "VIEWS": VIEW, "MATERIALIZED VIEWS": MATERIALIZED_VIEW, "SOURCES": SOURCE,
          "SINKS": SINK}


def lists(what: str) -> bool:
    """Whether SHOW `what` is one of the listings this module answers."""
    return what in LISTED or what in ("DATABASES", "SCHEMAS", "INDEXES")


def handle(session, what: str, schema: str | None, like: str | None) -> Result:
    from rw_cli.handler.utility import text_result

    if what == "DATABASES":
        names = sorted(session.catalog.access.databases)
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "SCHEMAS":
        names = sorted([*SYSTEM_SCHEMA_NAMES, DEFAULT_SCHEMA, *session.catalog.schemas])
        return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])
    if what == "INDEXES":
        return _indexes(session, schema)
    names = list_relations(session, LISTED[what], schema, like)
    return text_result(f"SHOW {len(names)}", ["Name"], [[n] for n in names])


def search_path(session) -> list[str]:
    """The schemas of the session's search_path that exist (`"$user"`: the user's schema)."""
    raw = session.settings.get("search_path", '"$user", public') or ""
    out = []
    for item in raw.split(","):
        name = item.strip().strip('"')
        if name == "$user":
            name = getattr(session, "user", DEFAULT_USER)
        if (name == DEFAULT_SCHEMA or name in session.catalog.schemas) and name not in out:
            out.append(name)
    return out


def list_relations(session, kind: str, schema: str | None, like: str | None) -> list[str]:
    """`schema.name` of each relation of `kind` in `schema` (else the search path's schemas)."""
    catalog = session.catalog
    if schema is not None and schema != DEFAULT_SCHEMA and schema not in catalog.schemas:
        raise CatalogError(f"schema not found: {schema}")
    schemas = [schema] if schema is not None else search_path(session)
    pattern = _like(like) if like is not None else None
    out = []
    for s in schemas:
        names = sorted(r.name.rpartition(".")[2] for r in catalog.relations.values()
                       if r.kind == kind and (r.name.rpartition(".")[0] or DEFAULT_SCHEMA) == s)
        out += [f"{s}.{n}" for n in names if pattern is None or pattern.fullmatch(n)]
    return out


def _like(pattern: str) -> re.Pattern:
    """A LIKE pattern (`_` one character, `%` any) as a regular expression."""
    return re.compile("".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern),
                      re.DOTALL)


def _indexes(session, target: str | None) -> Result:
    """SHOW INDEXES FROM relation: each index's name, relation, key (with its order),
    included columns and distribution key."""
    from rw_cli.handler.utility import index_description, text_result

    if target is None:
        raise CatalogError("SHOW INDEXES needs FROM relation")
    catalog = session.catalog
    schema, _, bare = target.rpartition(".")
    rel = catalog.must_get(catalog.qualified(bare, schema or None))
    rows = []
    for idx in catalog.in_creation_order():
        if idx.kind == INDEX and rel.id in idx.dependencies:
            keys, include, dist = index_description(idx)
            rows.append([idx.name.rpartition(".")[2], rel.name.rpartition(".")[2], keys, include, dist])
    return text_result(f"SHOW {len(rows)}", ["Name", "On", "Key", "Include", "Distributed By"], rows)
