"""pg_get_viewdef, pg_get_indexdef, pg_relation_is_updatable: answered from the catalog when
a query is bound, as has_*_privilege is (rw_cli.sql.privileges).

Their object is a name (a string, or a string cast to regclass: `'v'::regclass`), literal in
the uses we know of (tools, tests); a call of literal arguments becomes a literal. A call
over columns keeps DuckDB's macro (no definition, NULL). Errors are RisingWave's.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError
from rw_cli.meta.catalog import INDEX, MATERIALIZED_VIEW, TABLE, VIEW, Catalog, RelationCatalog
from rw_cli.sql.output_name import replace_call

CATALOG_FUNCTIONS = frozenset({"pg_get_viewdef", "pg_get_indexdef", "pg_relation_is_updatable",
                               "obj_description", "col_description"})
# what pg_relation_is_updatable says of a table: INSERT, UPDATE and DELETE (PostgreSQL's bits
# 1 << CMD_UPDATE | 1 << CMD_INSERT | 1 << CMD_DELETE)
_UPDATABLE = 28


def answer_catalog_calls(calls: list[exp.Anonymous], catalog: Catalog) -> None:
    """Replace each call of literal arguments among `calls` by its answer, in place."""
    for call in calls:
        name = call.name.lower()
        if name not in CATALOG_FUNCTIONS or not call.expressions:
            continue
        if name in ("obj_description", "col_description"):
            described = _description(name, call.expressions, catalog)
            if described is not None:
                replace_call(call, described)
            continue
        args = [exp.Literal(this=f"-{a.this.this}", is_string=False) if isinstance(a, exp.Neg) and isinstance(a.this, exp.Literal)
                and not a.this.is_string else a for a in call.expressions]  # `-1`: a literal too
        if not all(isinstance(a, (exp.Literal, exp.Boolean)) for a in args) or not args[0].is_string:
            continue
        rel = relation_named(catalog, args[0].this)
        if name == "pg_relation_is_updatable":
            replace_call(call, exp.Literal.number(_UPDATABLE if rel.kind == TABLE else 0))
        elif name == "pg_get_viewdef":
            replace_call(call, exp.Literal.string(view_definition(rel)))
        else:
            column = int(args[1].this) if len(args) > 1 and isinstance(args[1], exp.Literal) else 0
            replace_call(call, exp.Literal.string(index_definition(catalog, rel, column)))


def _description(name: str, args: list[exp.Expression], catalog: Catalog) -> exp.Expression | None:
    """COMMENT ON's text: obj_description(oid [, 'pg_class']) of a relation,
    col_description(oid, column number) of a column (psql's \\dt+ and \\d+ call them over
    columns of oids), as a CASE over the commented relations, '' (as RisingWave answers) for
    an object without one; None for a call of other arguments (the macro answers '')."""
    if (name == "obj_description" and len(args) not in (1, 2)) or (name == "col_description" and len(args) != 2):
        return None
    if name == "obj_description" and len(args) == 2:
        kind = args[1]
        if isinstance(kind, exp.Literal) and kind.is_string and kind.this.lower().removeprefix("pg_catalog.") != "pg_class":
            return exp.Literal.string("")  # comments on other kinds of objects: none
    target = args[0]
    if isinstance(target, exp.Literal) and target.is_string:  # 't'::regclass, as a name
        target = exp.Literal.number(relation_named(catalog, target.this).id)
    oid = exp.cast(target.copy(), "BIGINT")
    ifs = []
    for rel in catalog.relations.values():
        visible = [c.name for c in rel.columns if not c.hidden]
        for key, text in rel.comments.items():
            if name == "obj_description" and key == "":
                cond = exp.EQ(this=oid.copy(), expression=exp.Literal.number(rel.id))
            elif name == "col_description" and key in visible:
                cond = exp.and_(exp.EQ(this=oid.copy(), expression=exp.Literal.number(rel.id)),
                                exp.EQ(this=exp.cast(args[1].copy(), "BIGINT"),
                                       expression=exp.Literal.number(visible.index(key) + 1)))
            else:
                continue
            ifs.append(exp.If(this=cond, true=exp.Literal.string(text)))
    # no comment: RisingWave's empty text (it answers '' for an object without one)
    return exp.cast(exp.Case(ifs=ifs, default=exp.Literal.string("")) if ifs else exp.Literal.string(""), "VARCHAR")


def relation_named(catalog: Catalog, name: str) -> RelationCatalog:
    """The relation a regclass name gives (as its cast resolves it), or an oid's (psql's
    `pg_get_viewdef('2'::oid, true)`)."""
    text = name.strip()
    if text.isdigit() and int(text) in catalog.relations:
        return catalog.relations[int(text)]
    parts = [p.strip('"') for p in text.split(".")]
    schema, bare = (parts[-2] if len(parts) > 1 else None), parts[-1]
    try:
        rel = catalog.get(catalog.qualified(bare, schema))
    except Exception:  # noqa: BLE001 - an unknown schema: no such class
        rel = None
    if rel is None:
        raise BindError(f"Invalid parameter name: class not found: {name}")
    return rel


def view_definition(rel: RelationCatalog) -> str:
    """A view's or MV's query, as RisingWave prints it (its own formatting of the query)."""
    from rw_cli.sql.dialect import parse_statement

    if rel.kind not in (VIEW, MATERIALIZED_VIEW):
        raise BindError(f"Invalid parameter oid: view or materialized view does not exist: {rel.id}")
    tree = parse_statement(rel.definition)
    query = tree.expression if isinstance(tree, exp.Create) else tree
    return query.sql(dialect="postgres") if query is not None else ""


def index_definition(catalog: Catalog, rel: RelationCatalog, column: int = 0) -> str:
    """An index's CREATE INDEX (`CREATE INDEX i ON t(a, (b + c) DESC) INCLUDE(d)`), or with
    `column` > 0 that column of the index (its keys, then its included columns; '' past
    them)."""
    from rw_cli.sql.dialect import parse_statement

    if rel.kind != INDEX:
        raise BindError(f"Invalid parameter oid: index not found: {rel.id}")
    index = parse_statement(rel.definition).this
    params = index.args.get("params")
    keys = []
    for o in (params.args.get("columns") or []) if params is not None else []:
        e = o.this if isinstance(o, exp.Ordered) else o
        text = e.sql(dialect="postgres") if isinstance(e, exp.Column) else f"({_unparen(e).sql(dialect='postgres')})"
        keys.append((text, isinstance(o, exp.Ordered) and bool(o.args.get("desc"))))
    include = [i.sql(dialect="postgres") for i in (params.args.get("include") or [])] if params is not None else []
    if column > 0:
        items = [k for k, _ in keys] + include
        return items[column - 1] if column <= len(items) else ""
    if column < 0:
        return ""
    table = catalog.relations.get(rel.dependencies[0]) if rel.dependencies else None
    on = table.name.rpartition(".")[2] if table is not None else index.args["table"].name
    out = f"CREATE INDEX {rel.name.rpartition('.')[2]} ON {on}({', '.join(k + (' DESC' if d else '') for k, d in keys)})"
    return out + (f" INCLUDE({', '.join(include)})" if include else "")


def _unparen(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e
