"""PostgreSQL / RisingWave functions that DuckDB lacks or spells differently.

`MACROS` are created on every DuckDB connection (`rw_cli.engine.duck`); `rewrite_function`
is called by `rw_cli.sql.transpile` for each function call of the PostgreSQL tree and returns
a replacement node (or None to keep it).
"""
from __future__ import annotations

from sqlglot import exp

MACROS = [
    "CREATE OR REPLACE MACRO booleq(a, b) AS (a::BOOLEAN = b::BOOLEAN)",
    "CREATE OR REPLACE MACRO boolne(a, b) AS (a::BOOLEAN <> b::BOOLEAN)",
    # bool input: PostgreSQL trims whitespace and accepts unique prefixes of true/false/yes/no/on/off.
    "CREATE OR REPLACE MACRO pg_text_to_bool(s) AS (CASE "
    "WHEN s IS NULL THEN NULL "
    "WHEN lower(trim(s)) IN ('t','tr','tru','true','y','ye','yes','on','1') THEN TRUE "
    "WHEN lower(trim(s)) IN ('f','fa','fal','fals','false','n','no','of','off','0') THEN FALSE "
    "ELSE error('invalid input syntax for type boolean: \"' || s || '\"') END)",
]


def rewrite_function(node: exp.Expression) -> exp.Expression | None:
    return None
