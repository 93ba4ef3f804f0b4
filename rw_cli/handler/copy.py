"""COPY: PostgreSQL's bulk load and unload of tables and query results.

    COPY table [(column, ...)] FROM 'file' [[WITH] (option, ...)]
    COPY {table [(column, ...)] | (query)} TO {'file' | STDOUT} [[WITH] (option, ...)]

Options as in PostgreSQL: FORMAT text | csv | parquet (text is the default), HEADER,
DELIMITER, NULL, QUOTE, ESCAPE; the old spelling `WITH CSV HEADER` too. Parquet is ours
(PostgreSQL has none): its columns load by position and keep their Arrow types.

A load reads the whole file first, as text (csv, text) or Arrow (parquet), casts it to the
table's columns with PostgreSQL's input rules, and only then writes: a bad value stops the
load before any row is written, with PostgreSQL's CONTEXT line (`COPY t, line 3, column b:
"x"`). The file is read by the rw process, so a relative path is relative to where rw runs
(psql's `\\copy` and the server-side COPY are the same thing here).

`COPY ... FROM STDIN` / `TO STDOUT` over the wire (rw_cli.server.copy) reads the client's
rows itself and hands them here as text columns: `copy_in`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import pyarrow as pa
from sqlglot import exp

from rw_cli.common import numeric
from rw_cli.common.copy_text import decode_text_column, encode_csv_column, encode_text_column, join_lines
from rw_cli.common.pg_text import format_array
from rw_cli.common.types import DataType
from rw_cli.engine import duck
from rw_cli.errors import BindError, ExecutionError, NotSupported, RwError
from rw_cli.handler.dml import insert_rows, target_table
from rw_cli.meta.catalog import RelationCatalog
from rw_cli.result import Result

FORMATS = ("text", "csv", "parquet", "binary")  # binary: over the wire only (rw_cli.server.copy)


@dataclass
class CopyOptions:
    format: str = "text"
    header: bool = False
    delimiter: str | None = None
    null: str | None = None
    quote: str = '"'
    escape: str | None = None

    def finish(self) -> "CopyOptions":
        """PostgreSQL's defaults, which depend on the format."""
        if self.delimiter is None:
            self.delimiter = "," if self.format == "csv" else "\t"
        if self.null is None:
            self.null = "" if self.format == "csv" else "\\N"
        if self.escape is None:
            self.escape = self.quote
        if self.format == "text" and self.header:
            raise BindError("cannot specify HEADER in TEXT mode", hint="use FORMAT csv")
        for name in ("delimiter", "quote", "escape"):
            if len(getattr(self, name)) != 1:
                raise BindError(f"COPY {name} must be a single one-byte character")
        return self


def handle(session, tree: exp.Copy) -> Result:
    opts = copy_options(tree)
    files = tree.args.get("files") or []
    if len(files) != 1:
        raise BindError("COPY needs exactly one file, STDIN or STDOUT")
    target = files[0]
    to_std = isinstance(target, (exp.Identifier, exp.Var, exp.Column)) and target.name.upper() in ("STDIN", "STDOUT")
    if opts.format == "binary" and not to_std:
        raise NotSupported('COPY format "binary" with a file', hint="formats of files: text, csv, parquet")
    if tree.args.get("kind"):  # FROM
        if to_std:
            raise NotSupported("COPY FROM STDIN", hint="load a file: COPY t FROM 'path' (or \\copy t FROM 'path')")
        return _copy_from(session, tree.this, opts, _path(target))
    return _copy_to(session, tree.this, opts, None if to_std else _path(target))


def _path(target: exp.Expression) -> str:
    if not isinstance(target, exp.Literal) or not target.is_string:
        raise BindError("COPY needs a file name in quotes, STDIN or STDOUT")
    return os.path.expanduser(target.this)


