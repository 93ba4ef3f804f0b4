"""DROP TABLE | MATERIALIZED VIEW | VIEW | INDEX [IF EXISTS] name [CASCADE].

Refused while something depends on the relation, unless CASCADE drops the dependents too;
a table's or MV's indexes and subscriptions go with it (RisingWave keeps neither among the
objects that hold a relation in place)."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import CatalogError, NotSupported
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW
from rw_cli.result import Result


def handle(session, tree: exp.Drop) -> Result:
    kind = (tree.args.get("kind") or "").upper()
    if kind == "TABLE":
        want, tag = TABLE, "DROP_TABLE"
    elif kind == "VIEW" and tree.args.get("materialized"):
        want, tag = MATERIALIZED_VIEW, "DROP_MATERIALIZED_VIEW"
    elif kind == "VIEW":
        want, tag = VIEW, "DROP_VIEW"
    elif kind == "INDEX":
        want, tag = INDEX, "DROP_INDEX"
    elif kind == "SOURCE":
        want, tag = SOURCE, "DROP_SOURCE"
    elif kind == "SINK":
        want, tag = SINK, "DROP_SINK"
    else:
        raise NotSupported(f"DROP {kind}")
    cascade = bool(tree.args.get("cascade"))
    check_cascade_allowed(session, cascade, kind if want != MATERIALIZED_VIEW else "MATERIALIZED VIEW")
    for table in tree.args.get("tables") or [tree.this]:
        check_current_database(table)
        try:
            name = session.catalog.qualified(table.name, table.text("db"))
        except CatalogError:
            if tree.args.get("exists"):
                continue
            raise
        rel = session.catalog.get(name)
        if rel is None or rel.kind != want:
            if tree.args.get("exists"):
                continue
            raise wrong_kind(name, rel, want)
        from rw_cli.handler.authz import require_owner

        require_owner(session, rel)
        victims = with_dependents(session.catalog, rel)
        blocking = [d for d in victims[:-1] if d.kind not in _GO_ALONG and not cascade]
        if blocking:
            raise in_use(session.catalog, rel, want, blocking[0])
        for victim in victims:
            drop_relation(session, victim)
    session.barrier()
    return Result(tag)


# the dependents a DROP without CASCADE takes along instead of refusing
_GO_ALONG = (INDEX, SUBSCRIPTION)


# the kinds RisingWave keeps as one kind of catalog entry (a table catalog): a DROP of one
# of them names another, it says which DROP to use; else the object is just not found
_TABLE_CATALOG_KINDS = (TABLE, MATERIALIZED_VIEW, INDEX)


def wrong_kind(name: str, rel, want: str) -> CatalogError:
    """The error of a DROP (or ALTER) of `want` `name`, where `rel` (None: nothing) is
    what that name holds, in RisingWave's words: `table not found: t`, or `Use `DROP TABLE`
    to drop a table.` when both kinds are stored as tables."""
    if rel is not None and rel.kind in _TABLE_CATALOG_KINDS and want in (*_TABLE_CATALOG_KINDS, SOURCE):
        article = "an" if rel.kind == INDEX else "a"
        return CatalogError(f'"{name}" is a {rel.kind}, not a {want}. '
                            f"Use `DROP {rel.kind.upper()}` to drop {article} {rel.kind}.")
    hint = f'"{name}" is a {rel.kind}: use DROP {rel.kind.upper()}' if rel is not None else None
    return CatalogError(f"{want} not found: {name}", hint=hint)


def in_use(catalog, rel, want: str, first) -> CatalogError:
    """The error of a DROP without CASCADE of `rel`, which others depend on (`first` one of
    them): a permission error in RisingWave's words, old (`other relation(s) depend on it`)
    and new (`table used by 1 other objects`)."""
    users = [d for d in catalog.dependents(rel.id) if d.kind not in _GO_ALONG]
    incoming = [d.name for d in users if d.kind == SINK and d.target == rel.id]
    if incoming:  # sinks that write into the table (RisingWave's own words for them)
        return CatalogError(f"Permission denied: Table used by incoming sinks: {', '.join(incoming)}",
                            hint=f'{first.kind} "{first.name}" depends on it; drop the sinks first, '
                                 "or use DROP TABLE ... CASCADE to drop them too")
    return CatalogError(f"Permission denied: {want} used by {len(users)} other objects; "
                        f'cannot drop {want} "{rel.name}" because other relation(s) depend on it',
                        hint=f'{first.kind} "{first.name}" depends on it; '
                             f"use DROP ... CASCADE to drop the dependent objects too")


def check_sinks_into_kept_tables(victims: list, named: int | None = None) -> None:
    """DROP SCHEMA ... CASCADE does not drop a sink into a table it keeps (RisingWave refuses:
    the table's job would change under it); the sink must be dropped by name, or its table
    with it. (DROP TABLE ... CASCADE of a sink's source drops the sink, and the table it
    wrote into keeps its rows: RisingWave's cascade_drop and sink_into_table_ignore_delete.)
    `named`: the id of the relation the DROP names (a sink dropped by name is no cascade)."""
    ids = {v.id for v in victims}
    for v in victims:
        if v.kind == SINK and v.target is not None and v.id != named and v.target not in ids:
            raise CatalogError(f'Found sink into table in dependency: sink "{v.name}"',
                               hint=f"drop the sink first (DROP SINK {v.name}), or its target table with CASCADE")


def check_cascade_allowed(session, cascade: bool, word: str) -> None:
    """A session with `allow_drop_cascade = false` refuses every DROP ... CASCADE (RisingWave's
    guard against dropping more than named), whether or not anything depends on the object."""
    if cascade and not session.settings.allow_drop_cascade:
        raise CatalogError(f"DROP {word} CASCADE is disabled",
                           hint="SET allow_drop_cascade = true to drop the dependent objects too")


def check_current_database(table: exp.Table) -> None:
    """A name `db.schema.name` must be in the current database (one per data directory)."""
    from rw_cli.meta.access import DEFAULT_DATABASE

    db = table.text("catalog")
    if db and db != DEFAULT_DATABASE:
        raise CatalogError(f'database name "{db}" not equal to current database name "{DEFAULT_DATABASE}"')


def with_dependents(catalog, rel) -> list:
    """`rel` and everything that depends on it, dependents first (newest first)."""
    seen = {rel.id: rel}
    frontier = [rel]
    while frontier:
        nxt = []
        for r in frontier:
            for d in catalog.dependents(r.id):
                if d.id not in seen:
                    seen[d.id] = d
                    nxt.append(d)
        frontier = nxt
    return sorted(seen.values(), key=lambda r: -r.id)


def drop_relation(session, rel) -> None:
    if rel.kind == VIEW:
        session.catalog.remove(rel.id)
        return
    from rw_cli.stream.job import drop_job

    drop_job(session, rel)
