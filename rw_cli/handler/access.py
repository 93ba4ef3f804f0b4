"""Statements of the access catalog and of data-directory settings: CREATE | ALTER | DROP
USER and DATABASE, CREATE SCHEMA ... AUTHORIZATION and ALTER SCHEMA, ALTER ... OWNER TO,
GRANT, REVOKE, ALTER DEFAULT PRIVILEGES, COMMENT ON, CREATE | DROP SECRET, ALTER SYSTEM SET
and ALTER COMPACTION GROUP (rw_cli.meta.access, system_params, compaction_groups).

Each changes the catalog only and makes it durable (a barrier) before it returns. rw has one
database that holds data (`dev`); other databases are recorded with their owner and settings
(resource group, barrier interval, checkpoint frequency: what a distributed deployment would
schedule them by) and listed in rw_databases, as a single-process user would expect.
"""
from __future__ import annotations

from rw_cli.errors import CatalogError, NotSupported, SqlSyntaxError
from rw_cli.meta.access import ACTIONS, DEFAULT_DATABASE
from rw_cli.meta.catalog import DEFAULT_SCHEMA, INDEX, MATERIALIZED_VIEW, SINK, SOURCE, SUBSCRIPTION, TABLE, VIEW, RelationCatalog
from rw_cli.handler.authz import current_user
from rw_cli.result import Result
from rw_cli.sql.admin import Admin

_RELATION_KINDS = {"table": TABLE, "materialized view": MATERIALIZED_VIEW, "view": VIEW, "index": INDEX,
                   "sink": SINK, "source": SOURCE, "subscription": SUBSCRIPTION}


def handle(session, tree: Admin) -> Result:
    statement, spec = tree.this, tree.spec
    handler = _HANDLERS.get(statement)
    if handler is None:
        raise NotSupported(statement)
    result = handler(session, spec)
    session.barrier()  # the catalog is durable when the statement returns
    return result


# -- users --------------------------------------------------------------------------------------

def _create_user(session, spec: dict) -> Result:
    session.catalog.access.add_user(spec["name"], spec["options"])
    return Result("CREATE_USER")


def _alter_user(session, spec: dict) -> Result:
    access = session.catalog.access
    if "rename" in spec:
        access.rename_user(spec["name"], spec["rename"])
        for rel in session.catalog.relations.values():
            if rel.owner == spec["name"]:
                rel.owner = spec["rename"]
    else:
        access.alter_user(spec["name"], spec["options"])
    return Result("ALTER_USER")


def _drop_user(session, spec: dict) -> Result:
    access = session.catalog.access
    for name in spec["names"]:
        if name not in access.users and spec["exists"]:
            continue
        owned = [f'{r.kind} "{r.name}"' for r in session.catalog.in_creation_order() if r.owner == name]
        access.drop_user(name, owned)
    return Result("DROP_USER")


# -- databases ----------------------------------------------------------------------------------

def _db_setting(key: str, value):
    """A database setting as rw_databases holds it: DEFAULT resets it."""
    if key == "resource_group":
        return "default" if value is None else str(value)
    if key in ("barrier_interval_ms", "checkpoint_frequency"):
        if value is None:
            return None
        if not isinstance(value, int) or value <= 0:
            raise SqlSyntaxError(f"{key} must be a positive integer, not {value!r}")
        return value
    raise CatalogError(f'unrecognized database parameter "{key}"')


def _create_database(session, spec: dict) -> Result:
    access = session.catalog.access
    if spec["name"] in access.databases:
        if spec["exists"]:
            return Result("CREATE_DATABASE", notices=[f'database "{spec["name"]}" already exists, skipping'])
        raise CatalogError(f'database "{spec["name"]}" already exists')
    options = dict(spec["options"])
    if "resource_group" in options:
        from rw_cli.meta.system_params import check_resource_group_license

        check_resource_group_license(session.catalog.system_params)
    owner = options.pop("owner", None) or current_user(session)
    settings = {k: _db_setting(k, v) for k, v in options.items()}
    access.add_database(spec["name"], owner, settings)
    return Result("CREATE_DATABASE")


def _alter_database(session, spec: dict) -> Result:
    access = session.catalog.access
    db = access.must_database(spec["name"])
    if "rename" in spec:
        if spec["name"] == DEFAULT_DATABASE:
            raise NotSupported("renaming the database of this session", hint="rw holds its data in one database")
        access.rename_database(spec["name"], spec["rename"])
    elif "owner" in spec:
        access.must_user(spec["owner"])
        db["owner"] = spec["owner"]
    else:
        key, value = spec["set"]
        db[key] = _db_setting(key, value)
    return Result("ALTER_DATABASE")