def copy_options(tree: exp.Copy) -> CopyOptions:
    """The statement's options with PostgreSQL's defaults for its format."""
    opts = CopyOptions()
    for p in tree.args.get("params") or []:
        name = p.this.name.lower()
        value = p.expression
        if name in ("csv", "text", "binary") and (value is None or value.name.upper() == "HEADER"):
            opts.format = name  # the old spelling: WITH CSV [HEADER]
            opts.header = opts.header or value is not None
            continue
        if name == "format":
            opts.format = (value.name if value is not None else "").lower()
            if opts.format not in FORMATS:
                raise NotSupported(f'COPY format "{opts.format}"', hint=f"formats: {', '.join(FORMATS)}")
        elif name == "header":
            opts.header = value is None or _bool(value)
        elif name in ("delimiter", "null", "quote", "escape"):
            if not isinstance(value, exp.Literal) or not value.is_string:
                raise BindError(f"COPY {name} must be a string in quotes")
            setattr(opts, name, value.this)
        else:
            raise BindError(f'option "{name}" not recognized')
    return opts.finish()


def _bool(value: exp.Expression) -> bool:
    text = value.sql().strip("'").lower()
    if text in ("true", "on", "1"):
        return True
    if text in ("false", "off", "0"):
        return False
    raise BindError(f"HEADER requires a Boolean value, not {text}")


# -- FROM ----------------------------------------------------------------------------------------

def _copy_from(session, target: exp.Expression, opts: CopyOptions, path: str) -> Result:
    table = target.this if isinstance(target, exp.Schema) else target
    if not isinstance(table, exp.Table):
        raise BindError("COPY FROM loads a table, not a query")
    rel = target_table(session, table, "INSERT")
    indices = _target_columns(rel, target)
    if not os.path.isfile(path):
        raise ExecutionError(f'could not open file "{path}" for reading: No such file or directory')
    data = _read(path, opts, len(indices), rel, indices)
    n = insert_rows(session, rel, data, indices, where=_where(rel, opts))
    return Result(f"COPY {n}")


def _target_columns(rel: RelationCatalog, target: exp.Expression) -> list[int]:
    if not isinstance(target, exp.Schema):
        return [i for i, c in enumerate(rel.columns) if not c.hidden and not c.generated]
    out = []
    for e in target.expressions:
        if not any(c.name == e.name and not c.hidden for c in rel.columns):
            raise BindError(f'column "{e.name}" of relation "{rel.name}" does not exist')
        out.append(rel.column_index(e.name))
    if len(set(out)) != len(out):
        raise BindError("column specified more than once")
    return out


def _read(path: str, opts: CopyOptions, width: int, rel: RelationCatalog, indices: list[int]) -> pa.Table:
    """The file's rows: text columns for csv and text, Arrow's own types for parquet."""
    if opts.format == "parquet":
        import pyarrow.parquet as pq

        try:
            data = pq.read_table(path)
        except (pa.ArrowInvalid, OSError) as e:
            raise ExecutionError(f'could not read Parquet file "{path}": {e}') from None
        if data.num_columns != width:
            raise ExecutionError(f"the Parquet file has {data.num_columns} columns, COPY expects {width}",
                                 hint="name the table's columns to load: COPY t (a, b) FROM ...")
        return data
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(width)) + "}"
    quote, escape = (_sql_text(opts.quote), _sql_text(opts.escape)) if opts.format == "csv" else ("''", "''")
    sql = (f"SELECT * FROM read_csv({_sql_text(path)}, columns={columns}, header={str(opts.header).lower()}, "
           f"delim={_sql_text(opts.delimiter)}, quote={quote}, escape={escape}, nullstr={_sql_text(opts.null)}, "
           f"auto_detect=false, allow_quoted_nulls=false)")
    try:
        data = duck.query(sql)
    except ExecutionError as e:
        raise _csv_error(e, rel, indices) from None
    if opts.format == "text":
        data = pa.Table.from_arrays([decode_text_column(c) for c in data.columns], names=data.column_names)
    return data


