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


# reserved words: a name spelled as one is quoted (`"select" INT`)
_RESERVED = frozenset("""
all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create
current_catalog current_date current_role current_time current_timestamp current_user default deferrable
desc distinct do else end except false fetch for foreign from grant group having in initially intersect
into lateral leading limit localtime localtimestamp not null offset on only or order placing primary
references returning select session_user some symmetric table then to trailing true union unique user
using variadic when where window with
""".split())


def quote_name(name: str) -> str:
    """An identifier as SQL text: bare when folding leaves it unchanged and it is no reserved
    word, else quoted."""
    return name if _PLAIN.fullmatch(name) and name not in _RESERVED else '"' + name.replace('"', '""') + '"'


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
    from rw_cli.sql.dialect import changelog_clauses, parse_statement

    # a change log clause (`AS CHANGELOG FROM rel`) is masked by a CTE of the same length,
    # so that the other names keep their places; its relation is renamed by its own span
    clauses = changelog_clauses(definition)
    masked = definition
    for start, end, *_ in clauses:
        masked = masked[:start] + "AS (SELECT 1)".ljust(end - start) + masked[end:]
    tree = parse_statement(masked)
    created = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(created, exp.Schema):
        created = created.this
    ctes = {c.alias for c in tree.find_all(exp.CTE)}
    bare_from = None
    if _SINK_FROM.match(definition) and isinstance(tree.expression, exp.Select):
        from_ = tree.expression.args.get("from_") or tree.expression.args.get("from")
        bare_from = from_.this if from_ is not None else None
    edits: list[tuple[int, int, str]] = []
    for *_, name_start, name_end, name in clauses:
        new_bare = renames.get(resolve(exp.Table(this=exp.to_identifier(name, quoted=True))) or "")
        if new_bare is not None:
            edits.append((name_start, name_end, quote_name(new_bare)))
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


def rename_schemas(definition: str, renames: dict[str, str]) -> str:
    """`definition` with every schema qualifier of `renames` (old schema -> new) changed, the
    created relation's own included (ALTER SCHEMA ... RENAME TO | SWAP WITH)."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(definition)
    edits: list[tuple[int, int, str]] = []
    for table in tree.find_all(exp.Table):
        db = table.args.get("db")
        new = renames.get(table.text("db"))
        span = _span(db) if isinstance(db, exp.Identifier) else None
        if new is not None and span is not None:
            edits.append((*span, quote_name(new)))
    return _apply(definition, edits)


def move_references(definition: str, moves: dict[str, str], resolve: Callable[[exp.Table], str | None]) -> str:
    """`definition` with every reference to a relation of `moves` (catalog name -> its new
    catalog name, in another schema) naming it there (`s.t`, or `t` in public). A reference
    without an alias keeps the name it had as its alias, so `t.col` still resolves."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(definition)
    created = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(created, exp.Schema):
        created = created.this
    edits: list[tuple[int, int, str]] = []
    for table in tree.find_all(exp.Table):
        new = moves.get(resolve(table) or "") if table is not created else None
        span = _span(table)
        db = table.args.get("db")
        if new is None or span is None:
            continue
        start = _span(db)[0] if isinstance(db, exp.Identifier) and _span(db) else span[0]
        schema, _, bare = new.rpartition(".")
        text = (quote_name(schema) + "." if schema else "") + quote_name(bare)
        if table.args.get("alias") is None and isinstance(table.parent, (exp.From, exp.Join)) \
                and isinstance(table.parent.parent, exp.Select) and not _SINK_FROM.match(definition):
            text += " AS " + quote_name(table.name)
        edits.append((start, span[1], text))
    return _apply(definition, edits)


def move_created(definition: str, new_name: str) -> str:
    """A CREATE statement's text naming what it creates `new_name` (`s.name`, or `name` in public)."""
    from rw_cli.sql.dialect import parse_statement

    tree = parse_statement(definition)
    target = tree.this if isinstance(tree, exp.Create) else None
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(target, exp.Index):
        target = target.this
    if not isinstance(target, exp.Table) or _span(target) is None:
        return definition
    db = target.args.get("db")
    start = _span(db)[0] if isinstance(db, exp.Identifier) and _span(db) else _span(target)[0]
    schema, _, bare = new_name.rpartition(".")
    return _apply(definition, [(start, _span(target)[1], (quote_name(schema) + "." if schema else "") + quote_name(bare))])
