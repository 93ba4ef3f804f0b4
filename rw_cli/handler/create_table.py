"""CREATE TABLE [IF NOT EXISTS] name (columns [, PRIMARY KEY (...)]) [APPEND ONLY]."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.common.types import BIGINT, MAP_KEY_TYPES, DataType, struct_type_name
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import ROW_ID, TABLE, ColumnCatalog, RelationCatalog
from rw_cli.result import Result


def column_type(kind: exp.DataType) -> DataType:
    """A column's type: a scalar, STRUCT<name type, ...> (nested to any depth) or an array
    of any of them."""
    if kind.this == exp.DataType.Type.STRUCT and kind.expressions:
        names = tuple(f.name for f in kind.expressions)
        inner = tuple(column_type(f.args["kind"]) for f in kind.expressions)
        name = struct_type_name(names, inner)
        return DataType(name, inner=inner, field_names=names)
    if kind.this == exp.DataType.Type.VECTOR and kind.expressions:
        n = int(kind.expressions[-1].name)
        if not 1 <= n <= 16000:
            raise BindError(f"vector dimension must be between 1 and 16000, not {n}")
        return DataType(f"vector({n})")
    if kind.this == exp.DataType.Type.MAP and len(kind.expressions) == 2:
        key, value = (column_type(k) for k in kind.expressions)
        if key.name not in MAP_KEY_TYPES:
            raise BindError(f"invalid map key type: {key.name}")
        return DataType.map_of(key, value)
    if kind.this == exp.DataType.Type.ARRAY and kind.expressions:
        element = column_type(kind.expressions[0])
        return DataType(f"{element.name}[]", inner=(element,))
    text = kind.sql(dialect="postgres")
    try:
        return DataType.from_sql(text)
    except KeyError:
        raise NotSupported(f"column type {text}") from None


CONFLICT_ACTIONS = ("overwrite", "do nothing", "do update full", "do update if not null")


def handle(session, tree: exp.Create) -> Result:
    props = tree.args.get("properties")
    if props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions):
        # a table that outlived its session would not be temporary: say so, never pretend
        raise NotSupported("CREATE TEMPORARY TABLE", hint="create an ordinary table and drop it when done")
    schema = tree.this
    target = schema.this if isinstance(schema, exp.Schema) else schema
    name = session.catalog.qualified(target.name, target.text("db"))
    if session.catalog.get(name) is not None:
        if tree.args.get("exists"):
            return Result("CREATE_TABLE", notices=[f'relation "{name}" already exists, skipping'])
        raise session.catalog.name_taken(name)
    if isinstance(schema, exp.Schema) and tree.expression is not None \
            and all(isinstance(e, exp.Identifier) for e in schema.expressions):
        return create_table_as(session, tree, name, [e.name for e in schema.expressions])
    if not isinstance(schema, exp.Schema):
        if tree.expression is not None:
            return create_table_as(session, tree, name)
        # `CREATE TABLE t`: a table of no columns (its hidden row id only), as RisingWave allows
        schema = exp.Schema(this=target, expressions=[])
    columns: list[ColumnCatalog] = []
    pk_names: list[str] = []
    pk_clause = False  # declared as a PRIMARY KEY (...) clause
    watermark = None
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
                elif isinstance(c.kind, exp.DefaultColumnConstraint):
                    columns[-1].default = c.kind.this.sql(dialect="postgres")
                elif isinstance(c.kind, exp.CollateColumnConstraint):
                    coll = c.kind.this
                    coll_name = coll.name if isinstance(coll, (exp.Identifier, exp.Column, exp.Var)) else str(coll)
                    if coll_name not in ("C", "POSIX"):
                        raise BindError(f'collation "{coll_name}" for encoding "UTF8" does not exist')
                    if columns[-1].type.name not in ("character varying", "text", "character"):
                        raise BindError(f"collations are not supported by type {columns[-1].type.name}")
                elif isinstance(c.kind, exp.ComputedColumnConstraint):
                    columns[-1].generated = c.kind.this.sql(dialect="postgres")
                elif isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null"):
                    columns[-1].not_null = True
        elif isinstance(item, exp.WatermarkColumnConstraint):
            watermark = [item.this.name, item.args.get("text") or item.expression.sql(dialect="postgres")]
            if item.args.get("ttl"):
                watermark.append(True)
        elif isinstance(item, exp.PrimaryKey):
            if pk_names:
                raise BindError("multiple primary keys for table are not allowed")
            pk_names = [e.name for e in item.expressions]
            pk_clause = True
        else:
            raise NotSupported(f"{type(item).__name__} in CREATE TABLE")
    names = [c.name for c in columns]
    for p in pk_names:
        if p not in names:
            raise BindError(f'column "{p}" named in key does not exist')
    _check_generated(columns)
    _check_impure(columns, pk_names)
    check_system_column_names(names)
    user_pk = bool(pk_names)
    if user_pk:
        pk = [names.index(p) for p in pk_names]
    else:
        columns.append(ColumnCatalog(ROW_ID, BIGINT, hidden=True))
        pk = [len(columns) - 1]
    append_only = bool(tree.args.get("append_only"))
    retention = _check_retention(session, tree, append_only)
    if watermark is not None:
        if watermark[0] not in names:
            raise BindError(f'column "{watermark[0]}" named in WATERMARK FOR does not exist')
        _check_watermark_type(name, columns, pk, watermark)
        if not append_only and len(watermark) < 3:  # a TTL watermark's table may change its rows
            raise BindError("Defining watermarks on table requires the table to be append only.")
    on_conflict = tree.args.get("on_conflict")
    if on_conflict and not user_pk:
        raise BindError("ON CONFLICT needs a table with a primary key")
    if append_only and user_pk:
        # as RisingWave: an insert of a present key is ignored, so the table's changes stay
        # inserts (overwriting would update a row of an append-only table)
        if on_conflict not in (None, "do nothing"):
            raise BindError(f"an append-only table with a primary key cannot ON CONFLICT {on_conflict.upper()}",
                            hint="use ON CONFLICT DO NOTHING (the default for append-only tables), or drop APPEND ONLY")
        on_conflict = "do nothing"
    on_conflict = on_conflict or "overwrite"
    version_columns = _version_columns(columns, tree.args.get("version_columns"), on_conflict)
    rel = RelationCatalog(session.catalog.alloc_id(), name, TABLE, columns, pk, user_pk=user_pk,
                          pk_clause=user_pk and pk_clause, append_only=append_only, on_conflict=on_conflict,
                          watermark=watermark, version_columns=version_columns, retention_seconds=retention)
    add_table(session, rel)
    return Result("CREATE_TABLE")


def _check_watermark_type(name: str, columns: list[ColumnCatalog], pk: list[int], watermark: list) -> None:
    """The watermark expression must return its column's type: RisingWave binds it (and
    checks that) before it looks at anything else of the watermark, such as append-only."""
    from rw_cli.sql.stored_exprs import check_watermark_type, watermark_expr

    probe = RelationCatalog(0, name, TABLE, columns, pk, watermark=watermark)
    check_watermark_type(probe, *watermark_expr(probe))


def _check_retention(session, tree: exp.Create, append_only: bool) -> int | None:
    """`WITH (retention_seconds = n)` (storage TTL: old rows vanish): its seconds. It fits an
    append-only table only, unless the session opts in as RisingWave's unsafe parameter says."""
    props = tree.args.get("properties")
    named = [p for p in (props.expressions if props is not None else [])
             if isinstance(p, exp.Property) and p.name.lower() == "retention_seconds"]
    unsafe = (session.settings.get("unsafe_enable_storage_retention_for_non_append_only_tables") or "").lower()
    if named and not append_only and unsafe not in ("true", "on"):
        raise BindError("retention_seconds (storage retention) is only supported for append-only tables",
                        hint="create the table APPEND ONLY, or SET "
                             "unsafe_enable_storage_retention_for_non_append_only_tables TO true")
    if not named:
        return None
    value = named[-1].args.get("value")
    text = value.name if isinstance(value, (exp.Literal, exp.Identifier, exp.Var)) else (value.sql() if value else "")
    try:
        seconds = int(text.strip().strip("'"))
    except ValueError:
        raise BindError(f"Invalid Parameter Value: retention_seconds must be a number of seconds, got {text}") from None
    return seconds if seconds > 0 else None


