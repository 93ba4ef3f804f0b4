"""Stored definitions after ALTER ... RENAME TO: the text of each definition that names the
renamed relation, edited in place.

Edits are made on the text, at the positions the parser recorded, so that everything else
the user wrote (clauses sqlglot does not keep in its tree, layout) stays as it was. As
RisingWave does, a reference in a FROM or JOIN that had no alias keeps the old name as its
alias (`FROM t` becomes `FROM t2 AS t`), so `t.col` elsewhere in the query still resolves.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

_PLAIN = re.compile(r"[a-z_][a-z0-9_$]*")
# CREATE SINK name FROM relation: parsed as SELECT * FROM relation, but takes no alias
_SINK_FROM = re.compile(r"^\s*create\s+sink\s+(?:if\s+not\s+exists\s+)?\S+\s+from\s", re.IGNORECASE)


def quote_name(name: str) -> str:
    """An identifier as SQL text: bare when folding leaves it unchanged, else quoted."""
    return name if _PLAIN.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def _span(node: exp.Expression) -> tuple[int, int] | None:
    """The [start, end) of an identifier in the text it was parsed from."""
    ident = node.this if isinstance(node, exp.Table) else node
    meta = getattr(ident, "meta", None) or {}
    if "start" not in meta or "end" not in meta:
        return None
    return meta["start"], meta["end"] + 1


def rename_references(definition: str, renames: dict[str, str], resolve: Callable[[exp.Table], str | None]) -> str:
    """`definition` with every reference to a relation of `renames` (catalog name -> its
    new name within the same schema) renamed, all at once (a swap is two renames); `resolve`
    gives the catalog name a table reference means (None for a CTE or an unknown schema)."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(definition)
    created = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(created, exp.Schema):
        created = created.this
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    bare_from = None
    if _SINK_FROM.match(definition) and isinstance(tree.expression, exp.Select):
        from_ = tree.expression.args.get("from_") or tree.expression.args.get("from")
        bare_from = from_.this if from_ is not None else None
    edits: list[tuple[int, int, str]] = []
    for table in tree.find_all(exp.Table):
        if table is created or (not table.text("db") and table.name in ctes):
            continue
        new_bare = renames.get(resolve(table) or "")
        span = _span(table)
        if new_bare is None or span is None:
            continue
        text = quote_name(new_bare)
        if table.args.get("alias") is None and isinstance(table.parent, (exp.From, exp.Join)) \
                and isinstance(table.parent.parent, exp.Select) and table is not bare_from:
            text += " AS " + quote_name(table.name)
        edits.append((*span, text))
    into = tree.args.get("into")  # CREATE SINK s INTO table: the clause is not in the tree
    if into is not None:
        schema, _, bare = into.rpartition(".")
        new_bare = renames.get(resolve(exp.to_table(bare, db=schema or None)) or "")
        if new_bare is not None:
            start, end = tree.args["into_span"]
            edits.append((start, end, (quote_name(schema) + "." if schema else "") + quote_name(new_bare)))
    return _apply(definition, edits)


def rename_created(definition: str, new_bare: str) -> str:
    """A CREATE statement's text with the name it creates changed to `new_bare`."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(definition)
    target = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(target, exp.Index):  # CREATE INDEX name ON table(...)
        target = target.this
    span = _span(target) if isinstance(target, (exp.Table, exp.Identifier)) else None
    return definition if span is None else _apply(definition, [(*span, quote_name(new_bare))])


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