def _drop_database(session, spec: dict) -> Result:
    access = session.catalog.access
    if spec["name"] not in access.databases and spec["exists"]:
        return Result("DROP_DATABASE", notices=[f'database "{spec["name"]}" does not exist, skipping'])
    access.drop_database(spec["name"], DEFAULT_DATABASE)
    return Result("DROP_DATABASE")


# -- schemas ------------------------------------------------------------------------------------

def _create_schema(session, spec: dict) -> Result:
    from rw_cli.handler.schema import create_schema

    owner = spec["owner"] or current_user(session)
    session.catalog.access.must_user(owner)
    if spec.get("database") not in (None, DEFAULT_DATABASE):  # a schema of another database
        if not session.catalog.access.add_foreign_schema(spec["database"], spec["name"], spec["exists"]):
            return Result("CREATE_SCHEMA", notices=[f'schema "{spec["name"]}" already exists, skipping'])
        return Result("CREATE_SCHEMA")
    result = create_schema(session, spec["name"], spec["exists"])
    if result.notices:
        return result
    access = session.catalog.access
    access.schema_owners[spec["name"]] = owner
    access.apply_defaults(None, "schema", f"schema:{spec['name']}", owner)
    return result


def _alter_schema(session, spec: dict) -> Result:
    from rw_cli.handler.schema import rename_schema, swap_schemas

    name = spec["name"]
    if name not in session.catalog.schemas and name != "public":
        raise CatalogError(f"schema not found: {name}")
    if "owner" in spec:
        session.catalog.access.must_user(spec["owner"])
        session.catalog.access.schema_owners[name] = spec["owner"]
    elif "rename" in spec:
        rename_schema(session, name, spec["rename"])
    else:
        swap_schemas(session, name, spec["swap"])
    return Result("ALTER_SCHEMA")


# -- owners -------------------------------------------------------------------------------------

def _alter_owner(session, spec: dict) -> Result:
    access = session.catalog.access
    kind, name, owner = spec["kind"], spec["name"], spec["owner"]
    access.must_user(owner)
    tag = "ALTER_" + kind.upper().replace(" ", "_")
    if kind == "database":
        access.must_database(name)["owner"] = owner
    elif kind == "schema":
        return _alter_schema(session, {"name": name, "owner": owner})
    elif kind in _RELATION_KINDS:
        rel = find_relation(session.catalog, name, _RELATION_KINDS[kind])
        rel.owner = owner
        for other in session.catalog.relations.values():  # its indexes follow the relation
            if other.kind == INDEX and rel.id in other.dependencies:
                other.owner = owner
    elif kind == "function":
        key = f"function:{_function_key(session, name)}"
        access.object_owners[key] = owner
    elif kind == "secret":
        if name not in access.secrets:
            raise CatalogError(f'secret "{name}" does not exist')
        access.object_owners[f"secret:{name}"] = owner
    else:
        raise CatalogError(f'{kind} "{name}" does not exist')
    return Result(tag)


def find_relation(catalog, name: str, kind: str) -> RelationCatalog:
    """A relation by `name` or `schema.name`, of `kind` (a name with a dot but no schema of
    that name before it is a name of its own: CREATE TABLE "a.b")."""
    schema, _, bare = name.rpartition(".")
    if schema and schema not in catalog.schemas and schema != DEFAULT_SCHEMA and catalog.get(name) is not None:
        schema, bare = "", name
    rel = catalog.get(catalog.qualified(bare, schema or None))
    if rel is None:
        raise CatalogError(f'{kind} "{name}" does not exist')
    if rel.kind != kind:  # RisingWave's words for an ALTER TABLE of an MV, say
        raise CatalogError(f'"{name}" is not a {kind} or cannot be altered',
                           hint=f'"{name}" is a {rel.kind}')
    return rel


def _function_key(session, signature: str) -> str:
    """A function by `name(args)` or `name`: its catalog name."""
    name = signature.split("(")[0].rpartition(".")[2]  # functions are one namespace
    if name not in session.catalog.functions:
        raise CatalogError(f'function "{signature}" does not exist')
    return name


# -- privileges ---------------------------------------------------------------------------------

def _actions(kind: str, actions: list[str] | None) -> list[str]:
    """The actions a GRANT names, checked against what `kind` of object takes; ALL: all."""
    valid = ("SELECT",) if kind in ("materialized view", "view", "index") else ACTIONS[kind]
    if actions is None:
        return list(valid)
    for a in actions:
        if a not in valid:
            raise CatalogError(f"invalid privilege type {a} for {kind}")
    return actions


