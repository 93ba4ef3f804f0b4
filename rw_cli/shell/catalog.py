"""What the shell knows about the catalog: a frozen snapshot read through the Session, for
completion, `\\d` and "did you mean" hints. Reading it is an in-process dict walk, so the
shell refreshes it synchronously whenever `signature` changes (after DDL)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    hidden: bool = False
    not_null: bool = False  # declared NOT NULL, or a column of a primary key the user gave
    default: str = ""  # the DEFAULT expression, or a generated column's "generated always as (...) stored"


@dataclass(frozen=True)
class Relation:
    id: int
    name: str
    kind: str  # "table" | "materialized view" | "view" | "source" | "index"
    columns: tuple[Column, ...] = ()
    pk: tuple[str, ...] = ()
    definition: str = ""

    @property
    def visible_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if not c.hidden)


def _catalog(session):
    return getattr(session, "catalog", None)


def signature(session) -> tuple:
    """Changes whenever a relation is created or dropped."""
    cat = _catalog(session)
    if cat is None:
        return ()
    return (getattr(cat, "next_id", None), tuple(sorted(getattr(cat, "relations", {}))))


def snapshot(session) -> tuple[Relation, ...]:
    """Every relation in creation order (empty when the session has no catalog)."""
    cat = _catalog(session)
    if cat is None:
        return ()
    rels = []
    for rid in sorted(cat.relations):
        r = cat.relations[rid]
        keys = set(getattr(r, "pk", [])) if getattr(r, "user_pk", False) else set()
        cols = tuple(Column(c.name, str(c.type), bool(getattr(c, "hidden", False)),
                            bool(getattr(c, "not_null", False)) or i in keys, _default_text(c))
                     for i, c in enumerate(r.columns))
        pk = tuple(r.columns[k].name for k in getattr(r, "pk", []) if k < len(r.columns))
        rels.append(Relation(rid, r.name, r.kind, cols, pk, getattr(r, "definition", "") or ""))
    return tuple(rels)


def _default_text(column) -> str:
    """psql's Default column: the DEFAULT expression, or how a generated column is computed."""
    generated = getattr(column, "generated", None)
    if generated:
        return f"generated always as ({generated}) stored"
    default = getattr(column, "default", None)
    return "" if default is None else str(default)
