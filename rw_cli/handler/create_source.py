"""CREATE SOURCE name [(columns)] WITH (connector = ...) [FORMAT ... ENCODE ...], and
CREATE TABLE name (columns) WITH (connector = ...): a table that ingests a connector.

A source is not materialized: its job is one SourceExecutor whose output feeds the jobs of
the materialized views and sinks over it (an MV on a source starts at the source's current
offsets; there is no history to backfill). A connector table's job is the same executor in
front of the table's materialize, so the table keeps what the connector delivers.
"""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.types import BIGINT
from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.meta.catalog import ROW_ID, SOURCE, TABLE, ColumnCatalog, RelationCatalog
from rw_cli.handler.rate_limit import limits_at_create
from rw_cli.result import Result

def column_type(kind: exp.DataType):
    """A column's type; STRUCT<...> (as the Nexmark event stream declares) included."""
    from rw_cli.handler.create_table import column_type as table_column_type

    return table_column_type(kind)


def _columns(tree: exp.Create, table: bool = False) -> tuple[list[tuple[str, object]], dict[str, str], list | None]:
    """(columns, generated column -> expression SQL, watermark); `table`: a connector table's,
    whose PRIMARY KEY clause CREATE TABLE reads."""
    schema = tree.this
    cols, generated, watermark = [], {}, None
    if isinstance(schema, exp.Schema):
        for item in schema.expressions:
            if isinstance(item, exp.ColumnDef):
                if item.args.get("kind") is None:
                    raise BindError(f'column "{item.name}" needs a type')
                if any(n == item.name for n, _ in cols):
                    raise BindError(f'column "{item.name}" specified more than once')
                cols.append((item.name, column_type(item.args["kind"])))
                for c in item.args.get("constraints") or []:
                    if isinstance(c.kind, exp.ComputedColumnConstraint):
                        generated[item.name] = c.kind.this.sql(dialect="postgres")
                    elif isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null") \
                            and not table:  # a source keeps no rows to check it against
                        raise BindError("Invalid input syntax: NOT NULL constraint is not supported in source schema")
            elif isinstance(item, exp.WatermarkColumnConstraint):
                watermark = [item.this.name, item.expression.sql(dialect="postgres")]
            elif isinstance(item, exp.PrimaryKey):
                if table:
                    continue
                raise NotSupported("PRIMARY KEY on a source", hint="use CREATE TABLE ... WITH (connector = ...)")
            else:
                raise NotSupported(f"{type(item).__name__} in CREATE SOURCE")
    return cols, generated, watermark


def _spec(tree: exp.Create) -> dict:
    """The connector's spec; the columns INCLUDE names are added to the statement's column list."""
    from rw_cli.connector import connector_spec, include_types

    spec = connector_spec(tree)
    if not spec:
        raise BindError("a source needs WITH (connector = '...')")
    extra = include_types(spec)
    if extra:
        schema = tree.this if isinstance(tree.this, exp.Schema) else exp.Schema(this=tree.this, expressions=[])
        for name, t in extra:
            schema.append("expressions", exp.ColumnDef(this=exp.to_identifier(name, quoted=True),
                                                       kind=exp.DataType.build(t.name, dialect="postgres")))
        tree.set("this", schema)
    return spec


def handle_source(session, tree: exp.Create, sql: str) -> Result:
    from rw_cli.connector import default_columns, open_reader

    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    name = target.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_SOURCE", notices=[f'relation "{name}" already exists, skipping'])
        raise session.catalog.name_taken(name)
    spec = _spec(tree)
    cols, generated, watermark = _columns(tree)
    cols = cols or default_columns(spec)
    if not cols:
        raise BindError("a source needs a column list")
    if generated:
        spec["generated"] = generated
    open_reader(spec, [c for c in cols if c[0] not in generated]).check()  # validates the options
    columns = [ColumnCatalog(n, t) for n, t in cols] + [ColumnCatalog(ROW_ID, BIGINT, hidden=True)]
    rel = RelationCatalog(session.catalog.alloc_id(), name, SOURCE, columns, [len(columns) - 1],
                          definition=sql, append_only=True, connector=spec, watermark=watermark,
                          parallelism_config=session.settings.job_parallelism(SOURCE),
                          rate_limits=limits_at_create(session.settings, SOURCE))
    from rw_cli.sql.stored_exprs import check_watermark_type, generated_exprs, watermark_expr
    from rw_cli.stream.source_job import source_job

    exprs = generated_exprs(rel)  # binds the expressions now: errors are the CREATE's
    if watermark is not None:  # the watermark is bound too: its column, and its expression's type
        if watermark[0] not in [c.name for c in columns]:
            raise BindError(f'column "{watermark[0]}" named in WATERMARK FOR does not exist')
        check_watermark_type(rel, *watermark_expr(rel))
    rel.state_table_ids.append(session.catalog.alloc_id())
    session.catalog.add(rel)
    session.runtime.add_job(source_job(session.store, rel, exprs))
    session.barrier()
    return Result("CREATE_SOURCE")


def _primary_key(tree: exp.Create) -> list[str]:
    """The PRIMARY KEY's columns as the CREATE TABLE declares them (inline or as a clause)."""
    names = []
    schema = tree.this if isinstance(tree.this, exp.Schema) else None
    for item in schema.expressions if schema is not None else []:
        if isinstance(item, exp.ColumnDef) and any(isinstance(c.kind, exp.PrimaryKeyColumnConstraint)
                                                   for c in item.args.get("constraints") or []):
            names.append(item.name)
        elif isinstance(item, exp.PrimaryKey):
            names += [e.name for e in item.expressions]
    return names


def handle_table(session, tree: exp.Create) -> Result:
    """CREATE TABLE ... WITH (connector = ...): a table, then its connector in front of it."""
    from rw_cli.connector import open_reader
    from rw_cli.handler import create_table

    spec = _spec(tree)
    if (spec.get("format") or "").lower() in ("upsert", "debezium"):
        if tree.args.get("append_only"):
            raise BindError(f"a table with FORMAT {spec['format'].upper()} cannot be APPEND ONLY: "
                            "its rows are updated and deleted")
        spec["key_columns"] = _primary_key(tree)
    cols, generated, _ = _columns(tree, table=True)
    if generated:
        raise NotSupported("generated columns in a table with a connector", hint="use CREATE SOURCE")
    open_reader(spec, cols).check()  # validate before anything is created
    result = create_table.handle(session, tree)
    name = tree.this.this.name
    rel = session.catalog.get(name)
    if rel is None or rel.kind != TABLE or rel.connector:
        return result  # IF NOT EXISTS on an existing table
    from rw_cli.sql.stored_exprs import watermark_expr
    from rw_cli.stream.source_job import connector_table_job

    rel.connector = spec
    rel.rate_limits = limits_at_create(session.settings, TABLE)
    rel.state_table_ids.append(session.catalog.alloc_id())
    session.runtime.drop_job(rel.id)
    session.runtime.add_job(connector_table_job(session.store, rel, watermark_expr(rel)))
    session.barrier()
    return result