def _objects(session, objects: dict) -> list[str]:
    """The keys of the objects a GRANT or REVOKE names (each must exist)."""
    catalog, kind = session.catalog, objects["kind"]
    if "all_in" in objects:
        keys = []
        for schema in objects["all_in"]:
            if schema != "public" and schema not in catalog.schemas:
                raise CatalogError(f"schema not found: {schema}")
            if kind == "function":
                keys += [f"function:{f}" for f, record in catalog.functions.items()
                         if record.get("schema", "public") == schema]
                continue
            want = _RELATION_KINDS.get(kind)
            # an index is a materialized view of its table in RisingWave: ALL MATERIALIZED
            # VIEWS takes the schema's indexes too
            kinds = (want, INDEX) if want == MATERIALIZED_VIEW else (want,)
            keys += [f"relation:{r.id}" for r in catalog.in_creation_order() if r.kind in kinds
                     and (r.name.rpartition(".")[0] or "public") == schema]
        return keys
    keys = []
    for name in objects["names"]:
        if kind == "database":
            catalog.access.must_database(name)
            keys.append(f"database:{name}")
        elif kind == "schema":
            if name != "public" and name not in catalog.schemas:
                raise CatalogError(f"schema not found: {name}")
            keys.append(f"schema:{name}")
        elif kind == "function":
            keys.append(f"function:{_function_key(session, name)}")
        elif kind == "table":  # GRANT ... ON [TABLE] name: any relation, as in PostgreSQL
            schema, _, bare = name.rpartition(".")
            rel = catalog.get(catalog.qualified(bare, schema or None))
            if rel is None or rel.kind == INDEX:
                raise CatalogError(f"table not found: {name}")
            keys.append(f"relation:{rel.id}")
        elif kind in _RELATION_KINDS:
            keys.append(f"relation:{find_relation(catalog, name, _RELATION_KINDS[kind]).id}")
        else:
            raise NotSupported(f"GRANT ON {kind.upper()}")
    return keys


def _grant(session, spec: dict, revoke: bool = False) -> Result:
    access = session.catalog.access
    actions = _actions(spec["objects"]["kind"], spec["actions"])
    for user in spec["users"]:
        access.must_user(user)
    granted_by = spec["granted_by"]
    if granted_by and granted_by.lower() in ("current_user", "session_user", "current_role"):
        granted_by = current_user(session)  # GRANTED BY CURRENT_USER: the user running it
    if granted_by:
        access.must_user(granted_by)
    keys = _objects(session, spec["objects"])
    for user in spec["users"]:
        for key in keys:
            for action in _actions_on(session, key, actions, explicit=spec["actions"] is not None,
                                      as_table=spec["objects"]["kind"] == "table" and "all_in" not in spec["objects"]):
                if revoke:
                    access.revoke(user, key, action, spec["grant_option"])
                else:
                    access.grant(user, key, action, spec["grant_option"],
                                 granted_by or current_user(session))
    return Result("REVOKE_PRIVILEGE" if revoke else "GRANT_PRIVILEGE")


def _actions_on(session, key: str, actions: list[str], explicit: bool, as_table: bool = False) -> list[str]:
    """The actions a GRANT gives on one object: a relation other than a table takes SELECT only
    (ALL gives it that; naming another action is refused). A view named as a table
    (`GRANT INSERT ON v`) takes what a table takes, as in RisingWave."""
    if not key.startswith("relation:"):
        return actions
    rel = session.catalog.relations[int(key.split(":", 1)[1])]
    if rel.kind == TABLE or (as_table and explicit and rel.kind == VIEW):
        return actions
    if explicit and any(a != "SELECT" for a in actions):
        raise CatalogError(f"invalid privilege type {next(a for a in actions if a != 'SELECT')} for {rel.kind}")
    return [a for a in actions if a == "SELECT"]


def _default_privileges(session, spec: dict) -> Result:
    access, kind = session.catalog.access, spec["kind"]
    if kind == "schema" and spec["schemas"]:
        raise CatalogError("cannot use IN SCHEMA clause when using GRANT/REVOKE ON SCHEMAS")
    for user in spec["users"] + (spec["for_users"] or []):
        access.must_user(user)
    for schema in spec["schemas"] or []:
        if schema != "public" and schema not in session.catalog.schemas:
            raise CatalogError(f"schema not found: {schema}")
    actions = _actions(kind, spec["actions"])
    for schema in spec["schemas"] or [None]:
        access.alter_default(schema, kind, actions, spec["users"], not spec["revoke"], spec["grant_option"])
    return Result("ALTER_DEFAULT_PRIVILEGES")


def apply_default_privileges(session, first_new_id: int, functions_before: set[str]) -> None:
    """Grant what ALTER DEFAULT PRIVILEGES says to the relations and functions a CREATE made."""
    catalog = session.catalog
    access = catalog.access
    if not access.default_privileges:
        return
    kinds = {v: k for k, v in _RELATION_KINDS.items()}
    for rel in catalog.in_creation_order():
        if rel.id >= first_new_id and rel.kind in kinds:
            access.apply_defaults(rel.name.rpartition(".")[0] or "public", kinds[rel.kind],
                                  f"relation:{rel.id}", rel.owner)
    for name in set(catalog.functions) - functions_before:
        access.apply_defaults(catalog.functions[name].get("schema", "public"), "function", f"function:{name}",
                              current_user(session))


