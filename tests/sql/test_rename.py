"""Stored definitions edited by ALTER ... RENAME TO / SWAP WITH (rw_cli.sql.rename)."""
from rw_cli.sql.dialect import RenameRelation, parse_statement
from rw_cli.sql.rename import rename_created, rename_references


def _resolve(table):
    return f"{table.text('db')}.{table.name}" if table.text("db") else table.name


def test_an_unaliased_from_keeps_the_old_name_as_alias():
    sql = "CREATE MATERIALIZED VIEW mv AS SELECT v1, (t.v2).v1 AS v21 FROM t -- note\n"
    assert rename_references(sql, {"t": "t2"}, _resolve) == \
        "CREATE MATERIALIZED VIEW mv AS SELECT v1, (t.v2).v1 AS v21 FROM t2 AS t -- note\n"


def test_aliased_joined_and_schema_qualified_references():
    sql = "CREATE VIEW v AS (SELECT * FROM t JOIN t AS x ON t.a = x.a JOIN s.t ON true)"
    assert rename_references(sql, {"t": "u"}, _resolve) == \
        "CREATE VIEW v AS (SELECT * FROM u AS t JOIN u AS x ON t.a = x.a JOIN s.t ON true)"
    assert rename_references(sql, {"s.t": "w"}, _resolve) == \
        "CREATE VIEW v AS (SELECT * FROM t JOIN t AS x ON t.a = x.a JOIN s.w AS t ON true)"


def test_a_swap_renames_both_at_once_and_ctes_are_not_relations():
    sql = "CREATE VIEW v AS WITH a AS (SELECT 1) SELECT * FROM a, b, c"
    assert rename_references(sql, {"b": "c", "c": "b", "a": "z"}, _resolve) == \
        "CREATE VIEW v AS WITH a AS (SELECT 1) SELECT * FROM a, c AS b, b AS c"


def test_sink_from_and_index_on_take_no_alias():
    assert rename_references("CREATE SINK s FROM mv WITH (connector = 'blackhole')", {"mv": "m2"}, _resolve) == \
        "CREATE SINK s FROM m2 WITH (connector = 'blackhole')"
    assert rename_references("CREATE INDEX i ON t(v)", {"t": "T2"}, _resolve) == 'CREATE INDEX i ON "T2"(v)'


def test_the_created_name():
    assert rename_created("create index idx on t(v1)", "idx1") == "create index idx1 on t(v1)"
    assert rename_created("CREATE SOURCE src (v INT) WITH (connector = 'datagen')", "src1") == \
        "CREATE SOURCE src1 (v INT) WITH (connector = 'datagen')"


def test_parse_rename_and_swap():
    tree = parse_statement('ALTER MATERIALIZED VIEW s.Mv RENAME TO "New"')
    assert isinstance(tree, RenameRelation) and tree.args["kind"] == "MATERIALIZED VIEW"
    assert (tree.this.text("db"), tree.this.name, tree.args["to"].name) == ("s", "mv", "New")
    tree = parse_statement("alter sink a swap with b;")
    assert tree.args["swap"] and tree.args["kind"] == "SINK"
