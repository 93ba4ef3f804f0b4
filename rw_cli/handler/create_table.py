"""CREATE TABLE [IF NOT EXISTS] name (columns [, PRIMARY KEY (...)]) [APPEND ONLY]."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.types import BIGINT, DataType
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import ROW_ID, TABLE, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def column_type(kind: exp.DataType) -> DataType:
    text = kind.sql(dialect="postgres")
    try:
        return DataType.from_sql(text)
    except KeyError:
        raise NotSupported(f"column type {text}") from None


def handle(session, tree: exp.Create) -> Result:
    schema = tree.this
    if not isinstance(schema, exp.Schema):
        if tree.expression is not None:
            raise NotSupported("CREATE TABLE ... AS SELECT")
        raise BindError("CREATE TABLE needs a column list")
    name = schema.this.name
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_TABLE", notices=[f'relation "{name}" already exists, skipping'])
        raise BindError(f'relation "{name}" already exists')
    columns: list[ColumnCatalog] = []
    pk_names: list[str] = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            col_name = item.name
            if any(c.name == col_name for c in columns):
                raise BindError(f'column "{col_name}" specified more than once')
            if item.args.get("kind") is None:
                raise BindError(f'column "{col_name}" needs a type')
            columns.append(ColumnCatalog(col_name, column_type(item.args["kind"])))
            for c in item.args.get("constraints") or []:
                if isinstance(c.kind, exp.PrimaryKeyColumnConstraint):
                    pk_names.append(col_name)
        elif isinstance(item, exp.PrimaryKey):
            if pk_names:
                raise BindError("multiple primary keys for table are not allowed")
            pk_names = [e.name for e in item.expressions]
        else:
            raise NotSupported(f"{type(item).__name__} in CREATE TABLE")
    if not columns:
        raise BindError("a table needs at least one column")
    names = [c.name for c in columns]
    for p in pk_names:
        if p not in names:
            raise BindError(f'column "{p}" named in key does not exist')
    user_pk = bool(pk_names)
    if user_pk:
        pk = [names.index(p) for p in pk_names]
    else:
        columns.append(ColumnCatalog(ROW_ID, BIGINT, hidden=True))
        pk = [len(columns) - 1]
    rel = RelationCatalog(session.catalog.alloc_id(), name, TABLE, columns, pk, user_pk=user_pk,
                          append_only=bool(tree.args.get("append_only")))
    from rw_cli.sql.stream_builder import table_job

    session.catalog.add(rel)
    session.runtime.add_job(table_job(session.store, rel))
    session.barrier()
    return Result("CREATE_TABLE")
