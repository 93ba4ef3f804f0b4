"""Stream planner rules, case by case: `fixtures/planner/*.sql` hold (query -> plan) pairs
planned on the bare catalog of conftest.py (nothing runs, nothing is stored).

Each case's input is a SELECT (planned as the materialized view `m`) or a whole
`CREATE MATERIALIZED VIEW name [(aliases)] AS ...`; its expected output is the plan as
EXPLAIN prints it followed by the output column types, or `ERROR: <kind>: <message>`.
Regenerate the expected parts with `RW_UPDATE_GOLDEN=1 pytest tests/sql/test_planner_rules.py`
(after an intended change of the planner or of EXPLAIN's text), then review the diff.
"""
from __future__ import annotations

import pytest
from sqlglot import exp

from rw_cli.errors import RwError
from rw_cli.sql.dialect import parse_statement
from rw_cli.sql.planner import StreamPlanner
from sql_fixtures import case_id, cases, check

CASES = cases("planner")


def plan_text(catalog, sql: str) -> list[str]:
    """What the planner makes of `sql`, as fixture lines."""
    try:
        tree = parse_statement(sql)
        name, aliases, query = "m", None, tree
        if isinstance(tree, exp.Create):
            target = tree.this
            if isinstance(target, exp.Schema):
                name, aliases = target.this.name, [e.name for e in target.expressions]
            else:
                name = target.name
            query = tree.expression
        root, _ = StreamPlanner(catalog).plan_mv(query, name, aliases)
    except RwError as e:
        return [f"ERROR: {type(e).__name__}: {e.message}"]
    return root.explain() + ["types: [" + ", ".join(t.name for t in root.types) + "]"]


@pytest.mark.parametrize("item", CASES, ids=[case_id(c) for c in CASES])
def test_plan(catalog, item):
    check(item, plan_text(catalog, item[2].sql))