# types whose order means "newer": a version column compares lexicographically, in this order
_VERSION_TYPES = frozenset(("smallint", "integer", "bigint", "real", "double precision", "numeric",
                            "character varying", "bytea", "date", "time without time zone",
                            "timestamp without time zone", "timestamp with time zone"))


def _version_columns(columns: list[ColumnCatalog], names: list[str] | None, on_conflict: str) -> list[int]:
    """`ON CONFLICT ... WITH VERSION COLUMN (a, b)`: the positions of the columns whose values,
    compared in order, decide whether a write over an existing key wins (RisingWave: it wins
    when its versions are greater or equal, NULL lowest)."""
    if not names:
        return []
    if on_conflict == "do nothing":
        raise BindError("The with version column syntax cannot be used with the ignore behavior of on conflict")
    out = []
    for n in names:
        idx = next((i for i, c in enumerate(columns) if c.name == n and not c.hidden), None)
        if idx is None:
            raise BindError(f"Version column {n} not found")
        if columns[idx].type.name not in _VERSION_TYPES:
            raise BindError(f"Version column {n} must be of a comparable data type")
        out.append(idx)
    return out


def _check_generated(columns: list[ColumnCatalog]) -> None:
    """A generated column (`col type AS expr`) is computed from the other, ordinary columns."""
    from rw_cli.handler.dml import generated_values

    gen = [c for c in columns if c.generated]
    if not gen:
        return
    for c in gen:
        if c.default is not None:
            raise BindError(f'both default and generation expression specified for column "{c.name}"')
        refs = {col.name for col in exp.maybe_parse(c.generated, dialect="postgres").find_all(exp.Column)}
        for r in refs:
            other = next((o for o in columns if o.name == r), None)
            if other is None:
                raise BindError(f'column "{r}" does not exist')
            if other.generated:
                raise BindError(f'Generated column "{c.name}" cannot refer to generated column "{r}"')
    import pyarrow as pa

    if all(c.generated for c in columns):
        return  # nothing to evaluate them over (DuckDB reads no table without columns)
    empty = pa.schema([pa.field(c.name, c.type.arrow()) for c in columns if not c.generated]).empty_table()
    from rw_cli.errors import ExecutionError

    try:
        generated_values(columns, empty)  # type errors now, not at the first INSERT
    except ExecutionError as e:
        raise BindError(e.message.split("\n")[0].split(". You might need")[0]) from None


