"""RisingWave's configured parallelism of a streaming job: what `SET streaming_parallelism`
and its per-kind variants (`streaming_parallelism_for_table`, ...) accept, how a new job
resolves it, and how `rw_streaming_parallelism` displays it.

A job records the configuration it was created under (fixed `N`, `adaptive`,
`bounded(N)` or `ratio(x)`), not only the actors it runs: the catalog shows what the user
asked for. The per-kind parameter wins over the global one; with both at `default`, a
table or source is `bounded(4)` and every other job `bounded(64)` (RisingWave's defaults).
"""
from __future__ import annotations

import re

from rw_cli.errors import BindError

GLOBAL = "streaming_parallelism"
# the per-kind parameter of each kind of streaming job (catalog kind -> parameter)
FOR_KIND = {
    "table": "streaming_parallelism_for_table",
    "materialized view": "streaming_parallelism_for_materialized_view",
    "index": "streaming_parallelism_for_index",
    "sink": "streaming_parallelism_for_sink",
    "source": "streaming_parallelism_for_source",
}
PARAMETERS = frozenset((GLOBAL, *FOR_KIND.values()))
DEFAULT = "default"
_DEFAULT_BOUND = {"table": 4, "source": 4}
_GLOBAL_BOUND = 64
_BOUNDED = re.compile(r"bounded\((\d+)\)")
_RATIO = re.compile(r"ratio\(([0-9]*\.?[0-9]+)\)")


def check(name: str, text: str) -> str:
    """The canonical spelling of a parallelism value (lower case, no quotes); a value
    RisingWave does not accept is refused at SET, as there."""
    value = str(text).strip().strip("'\"").strip().lower()
    if value in ("", "0", DEFAULT):
        return DEFAULT
    if value in ("adaptive", "auto"):
        return "adaptive"
    if value.isdigit():
        n = int(value)
        if not 1 <= n <= 1024:
            raise BindError(f"{name} must be between 1 and 1024")
        return str(n)
    m = _BOUNDED.fullmatch(value)
    if m and int(m.group(1)) >= 1:
        return f"bounded({int(m.group(1))})"
    m = _RATIO.fullmatch(value)
    if m and 0 < float(m.group(1)) <= 1:
        return f"ratio({m.group(1)})"
    raise BindError(f'invalid value for parameter "{name}": "{text}"')


def resolve(kind: str, get) -> str:
    """The configuration a new job of catalog `kind` records: `get(parameter)` reads the
    session's value (None when unset)."""
    for name in (FOR_KIND.get(kind), GLOBAL):
        if name is None:
            continue
        value = check(name, get(name) or DEFAULT)
        if value != DEFAULT:
            return value
    return f"bounded({_DEFAULT_BOUND.get(kind, _GLOBAL_BOUND)})"


def fixed_actors(config: str) -> int | None:
    """The actor count a fixed configuration asks for; None for adaptive ones (the runtime
    picks: it has no cluster of workers to adapt to)."""
    return int(config) if config.isdigit() else None


DEFAULT_MAX_PARALLELISM = 256  # RisingWave's vnode count: the most actors a job may have


def check_max(config: str, max_parallelism: int) -> None:
    """A fixed parallelism may not exceed the job's max parallelism (its vnode count)."""
    n = fixed_actors(config)
    if n is not None and n > max_parallelism:
        raise BindError(f"specified parallelism {n} should not exceed max parallelism {max_parallelism}")
