"""WITH (backfill_order = FIXED(a -> b, ...)) of CREATE MATERIALIZED VIEW | SINK: which upstream
a job backfills first. Every job here backfills from snapshots all taken at once (an order
changes nothing in what it holds), so the order is checked as RisingWave checks it — each
named relation is one the query scans, and the order has no cycle — and kept in the
definition."""
from __future__ import annotations

import re

from rw_cli.errors import BindError

_FIXED = re.compile(r"backfill_order\s*=\s*fixed\s*\(([^)]*)\)", re.IGNORECASE)


def edges(sql: str) -> list[tuple[str, str]]:
    """The `a -> b` pairs of the statement's FIXED order (names as written, folded)."""
    m = _FIXED.search(sql)
    if m is None or not m.group(1).strip():
        return []
    out = []
    for part in m.group(1).split(","):
        left, arrow, right = part.partition("->")
        if not arrow or not left.strip() or not right.strip():
            raise BindError(f"invalid backfill_order entry {part.strip()!r}: expected `a -> b`")
        out.append((_fold(left), _fold(right)))
    return out


def _fold(name: str) -> str:
    name = name.strip()
    return name[1:-1] if name.startswith('"') and name.endswith('"') else name.lower()


def check(catalog, sql: str, upstreams) -> None:
    """Refuse an order naming a relation the query does not scan, or an order with a cycle."""
    pairs = edges(sql)
    if not pairs:
        return
    used = {u.id for u in upstreams}
    ids: dict[str, int] = {}
    for name in {n for pair in pairs for n in pair}:
        schema, _, bare = name.rpartition(".")
        rel = catalog.get(catalog.qualified(bare, schema or None))
        if rel is None or rel.id not in used:
            raise BindError(f"Table or source '{name}' specified in backfill_order is not used in the query")
        ids[name] = rel.id
    graph: dict[int, set[int]] = {}
    for a, b in pairs:
        graph.setdefault(ids[a], set()).add(ids[b])
    if _has_cycle(graph):
        raise BindError("Backfill order strategy has a cycle")


def _has_cycle(graph: dict[int, set[int]]) -> bool:
    state: dict[int, int] = {}  # 1: on the path, 2: done

    def visit(n: int) -> bool:
        state[n] = 1
        for m in graph.get(n, ()):
            if state.get(m) == 1 or (m not in state and visit(m)):
                return True
        state[n] = 2
        return False

    return any(n not in state and visit(n) for n in list(graph))
