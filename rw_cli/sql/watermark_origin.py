"""Which table's watermark a column of a materialized view carries.

RisingWave derives watermarks through a plan: a column that passes a watermarked column on
unchanged (a projection, a filter, a group key, the left side of a temporal join) carries its
watermark downstream, so EMIT ON WINDOW CLOSE works over an MV on a watermarked table, not
only over the table itself. Here an MV's column is traced back through its definition (and
the definitions of the MVs it reads) to the table whose watermark it carries. A column that a
regular join, an expression or an aggregate produces carries none.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.meta.catalog import MATERIALIZED_VIEW, Catalog, RelationCatalog

_MAX_DEPTH = 32


def watermark_origin(catalog: Catalog, rel: RelationCatalog, column: str,
                     depth: int = 0) -> RelationCatalog | None:
    """The table whose watermark `rel.column` carries (`rel` itself for a table watermarked on
    that column), or None."""
    if rel.watermark:
        return rel if rel.watermark[0] == column else None
    if rel.kind != MATERIALIZED_VIEW or depth > _MAX_DEPTH or not rel.definition:
        return None
    select = _definition_select(rel.definition)
    if select is None:
        return None
    source = _carrier(select, rel, column)
    if source is None:
        return None
    table, name = source
    upstream = catalog.get(catalog.qualified(table.name, table.text("db")))
    if upstream is None:
        return None
    return watermark_origin(catalog, upstream, name, depth + 1)


def _definition_select(definition: str) -> exp.Select | None:
    from rw_cli.sql.dialect import parse_statement

    try:
        tree = parse_statement(definition)
    except Exception:  # a definition this version cannot read carries nothing: no EOWC over it
        return None
    if isinstance(tree, exp.Create):
        tree = tree.expression
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def _carrier(select: exp.Select, rel: RelationCatalog, column: str) -> tuple[exp.Table, str] | None:
    """The FROM table and its column that the view's output `column` passes on unchanged:
    from the first FROM item, when every join is a temporal one (its left side's columns pass
    through) and a GROUP BY, if any, groups by that column."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table) or not isinstance(from_.this.this, exp.Identifier):
        return None
    table = from_.this
    if any(not (isinstance(j.this, exp.Table) and j.this.args.get("version") is not None)
           for j in select.args.get("joins") or []):
        return None
    items = select.expressions
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)) for e in items):
        item = next((e for e in items if isinstance(e, exp.Column) and e.name == column), None)
        name = column if item is None else item.name
    else:
        visible = [c.name for c in rel.visible_columns]
        if column not in visible or visible.index(column) >= len(items):
            return None
        item = items[visible.index(column)]
        inner = item.this if isinstance(item, exp.Alias) else item
        if not isinstance(inner, exp.Column):
            return None
        item, name = inner, inner.name
    if item is not None and item.table and item.table != table.alias_or_name:
        return None
    group = select.args.get("group")
    if group is not None and not any(isinstance(g, exp.Column) and g.name == name for g in group.expressions):
        return None
    return table, name


def watermark_lost(query: exp.Expression, column: str) -> bool:
    """Whether a query's output `column` certainly lost the watermark of the column it comes
    from on its way up through the FROM subqueries: a top-N (ORDER BY ... LIMIT) keeps it only
    when it orders by that column first, ascending (rows above the watermark may still be
    evicted, those below never), and a GROUP BY only on a group key. What this does not follow
    (joins, expressions, set operations) is left to the rest of the planning."""
    select = query
    name = column
    for _ in range(_MAX_DEPTH):
        while isinstance(select, exp.Subquery):
            select = select.this
        if not isinstance(select, exp.Select):
            return False
        if select.args.get("limit") is not None and select.args.get("order") is not None:
            first = select.args["order"].expressions[0]
            if not (isinstance(first.this, exp.Column) and first.this.name == name and not first.args.get("desc")):
                return True
        group = select.args.get("group")
        if group is not None and not any(isinstance(g, exp.Column) and g.name == name for g in group.expressions):
            return True
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None or not isinstance(from_.this, exp.Subquery) or select.args.get("joins"):
            return False
        item = next((e for e in select.expressions if e.alias_or_name == name), None)
        if item is not None:
            inner = item.this if isinstance(item, exp.Alias) else item
            if not isinstance(inner, exp.Column):
                return False
            name = inner.name
        elif not any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                     for e in select.expressions):
            return False
        select = from_.this
    return False
