"""Statement handlers, one module per kind of statement; `dispatch` routes a parsed tree."""
from __future__ import annotations

from sqlglot import exp

from rw_cli.errors import NotSupported, ReadOnlyError
from rw_cli.result import Result
from rw_cli.sql.admin import Admin
from rw_cli.sql.dialect import (AlterFunction, AlterMaterializedViewQuery, CancelJobs, Explain, Flush,
                               PreparedStatement, Recover, RenameRelation, Savepoint, Show,
                               SubscriptionStatement, Wait, parse_statement)


# what a read-only session runs: reads of the committed state and the session's own settings
_READS = (Explain, Show, exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values, exp.Subquery,
          exp.Describe, exp.Set, exp.Transaction, exp.Commit, exp.Rollback, Savepoint)


# statements that never change the catalog (rw_cli.handler.prepared keeps what was bound
# against it across them): queries, DML and FLUSH
_KEEP_CATALOG = (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values, exp.Subquery,
                 exp.Insert, exp.Update, exp.Delete, Flush)


def keeps_catalog(tree: exp.Expression) -> bool:
    """Whether a statement leaves the catalog as it was (any other may change it)."""
    return isinstance(tree, _KEEP_CATALOG)


def reads_only(tree: exp.Expression) -> bool:
    """Whether a statement only reads committed state and the session's own settings (what
    a read-only session runs)."""
    if isinstance(tree, exp.Copy):
        return not tree.args.get("kind")  # COPY ... TO reads; COPY ... FROM writes
    if isinstance(tree, PreparedStatement):
        return tree.args["kind"] != "execute"  # keeping or forgetting a statement's text writes nothing
    return isinstance(tree, _READS) and not (isinstance(tree, Show) and tree.this == "JOBS")


def _creates_nothing(session, tree: exp.Expression) -> bool:
    """CREATE ... IF NOT EXISTS of a relation that exists: a notice, no write (so it runs in
    a read-only transaction, as in RisingWave)."""
    if not isinstance(tree, exp.Create) or not tree.args.get("exists"):
        return False
    table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(table, exp.Table):
        return False
    try:
        return session.catalog.get(session.catalog.qualified(table.name, table.text("db"))) is not None
    except Exception:  # noqa: BLE001 - an unknown schema: the statement's own error, later
        return False


def dispatch(session, tree: exp.Expression, sql: str) -> Result:
    owner = tree.this if isinstance(tree, Explain) and isinstance(tree.this, exp.Expression) else tree
    settings = owner.args.get("settings")
    if settings:  # `SELECT ... SETTINGS a = x, b = y`: the session's parameters for it alone
        owner.set("settings", None)
        with session.settings.only_for(settings):
            return _dispatch(session, tree, sql)
    return _dispatch(session, tree, sql)


