"""CREATE FUNCTION name(args) RETURNS type LANGUAGE SQL AS 'SELECT expr' (or `RETURN expr`) and
DROP FUNCTION: SQL functions whose body is one expression. A call is inlined where it is used
(`rw_cli.sql.functions.inline_sql_functions`), in batch queries and MVs alike."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import BindError, CatalogError, NotSupported
from rw_cli.result import Result


def handle_create(session, tree: exp.Create) -> Result:
    from rw_cli.handler.create_table import column_type
    from rw_cli.sql.functions import function_body

    udf = tree.this
    if not isinstance(udf, exp.UserDefinedFunction):
        raise BindError("CREATE FUNCTION needs a name and an argument list")
    name = (udf.this.name if isinstance(udf.this, (exp.Table, exp.Identifier)) else udf.name).lower()
    props = {type(p).__name__: p for p in (tree.args.get("properties") or exp.Properties()).expressions}
    lang = props.get("LanguageProperty")
    if lang is not None and lang.name.lower() != "sql":
        raise NotSupported(f"CREATE FUNCTION ... LANGUAGE {lang.name}")
    returns = props.get("ReturnsProperty")
    if returns is None or not isinstance(returns.this, exp.DataType) or returns.args.get("is_table"):
        raise NotSupported("CREATE FUNCTION without RETURNS type")
    args = []
    for a in udf.expressions:
        if isinstance(a, exp.ColumnDef):
            args.append([a.name, column_type(a.args["kind"]).name])
        elif isinstance(a, exp.DataType):
            args.append([None, column_type(a).name])
        else:  # a bare type name the parser took for an identifier: f(int)
            args.append([None, column_type(exp.DataType.build(a.name, dialect="postgres")).name])
    body = tree.expression
    if isinstance(body, exp.Return):
        text = body.this.sql(dialect="postgres")
    elif isinstance(body, (exp.Heredoc, exp.Literal)):
        text = str(body.this)
    else:
        raise NotSupported("this CREATE FUNCTION body")
    record = {"args": args, "returns": column_type(returns.this).name, "body": text}
    function_body(record)  # a body that is not one expression is refused now
    if name in session.catalog.functions and not tree.args.get("replace"):
        raise CatalogError(f'function "{name}" already exists')
    schema = udf.this.text("db") if isinstance(udf.this, exp.Table) else ""
    if schema and schema != "public":
        session.catalog.qualified(name, schema)  # the schema must exist
        record["schema"] = schema  # where default privileges of a schema apply to it
    session.catalog.functions[name] = record
    session.barrier()  # the catalog is committed with the next version
    return Result("CREATE_FUNCTION")


def handle_drop(session, tree: exp.Drop) -> Result:
    for t in tree.args.get("tables") or []:
        name = t.name.lower()
        if name not in session.catalog.functions:
            if tree.args.get("exists"):
                return Result("DROP_FUNCTION", notices=[f'function "{name}" does not exist, skipping'])
            raise CatalogError(f'function "{name}" does not exist')
        del session.catalog.functions[name]
        session.catalog.access.drop_object(f"function:{name}")
    session.barrier()
    return Result("DROP_FUNCTION")