def _sql_text(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _csv_error(e: ExecutionError, rel: RelationCatalog, indices: list[int]) -> RwError:
    """DuckDB's CSV error as PostgreSQL words it, with its CONTEXT line."""
    import re

    m = re.search(r"CSV Error on Line: (\d+)\s+Original Line: (.*?)\n.*?Expected Number of Columns: (\d+) Found: (\d+)",
                  e.message, re.S)
    if m is None:
        return ExecutionError(e.message.split("\n", 1)[0])
    line, original, expected, found = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
    if found > expected:
        return ExecutionError("extra data after last expected column",
                              context=f'COPY {rel.name}, line {line}: "{original}"')
    missing = rel.columns[indices[found]].name
    return ExecutionError(f'missing data for column "{missing}"', context=f'COPY {rel.name}, line {line}: "{original}"')


def _where(rel: RelationCatalog, opts: CopyOptions) -> Callable[[int, str, object], str]:
    """A load's first bad value as PostgreSQL's CONTEXT line names it: `COPY t, line 3, column
    b: "x"` (the file's line, its header counted; a Parquet file's row)."""
    def where(row: int, column: str, value: object) -> str:
        shown = "NULL" if value is None else f'"{value}"'
        if opts.format == "parquet":
            return f"COPY {rel.name}, row {row + 1}, column {column}: {shown}"
        return f"COPY {rel.name}, line {row + 1 + (1 if opts.header else 0)}, column {column}: {shown}"
    return where


# -- TO ------------------------------------------------------------------------------------------

def _copy_to(session, source: exp.Expression, opts: CopyOptions, path: str | None) -> Result:
    from rw_cli.handler.query import run_query

    if isinstance(source, exp.Subquery):
        query = source.this
    else:
        table = source.this if isinstance(source, exp.Schema) else source
        names = [exp.column(e.name, quoted=True) for e in source.expressions] \
            if isinstance(source, exp.Schema) else [exp.Star()]
        query = exp.select(*names).from_(table.copy())
    data, types = run_query(session, query)
    if opts.format == "parquet":
        if path is None:
            raise NotSupported("COPY TO STDOUT in Parquet format", hint="write a file: COPY ... TO 'out.parquet'")
        import pyarrow.parquet as pq

        pq.write_table(numeric.plain_table(data), path)
        return Result(f"COPY {data.num_rows}")
    text = _encode(data, types, opts)
    if path is None:
        return Result(f"COPY {data.num_rows}", copy_out=text)
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise ExecutionError(f'could not open file "{path}" for writing: {e.strerror}') from None
    return Result(f"COPY {data.num_rows}")


def _encode(data: pa.Table, types: list[DataType], opts: CopyOptions) -> str:
    fields = []
    for i, t in enumerate(types):
        values = format_array(data.column(i), t)
        if opts.format == "csv":
            fields.append(encode_csv_column(values, opts.delimiter, opts.quote, opts.escape, opts.null))
        else:
            fields.append(encode_text_column(values, opts.null))
    head = ""
    if opts.header:
        names = pa.array(data.column_names, pa.string())
        head = join_lines([encode_csv_column(names.slice(i, 1), opts.delimiter, opts.quote, opts.escape, opts.null)
                           for i in range(len(names))], opts.delimiter)
    return head + join_lines(fields, opts.delimiter)


# -- FROM STDIN over the wire (rw_cli.server.copy) -----------------------------------------------

def copy_in_types(session, table: str, columns: list[str] | None) -> list[DataType]:
    """The types of the fields each row of a COPY FROM has (checks the table takes writes)."""
    rel = target_table(session, exp.to_table(table), "INSERT")
    target = exp.Schema(this=exp.to_table(table), expressions=[exp.to_identifier(c) for c in columns]) \
        if columns else exp.to_table(table)
    return [rel.columns[i].type for i in _target_columns(rel, target)]


def copy_in(session, table: str, columns: list[str] | None, data: pa.Table) -> Result:
    """Insert `data` (text columns, one per target column) into `table`, as one write."""
    from rw_cli.handler import utility

    utility.check_not_in_transaction(session, "COPY")
    session.catch_up()
    rel = target_table(session, exp.to_table(table), "INSERT")
    target = exp.Schema(this=exp.to_table(table), expressions=[exp.to_identifier(c) for c in columns]) \
        if columns else exp.to_table(table)
    indices = _target_columns(rel, target)
    if data.num_columns != len(indices):
        raise BindError(f"COPY expects {len(indices)} column(s) per row, got {data.num_columns}")
    n = insert_rows(session, rel, data, indices, where=_where(rel, CopyOptions())) if data.num_rows else 0
    return Result(f"COPY {n}")


def copy_out_columns(session, table: str, columns: list[str] | None) -> str:
    """COPY table [(columns)] TO: the query that reads it."""
    rel = session.catalog.must_get(table)
    names = columns or [c.name for c in rel.visible_columns]
    return "SELECT " + ", ".join(exp.to_identifier(n).sql("postgres") for n in names) + \
        " FROM " + exp.to_table(table).sql("postgres")