def add_table(session, rel: RelationCatalog) -> None:
    from rw_cli.sql.stored_exprs import watermark_expr
    from rw_cli.stream.builder import table_job

    rel.parallelism_config = session.settings.job_parallelism(rel.kind)
    session.catalog.add(rel)
    session.runtime.add_job(table_job(session.store, rel, watermark_expr(rel)))
    session.barrier()


# functions whose value is not the same for the same row (RisingWave's impure expressions)
_IMPURE = frozenset({"proctime", "now", "random", "rand", "gen_random_uuid", "clock_timestamp", "current_timestamp"})


def _check_impure(columns: list[ColumnCatalog], pk_names: list[str]) -> None:
    """A generated column of an impure expression (proctime()) is computed once, when the
    row comes: it can be neither NOT NULL nor part of the primary key (RisingWave's rule)."""
    for c in columns:
        if not c.generated:
            continue
        tree = exp.maybe_parse(c.generated, dialect="postgres")
        names = {f.sql_name().lower() for f in tree.find_all(exp.Func)} | \
                {f.name.lower() for f in tree.find_all(exp.Anonymous)}
        if not names & _IMPURE:
            continue
        if c.not_null:
            raise BindError("impure expression cannot have a NOT NULL constraint")
        if c.name in pk_names:
            raise BindError("impure expressions should not be part of the primary key")


# PostgreSQL's system columns: every table has them, so no column may take their names
SYSTEM_COLUMNS = frozenset({"tableoid", "xmin", "cmin", "xmax", "cmax", "ctid"})


def check_system_column_names(names: list[str]) -> None:
    """Refuse a column (of a table, source or MV) named like a system column; only the
    lowercase name is reserved, a quoted `"xMin"` is not."""
    for n in names:
        if n in SYSTEM_COLUMNS:
            raise BindError(f'column name "{n}" conflicts with a system column name')


def create_table_as(session, tree: exp.Create, name: str, names: list[str] | None = None) -> Result:
    """CREATE TABLE name [(a, b)] AS query: the query's columns and rows, in a new table;
    `names` rename its leading columns (the others keep the query's names)."""
    from rw_cli.handler.dml import insert_rows
    from rw_cli.handler.query import run_query

    data, types = run_query(session, tree.expression)
    names = names or []
    if len(names) > data.num_columns:
        raise BindError(f"too many column names were specified: {len(names)} for {data.num_columns} columns")
    data = data.rename_columns(names + data.column_names[len(names):])
    columns = [ColumnCatalog(n, t) for n, t in zip(data.column_names, types)]
    check_system_column_names(data.column_names)
    if len({c.name for c in columns}) != len(columns):
        raise BindError("column names of CREATE TABLE AS must be unique")
    columns.append(ColumnCatalog(ROW_ID, BIGINT, hidden=True))
    rel = RelationCatalog(session.catalog.alloc_id(), name, TABLE, columns, [len(columns) - 1])
    add_table(session, rel)
    insert_rows(session, rel, data, list(range(len(columns) - 1)))
    if session.dirty:
        session.barrier()
    return Result(f"SELECT {data.num_rows}")