def _dispatch(session, tree: exp.Expression, sql: str) -> Result:
    from rw_cli.handler import explain, query, utility

    if getattr(session, "read_only", False):
        if isinstance(tree, Flush):  # nothing of its own to flush: it read the newest commit
            return Result("FLUSH")
        if not reads_only(tree):
            raise ReadOnlyError(f"cannot execute {statement_word(tree)} in a read-only session",
                                hint=f"another process writes {session.data_dir}: this one opened it read-only")
    tree = _with_search_path(session, tree)
    if isinstance(tree, Explain):
        return explain.handle_explain(session, tree)
    if isinstance(tree, Flush):
        session.flush()  # returns once the epoch is durable
        return Result("FLUSH")
    if isinstance(tree, (Wait, CancelJobs)):
        from rw_cli.handler import jobs

        if isinstance(tree, Wait):
            return jobs.handle_wait(session)
        utility.check_not_in_transaction(session, "CANCEL JOBS")
        return jobs.handle_cancel(session, tree.meta["ids"])
    if isinstance(tree, Recover):
        utility.check_not_in_transaction(session, "RECOVER")
        session.recover()
        return Result("RECOVER")
    if isinstance(tree, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values)) or \
            (isinstance(tree, exp.Subquery)):
        return query.handle_query(session, tree, sql)
    if isinstance(tree, (exp.Create, exp.Drop, exp.Insert, exp.Delete, exp.Update, exp.TruncateTable)) \
            and not _creates_nothing(session, tree):
        word = "TRUNCATE" if isinstance(tree, exp.TruncateTable) else type(tree).__name__.upper()
        utility.check_not_in_transaction(session, word)
    if isinstance(tree, AlterMaterializedViewQuery):
        from rw_cli.handler import alter_mv

        return alter_mv.handle(session, tree, sql)
    if isinstance(tree, PreparedStatement):
        from rw_cli.handler import prepare

        if tree.args["kind"] == "execute":  # the statement runs as if it had been sent so
            sql = prepare.bound_sql(session, tree)
            return dispatch(session, parse_statement(sql), sql)
        return prepare.handle(session, tree)
    if isinstance(tree, SubscriptionStatement):
        from rw_cli.handler import subscription

        if tree.args["kind"] in ("create", "drop", "alter_retention"):
            utility.check_not_in_transaction(session, f"{tree.args['kind'].split('_')[0].upper()} SUBSCRIPTION")
        return subscription.handle(session, tree)
    if isinstance(tree, exp.Copy):
        from rw_cli.handler import copy

        if tree.args.get("kind"):
            utility.check_not_in_transaction(session, "COPY FROM")
        return copy.handle(session, tree)
    if isinstance(tree, Admin):
        from rw_cli.handler import access, alter_job

        utility.check_not_in_transaction(session, tree.this)
        if tree.this == "ALTER JOB CONFIG" or (tree.this == "ALTER JOB" and
                                                 str(tree.spec["key"]).endswith("_rate_limit")):
            from rw_cli.handler import jobs

            return jobs.handle_alter(session, tree.spec)
        if tree.this == "ALTER JOB":
            return alter_job.handle(session, tree.spec)
        if tree.this == "ALTER SET SCHEMA":
            from rw_cli.handler import rename

            return rename.set_schema(session, tree.spec)
        if tree.this == "ALTER WATERMARK":
            from rw_cli.handler import alter_watermark

            return alter_watermark.handle(session, tree.spec)
        return access.handle(session, tree)
    if isinstance(tree, exp.Create):
        return _create_with_defaults(session, tree, sql)
    actions = tree.args.get("actions") or [] if isinstance(tree, exp.Alter) else []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterColumn) and actions[0].args.get("dtype") is not None \
            and (tree.args.get("kind") or "").upper() == "TABLE":
        from rw_cli.handler import alter_column_type

        utility.check_not_in_transaction(session, "ALTER TABLE")
        return alter_column_type.handle(session, tree, actions[0])
    if len(actions) == 1 and isinstance(actions[0], exp.ColumnDef) and (tree.args.get("kind") or "").upper() == "TABLE":
        from rw_cli.handler import alter_add_column

        utility.check_not_in_transaction(session, "ALTER TABLE")
        return alter_add_column.handle(session, tree, actions[0])
    if len(actions) == 1 and isinstance(actions[0], exp.Drop) and (actions[0].args.get("kind") or "").upper() == "COLUMN" \
            and (tree.args.get("kind") or "").upper() == "TABLE":
        from rw_cli.handler import alter_drop_column

        utility.check_not_in_transaction(session, "ALTER TABLE")
        return alter_drop_column.handle(session, tree, actions[0])
    return _dispatch_rest(session, tree, sql)


def _with_search_path(session, tree: exp.Expression) -> exp.Expression:
    """`tree` with its unqualified relation names resolved by the session's search_path
    (every handler then binds them as written)."""
    if isinstance(tree, (exp.Set, exp.Use, Show, Admin)):
        return tree
    from rw_cli.handler.show import search_path
    from rw_cli.sql.search_path import apply_search_path

    return apply_search_path(tree, session.catalog, search_path(session))


def _create_with_defaults(session, tree: exp.Create, sql: str) -> Result:
    """A CREATE, then what ALTER DEFAULT PRIVILEGES grants on what it created."""
    from rw_cli.handler.access import apply_default_privileges

    first_new_id, functions = session.catalog.next_id, set(session.catalog.functions)
    result = _dispatch_rest(session, tree, sql)
    max_parallelism = session.settings.max_parallelism
    new = [r for r in session.catalog.relations.values() if r.id >= first_new_id]
    changed = any(r.max_parallelism != max_parallelism for r in new)
    from rw_cli.handler.authz import current_user

    owner = current_user(session)
    changed = changed or (new and owner != new[0].owner)
    for rel in new:  # recorded with the job (RisingWave fixes it at creation), owned by its creator
        rel.max_parallelism, rel.owner = max_parallelism, owner
    if session.catalog.access.default_privileges or changed:
        apply_default_privileges(session, first_new_id, functions)
        session.barrier()
    return result