# -- secrets ------------------------------------------------------------------------------------

def _create_secret(session, spec: dict) -> Result:
    """CREATE SECRET: kept in the catalog (RisingWave's `meta` backend keeps it in its meta store)."""
    access = session.catalog.access
    if spec["name"] in access.secrets and spec["exists"]:
        return Result("CREATE_SECRET", notices=[f'secret "{spec["name"]}" already exists, skipping'])
    backend = str(spec["options"].get("backend", "meta")).lower()
    access.add_secret(spec["name"], backend, spec["value"], current_user(session))
    return Result("CREATE_SECRET")


def _drop_secret(session, spec: dict) -> Result:
    access = session.catalog.access
    if spec["name"] not in access.secrets and spec["exists"]:
        return Result("DROP_SECRET", notices=[f'secret "{spec["name"]}" does not exist, skipping'])
    access.drop_secret(spec["name"])
    return Result("DROP_SECRET")


# -- compaction groups --------------------------------------------------------------------------

def _alter_compaction_group(session, spec: dict) -> Result:
    """Validate every setting on a copy first: a bad one changes nothing."""
    from rw_cli.meta import compaction_groups

    configs = session.catalog.compaction_configs
    changed = {}
    for group in spec["ids"]:
        if group not in compaction_groups.GROUP_IDS:
            raise CatalogError(f"compaction group {group} does not exist")
        config = dict(configs.get(str(group)) or compaction_groups.default_config())
        for key, value in spec["settings"]:
            compaction_groups.apply(config, key, value)
        changed[str(group)] = config
    configs.update(changed)
    return Result("ALTER_COMPACTION_GROUP")


# -- system parameters --------------------------------------------------------------------------

def _alter_system(session, spec: dict) -> Result:
    """ALTER SYSTEM SET name TO value | DEFAULT: a system parameter, or the default of a
    session parameter for every session (this one included)."""
    from rw_cli.common.session_config import canonical, is_parameter
    from rw_cli.meta import system_params

    stored = session.catalog.system_params
    name, value = spec["name"].lower(), spec["value"]
    if name in system_params.PARAMS:
        if not system_params.PARAMS[name][1]:
            raise CatalogError(f'system parameter "{name}" cannot be changed while running')
        if name == "time_travel_retention_ms" and value is not None:
            from rw_cli.handler.time_travel import check_retention

            check_retention(value)
    elif is_parameter(name):
        name = canonical(name)
        if value is not None:
            value = session.settings.check(name, str(value).lower() if isinstance(value, bool) else str(value))
        session.settings.reset(name)
    else:
        raise CatalogError(f'unrecognized system parameter "{name}"')
    if value is None:
        stored.pop(name, None)
    else:
        stored[name] = str(value)
    return Result("ALTER_SYSTEM")


# -- comments -----------------------------------------------------------------------------------

def _comment(session, spec: dict) -> Result:
    catalog, kind, name = session.catalog, spec["kind"], spec["name"]
    if kind == "column":
        rel_name, _, column = name.rpartition(".")
        schema, _, bare = rel_name.rpartition(".")
        rel = catalog.get(catalog.qualified(bare, schema or None))
        if rel is None:
            raise CatalogError(f'relation "{rel_name}" does not exist')
        rel.column_index(column)
        key = column
    else:
        rel = find_relation(catalog, name, _RELATION_KINDS.get(kind, kind))
        key = ""
    if spec["text"] is None:
        rel.comments.pop(key, None)
    else:
        rel.comments[key] = spec["text"]
    return Result("COMMENT")


_HANDLERS = {
    "CREATE USER": _create_user,
    "ALTER USER": _alter_user,
    "DROP USER": _drop_user,
    "CREATE DATABASE": _create_database,
    "ALTER DATABASE": _alter_database,
    "DROP DATABASE": _drop_database,
    "CREATE SCHEMA": _create_schema,
    "ALTER SCHEMA": _alter_schema,
    "ALTER OWNER": _alter_owner,
    "GRANT": _grant,
    "REVOKE": lambda session, spec: _grant(session, spec, revoke=True),
    "ALTER DEFAULT PRIVILEGES": _default_privileges,
    "COMMENT": _comment,
    "ALTER COMPACTION GROUP": _alter_compaction_group,
    "ALTER SYSTEM": _alter_system,
    "CREATE SECRET": _create_secret,
    "DROP SECRET": _drop_secret,
}
