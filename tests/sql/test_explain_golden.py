"""EXPLAIN CREATE MATERIALIZED VIEW output, checked against golden files.

Each `tests/golden/explain/NAME.sql` holds one CREATE MATERIALIZED VIEW over the tables of
`_schema.sql`; `NAME.plan` is its expected plan. Regenerate every `.plan` with
`make golden` (RW_UPDATE_GOLDEN=1 pytest tests/sql/test_explain_golden.py).
"""
import glob
import os

import pytest

import rw_cli

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden", "explain")
CASES = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, "*.sql")) if not p.endswith("_schema.sql"))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    s = rw_cli.connect(str(tmp_path_factory.mktemp("explain") / "d"))
    s.execute(open(os.path.join(HERE, "_schema.sql")).read())
    yield s
    s.close()


@pytest.mark.parametrize("name", CASES)
def test_explain(db, name):
    sql = open(os.path.join(HERE, name + ".sql")).read().strip()
    plan = "\n".join(r[0] for r in db.execute("explain " + sql).fetchall()) + "\n"
    golden = os.path.join(HERE, name + ".plan")
    if os.environ.get("RW_UPDATE_GOLDEN"):
        with open(golden, "w") as f:
            f.write(plan)
    assert os.path.exists(golden), f"no golden file for {name}: run `make golden`"
    assert plan == open(golden).read()
