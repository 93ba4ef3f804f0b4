"""The layer order of rw_cli, top to bottom: the one place it is written.

A module may import modules of its own layer or of a layer below it, never above, and no
two modules may import each other, directly or through others (`tests/architecture` checks
both on every module's imports, including imports inside functions). Packages of one layer
(the CLI's, say) may use each other.

    cli, shell, slt, config,  the `rw` command, the REPL, the sqllogictest runner, settings files,
    server                    and the PostgreSQL wire protocol server (`rw serve`)
    session                   Session.execute(sql): the one entry point
    handler                   one module per kind of statement
    sql                       parse, bind, plan (stream plans and batch SQL); no executors
    stream                    the life of a stream job: build from a plan, backfill, recover,
                              the barrier loop, drop, progress
    spark                     the Spark runtime of stream jobs
    meta                      the catalog and the data-directory lock
    engine                    executors on Arrow chunks, the embedded runtime, DuckDB
    connector                 source readers and sink writers of external systems
    store                     the Hummock-style state store
    common                    value types, errors, results, text formats
"""
from __future__ import annotations

LAYERS: tuple[tuple[str, ...], ...] = (
    ("rw_cli", "rw_cli.__main__", "rw_cli.cli", "rw_cli.shell", "rw_cli.slt", "rw_cli.config",
     "rw_cli.server"),
    ("rw_cli.session",),
    ("rw_cli.handler",),
    ("rw_cli.sql",),
    ("rw_cli.stream",),
    ("rw_cli.spark",),
    ("rw_cli.meta",),
    ("rw_cli.engine",),
    ("rw_cli.connector",),
    ("rw_cli.store",),
    ("rw_cli.common", "rw_cli.errors", "rw_cli.result"),
)


def layer_of(module: str) -> int:
    """The index of a module's layer in LAYERS (0 is the top): the longest matching prefix."""
    best, depth = -1, -1
    for i, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > depth:
                best, depth = i, len(name)
    if best < 0:
        raise KeyError(f"{module} is in no layer of rw_cli.common.layers.LAYERS")
    return best
