"""ALTER TABLE t ALTER COLUMN c TYPE new_type: a column of a type that contains a struct
takes a new struct layout (RisingWave's schema evolution of struct fields).

Fields are matched by name, at any depth (inside lists and map values too): a field kept keeps
its values, a new field is NULL in the rows already there, a field left out is dropped. A
kept field must keep its type (or, if it contains a struct, evolve by the same rule); other
type changes are refused as RisingWave refuses them. The table's rows are rewritten in the
new layout, and its stream jobs and the jobs downstream are rebuilt from the catalog (as on a
restart): a materialized view that reads the column by field names goes on with new rows,
its state kept. A downstream job whose own columns would change type is refused.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from rw_cli.common.types import DataType
from rw_cli.errors import BindError, NotSupported
from rw_cli.meta.catalog import TABLE
from rw_cli.result import Result

# RisingWave's names of type kinds, as its "incompatible data type change" error shows them
_KIND_NAMES = {"boolean": "Boolean", "smallint": "Int16", "integer": "Int32", "bigint": "Int64",
               "real": "Float32", "double precision": "Float64", "numeric": "Decimal", "date": "Date",
               "character varying": "Varchar", "time without time zone": "Time",
               "timestamp without time zone": "Timestamp", "timestamp with time zone": "Timestamptz",
               "interval": "Interval", "bytea": "Bytea", "jsonb": "Jsonb", "serial": "Serial",
               "rw_int256": "Int256"}


def handle(session, tree: exp.Alter, action: exp.AlterColumn) -> Result:
    from rw_cli.handler.access import find_relation
    from rw_cli.handler.create_table import column_type

    rel = find_relation(session.catalog, _name(tree.this), TABLE)
    column = action.this.name
    idx = next((i for i, c in enumerate(rel.columns) if c.name == column and not c.hidden), None)
    if idx is None:
        raise BindError(f'column "{column}" does not exist in table "{rel.name}"')
    old, new = rel.columns[idx].type, column_type(action.args["dtype"])
    if not _has_struct(old):  # (a change to a type without one is an incompatible change)
        raise NotSupported("ALTER COLUMN TYPE: only types containing struct can be altered")
    check_compatible(old, new)
    if idx in rel.pk or rel.connector or rel.columns[idx].generated:
        raise NotSupported("ALTER COLUMN TYPE of a key, generated or connector column")
    def change() -> None:
        rel.columns[idx].type = new

    def undo() -> None:
        rel.columns[idx].type = old

    check_downstream(session, rel, change, undo)

    def rewrite(rows: pa.Table) -> pa.Table:
        change()
        return rows.set_column(idx, rows.schema.field(idx).name,
                               evolve(rows.column(idx).combine_chunks(), old, new))
    rewrite_table(session, rel, rewrite)
    return Result("ALTER_TABLE")


def rewrite_table(session, rel, rewrite) -> None:
    """Change a table's layout: its committed rows are read, `rewrite` changes the catalog
    and returns the rows in the new layout; every job is rebuilt from the catalog (as on a
    restart) and the rows are written back, durable with the catalog."""
    session.barrier()  # the rows to rewrite are committed
    rows = rewrite(session.runtime.live_table(rel.id).scan())
    session.recover()  # every job rebuilt from the catalog, reading the new layout
    table = session.runtime.live_table(rel.id)
    if rows.num_rows:
        batch = pa.Table.from_arrays(rows.columns, schema=table.schema).combine_chunks().to_batches()[0]
        table.write_chunk(batch, np.zeros(rows.num_rows, dtype=np.int8))
    session.barrier()  # the catalog and the rewritten rows are durable together


def _name(table: exp.Table) -> str:
    return f"{table.text('db')}.{table.name}" if table.text("db") else table.name


def _shape(t: DataType) -> str:
    """list | map | struct | scalar (a list of structs is a list: its name starts `struct<`)."""
    if t.is_list:
        return "list"
    if t.is_map:
        return "map"
    return "struct" if t.is_struct else "scalar"


def _has_struct(t: DataType) -> bool:
    shape = _shape(t)
    return shape == "struct" or (shape in ("list", "map") and any(_has_struct(i) for i in t.inner))


def _kind(t: DataType) -> str:
    shape = _shape(t)
    return shape.capitalize() if shape != "scalar" else _KIND_NAMES.get(t.name, t.name)


def check_compatible(old: DataType, new: DataType) -> None:
    """Refuse a change other than struct fields added or dropped, at any depth."""
    shapes = (_shape(old), _shape(new))
    if shapes == ("struct", "struct"):
        before = dict(zip(old.field_names, old.inner))
        for name, t in zip(new.field_names, new.inner):
            if name in before:
                check_compatible(before[name], t)
        return
    if shapes in (("list", "list"), ("map", "map")):
        for a, b in zip(old.inner, new.inner):
            check_compatible(a, b)
        return
    if old != new:
        raise BindError(f"incompatible data type change from {_kind(old)} to {_kind(new)}")


def evolve(array: pa.Array, old: DataType, new: DataType) -> pa.Array:
    """`array` (of `old`) in the layout of `new`: struct fields by name, new ones NULL."""
    shapes = (_shape(old), _shape(new))
    if shapes == ("struct", "struct"):
        before = {n: (i, t) for i, (n, t) in enumerate(zip(old.field_names, old.inner))}
        children = [evolve(array.field(before[n][0]), before[n][1], t) if n in before
                    else pa.nulls(len(array), t.arrow()) for n, t in zip(new.field_names, new.inner)]
        fields = [pa.field(n, t.arrow()) for n, t in zip(new.field_names, new.inner)]
        if not fields:
            return pa.array([None if v is None else {} for v in array.to_pylist()], new.arrow())
        return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null())
    if shapes == ("list", "list"):
        values = evolve(array.values, old.inner[0], new.inner[0])
        return pa.ListArray.from_arrays(array.offsets, values, type=new.arrow(), mask=array.is_null())
    if shapes == ("map", "map"):
        items = evolve(array.items, old.inner[1], new.inner[1])
        out = pa.MapArray.from_arrays(array.offsets, array.keys, items, type=new.arrow())
        if array.null_count:  # from_arrays reads nulls from the offsets only: rebuild with them
            out = pa.array([None if v is None else w for v, w in zip(array.to_pylist(), out.to_pylist())],
                           new.arrow())
        return out
    return array.cast(new.arrow())


def check_downstream(session, rel, change, undo) -> None:
    """Every job downstream of the table must still plan after `change` (undone after), with
    its columns' types unchanged: a job whose own columns would change is in the way."""
    from rw_cli.handler.replan import job_plan

    dependents = [r for r in session.catalog.in_creation_order() if rel.id in r.dependencies]
    if not dependents:
        return
    change()
    try:
        for dep in dependents:
            root = job_plan(session, dep).root
            if root is not None and list(root.types) != [c.type for c in dep.columns]:
                raise NotSupported(f'ALTER TABLE: the columns of "{dep.name}", which reads "{rel.name}", '
                                   "would change", hint="drop it first, alter the table, then create it again")
    finally:
        undo()
