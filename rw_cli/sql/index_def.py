"""The query an index arranges (`CREATE INDEX name ON relation (columns) [INCLUDE (...)]`):
its key columns first, then the included ones — read by CREATE INDEX to plan the index, and
by batch reads to know which of an index's columns copy the relation's."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError


def index_query(tree: exp.Create, base_rel=None) -> tuple[str, exp.Select, list[str]]:
    """(index name, the query it arranges, its key columns). An index's columns are its key
    columns first, then the included ones (all others by default), as RisingWave shows them."""
    index = tree.this
    base = index.args["table"]
    params = index.args.get("params")
    keys, items = [], []
    for i, o in enumerate((params.args.get("columns") or []) if params is not None else []):
        key = o.this if isinstance(o, exp.Ordered) else o
        if isinstance(key, exp.Column):
            keys.append(key.name)
            items.append(key.name)
        else:  # an index on an expression (`j->'k'`): a column of its own, named by its position
            keys.append(f"expr{i + 1}")
            items.append(exp.alias_(key.copy(), keys[-1]))
    include = [c.name for c in (params.args.get("include") or [])] if params is not None else []
    if not keys:
        raise BindError("an index needs at least one column")
    _check_distribution(tree, params)
    if include:
        rest = include
    elif base_rel is not None:
        rest = [c.name for c in base_rel.visible_columns]
    else:
        rest = ["*"]
    items += [c for c in dict.fromkeys(rest) if c not in keys]
    query = exp.select(*items).from_(exp.Table(this=base.this.copy(),
                                               db=base.args["db"].copy() if base.args.get("db") else None))
    return index.name, query, keys


def _check_distribution(tree: exp.Create, params) -> None:
    """DISTRIBUTED BY (...) must name a prefix of the index's key columns, as RisingWave
    requires (its rows are spread over vnodes by those columns)."""
    dist = tree.args.get("distributed_by")
    if not dist:
        return
    keys = [(o.this if isinstance(o, exp.Ordered) else o).sql(dialect="postgres")
            for o in (params.args.get("columns") or [])]
    if len(dist) > len(keys) or keys[:len(dist)] != dist:
        raise BindError(f"the distribution key ({', '.join(dist)}) must be a prefix of the index key "
                        f"({', '.join(keys)})")