def _dispatch_rest(session, tree: exp.Expression, sql: str) -> Result:
    from rw_cli.handler import create_mv, create_table, dml, drop, utility

    if isinstance(tree, AlterFunction):
        from rw_cli.handler import create_function

        return create_function.handle_alter(session, tree)
    if isinstance(tree, RenameRelation):
        from rw_cli.handler import rename

        utility.check_not_in_transaction(session, f"ALTER {tree.args['kind']}")
        return rename.handle(session, tree)
    if isinstance(tree, exp.Create):
        kind = (tree.args.get("kind") or "").upper()
        if kind in ("SOURCE", "SINK") or (kind == "TABLE" and _has_connector(tree)):
            from rw_cli.handler import create_sink, create_source

            if kind == "SINK":
                return create_sink.handle(session, tree, sql)
            if kind == "SOURCE":
                return create_source.handle_source(session, tree, sql)
            return create_source.handle_table(session, tree)
        if kind == "TABLE":
            return create_table.handle(session, tree)
        if kind == "SCHEMA":
            from rw_cli.handler import schema

            return schema.handle_create(session, tree)
        if kind == "INDEX":
            from rw_cli.handler import create_index

            return create_index.handle(session, tree, sql)
        if kind == "VIEW" and _is_materialized(tree):
            return create_mv.handle(session, tree, sql)
        if kind == "VIEW":
            from rw_cli.handler import create_view

            return create_view.handle(session, tree, sql)
        if kind == "FUNCTION":
            from rw_cli.handler import create_function

            return create_function.handle_create(session, tree)
        raise NotSupported(f"CREATE {kind}")
    if isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "FUNCTION":
        from rw_cli.handler import create_function

        return create_function.handle_drop(session, tree)
    if isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "SCHEMA":
        from rw_cli.handler import schema

        return schema.handle_drop(session, tree)
    if isinstance(tree, exp.Drop):
        return drop.handle(session, tree)
    if isinstance(tree, (exp.Insert, exp.Delete, exp.Update)):
        session.catch_up()
    if isinstance(tree, exp.Insert):
        return dml.handle_insert(session, tree)
    if isinstance(tree, exp.Delete):
        return dml.handle_delete(session, tree)
    if isinstance(tree, exp.Update):
        return dml.handle_update(session, tree)
    if isinstance(tree, exp.TruncateTable):
        return dml.handle_truncate(session, tree)
    if isinstance(tree, exp.Set):
        return utility.handle_set(session, tree)
    if isinstance(tree, exp.Use) and not tree.args.get("kind"):
        utility.use_database(session, tree.this.name)
        return Result("USE")
    if isinstance(tree, Show) and tree.this == "JOBS":
        from rw_cli.handler import show_jobs

        return show_jobs.handle(session, tree.this)
    if isinstance(tree, Show):
        from rw_cli.handler import show

        if show.lists(tree.this):
            target = tree.args.get("target")
            return show.handle(session, tree.this, target.lower().strip('"') if target else None,
                               tree.args.get("like"))
        return utility.handle_show(session, tree)
    if isinstance(tree, exp.Describe):
        return utility.handle_describe(session, tree)
    if isinstance(tree, (exp.Transaction, exp.Commit, exp.Rollback, Savepoint)):
        return utility.handle_transaction(session, tree)
    raise NotSupported(f"statement {type(tree).__name__.upper()}")


def statement_word(tree: exp.Expression) -> str:
    """The statement's kind as a message names it: INSERT, CREATE TABLE, TRUNCATE, ..."""
    if isinstance(tree, exp.Create):
        return f"CREATE {(tree.args.get('kind') or '').upper()}".strip()
    if isinstance(tree, exp.Drop):
        return f"DROP {(tree.args.get('kind') or '').upper()}".strip()
    if isinstance(tree, exp.TruncateTable):
        return "TRUNCATE"
    return type(tree).__name__.upper()


def _is_materialized(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    if props is None:
        return False
    return any(isinstance(p, exp.MaterializedProperty) for p in props.expressions)


def _has_connector(tree: exp.Create) -> bool:
    from rw_cli.connector import connector_spec

    return bool(connector_spec(tree))
