"""Users, databases, owners and privileges: the access-control part of the catalog.

Stored with the catalog (`Catalog.access`), so it persists and recovers with it. rw is one
process with one session user (`root`, a superuser), so privileges are recorded, granted and
revoked as RisingWave does and answered by has_*_privilege(), but the session user passes every
check; what RisingWave refuses to anyone (altering or dropping a reserved superuser, dropping a
user that owns objects) is refused here too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rw_cli.errors import CatalogError, RwError

DEFAULT_USER = "root"
# RisingWave's built-in superusers: root (the default), postgres (for PostgreSQL tools) and
# rwadmin (its own administration); the last two cannot be altered or dropped
RESERVED_USERS = ("root", "postgres", "rwadmin")
DEFAULT_DATABASE = "dev"
# object types of privileges and the actions each one takes (PostgreSQL's names)
ACTIONS = {
    "database": ("CONNECT", "CREATE", "TEMPORARY"),
    "schema": ("CREATE", "USAGE"),
    "table": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "source": ("SELECT",),
    "sink": ("SELECT",),
    "view": ("SELECT",),
    "function": ("EXECUTE",),
    "connection": ("USAGE", "CREATE"),
    "secret": ("USAGE", "CREATE"),
    "subscription": ("SELECT",),
}
USER_FLAGS = ("superuser", "createdb", "createuser", "login")


class PermissionDenied(RwError):
    """What no user may do, or what objects a user owns prevent."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(f"Permission denied: {message}", hint=hint)


@dataclass
class AccessCatalog:
    """users: name -> {"id", "superuser", "createdb", "createuser", "login", "password"};
    databases: name -> {"id", "owner", "resource_group", "barrier_interval_ms",
    "checkpoint_frequency"}; schema_owners: schema -> user; object_owners: "kind:name" ->
    user (functions, secrets); grants: [{"user", "object", "action", "grant_option",
    "granted_by"}] where object is "database:x", "schema:x" or "relation:<id>" or
    "function:name"; default_privileges: [{"schema", "object_type", "action", "user",
    "grant_option"}] (schema None: every schema)."""

    users: dict[str, dict] = field(default_factory=dict)
    databases: dict[str, dict] = field(default_factory=dict)
    schema_owners: dict[str, str] = field(default_factory=dict)
    object_owners: dict[str, str] = field(default_factory=dict)
    grants: list[dict] = field(default_factory=list)
    default_privileges: list[dict] = field(default_factory=list)
    # CREATE SECRET: name -> {"id", "backend", "value"} (its owner in object_owners)
    secrets: dict[str, dict] = field(default_factory=dict)
    next_id: int = 1

    def __post_init__(self) -> None:
        for name in RESERVED_USERS:
            if name not in self.users:
                self.users[name] = {"id": self._alloc(), "superuser": True, "createdb": True,
                                    "createuser": True, "login": True, "password": None}
        if DEFAULT_DATABASE not in self.databases:
            self.databases[DEFAULT_DATABASE] = _database(self._alloc(), DEFAULT_USER)

    def _alloc(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    # -- users --------------------------------------------------------------------------------

    def must_user(self, name: str) -> dict:
        user = self.users.get(name)
        if user is None:
            raise CatalogError(f'user "{name}" does not exist')
        return user

    def acting_user(self, authorization: str | None) -> str:
        """The user a session acts as, from its session_authorization setting (root when unset
        or when that user is gone)."""
        return authorization if authorization and authorization in self.users else DEFAULT_USER

    def user_name(self, user_id: int) -> str | None:
        return next((n for n, u in self.users.items() if u["id"] == user_id), None)

    def add_user(self, name: str, options: dict) -> None:
        if name in self.users:
            raise CatalogError(f'user "{name}" already exists')
        self.users[name] = {"id": self._alloc(), **{f: False for f in USER_FLAGS}, "login": True,
                            "password": None, **options}

    def alter_user(self, name: str, options: dict) -> None:
        self._check_not_reserved(name)
        self.must_user(name).update(options)

    def rename_user(self, name: str, new: str) -> None:
        self._check_not_reserved(name)
        user = self.must_user(name)
        if new in self.users:
            raise CatalogError(f'user "{new}" already exists')
        del self.users[name]
        self.users[new] = user
        self._replace_user(name, new)

    def drop_user(self, name: str, owned: list[str]) -> None:
        """Drop a user that owns nothing (`owned`: what the relations' catalog says it owns)."""
        self._check_not_reserved(name)
        self.must_user(name)
        owned = owned + [f'database "{d}"' for d, v in self.databases.items() if v["owner"] == name]
        owned += [f'schema "{s}"' for s, o in self.schema_owners.items() if o == name]
        owned += [k.replace(":", ' "', 1) + '"' for k, o in self.object_owners.items() if o == name]
        if owned:
            raise PermissionDenied(f"User {name} cannot be dropped because some objects depend on it",
                                   hint=f"it owns {owned[0]}: drop it or ALTER ... OWNER TO another user")
        del self.users[name]
        self.grants = [g for g in self.grants if g["user"] != name]
        self.default_privileges = [d for d in self.default_privileges if d["user"] != name]

    def _check_not_reserved(self, name: str) -> None:
        if name in RESERVED_USERS[1:] or name == DEFAULT_USER:
            raise PermissionDenied(f"cannot alter or drop the reserved superuser {name}")

    def _replace_user(self, old: str, new: str) -> None:
        for d in self.databases.values():
            if d["owner"] == old:
                d["owner"] = new
        for table in (self.schema_owners, self.object_owners):
            for k, v in table.items():
                if v == old:
                    table[k] = new
        for g in self.grants + self.default_privileges:
            if g["user"] == old:
                g["user"] = new

    # -- databases ----------------------------------------------------------------------------

    def must_database(self, name: str) -> dict:
        db = self.databases.get(name)
        if db is None:
            raise CatalogError(f'database "{name}" does not exist')
        return db

    def add_database(self, name: str, owner: str, settings: dict) -> None:
        if name in self.databases:
            raise CatalogError(f'database "{name}" already exists')
        self.must_user(owner)
        self.databases[name] = {**_database(self._alloc(), owner), **settings}

    def drop_database(self, name: str, current: str) -> None:
        db = self.must_database(name)
        if name == current:
            raise PermissionDenied(f'cannot drop the currently open database "{name}"')
        if db.get("schemas"):
            raise CatalogError(f'cannot drop database "{name}" because it is not empty',
                               hint=f'schema "{db["schemas"][0]}" is in it; drop its schemas first')
        del self.databases[name]
        self.grants = [g for g in self.grants if g["object"] != f"database:{name}"]

    def add_foreign_schema(self, database: str, name: str, if_not_exists: bool) -> bool:
        """CREATE SCHEMA database.name of a database other than the open one: recorded with
        that database (its relations live elsewhere), so that it keeps the database from
        being dropped. False when it exists and `if_not_exists`."""
        schemas = self.must_database(database).setdefault("schemas", [])
        if name in schemas:
            if if_not_exists:
                return False
            raise CatalogError(f'schema "{name}" already exists')
        schemas.append(name)
        return True

    def drop_foreign_schema(self, database: str, name: str, if_exists: bool) -> None:
        """DROP SCHEMA database.name of a database other than the open one."""
        schemas = self.must_database(database).get("schemas", [])
        if name in schemas:
            schemas.remove(name)
        elif not if_exists:
            raise CatalogError(f"schema not found: {name}")

    def rename_database(self, name: str, new: str) -> None:
        db = self.must_database(name)
        if new in self.databases:
            raise CatalogError(f'database "{new}" already exists')
        del self.databases[name]
        self.databases[new] = db
        self._rename_object(f"database:{name}", f"database:{new}")

    # -- schemas and other owned objects ------------------------------------------------------

    def rename_schema(self, name: str, new: str) -> None:
        if name in self.schema_owners:
            self.schema_owners[new] = self.schema_owners.pop(name)
        self._rename_object(f"schema:{name}", f"schema:{new}")
        for d in self.default_privileges:
            if d["schema"] == name:
                d["schema"] = new

    def drop_schema(self, name: str) -> None:
        self.schema_owners.pop(name, None)
        self.grants = [g for g in self.grants if g["object"] != f"schema:{name}"]
        self.default_privileges = [d for d in self.default_privileges if d["schema"] != name]

    def drop_object(self, key: str) -> None:
        """An object's grants and owner go with it (`relation:<id>`, `function:name`)."""
        self.object_owners.pop(key, None)
        self.grants = [g for g in self.grants if g["object"] != key]

    def move_object(self, old: str, new: str) -> None:
        """An object's owner and grants under its new key (a renamed function)."""
        if old in self.object_owners:
            self.object_owners[new] = self.object_owners.pop(old)
        self._rename_object(old, new)

    def _rename_object(self, old: str, new: str) -> None:
        for g in self.grants:
            if g["object"] == old:
                g["object"] = new

    # -- secrets ------------------------------------------------------------------------------

    def add_secret(self, name: str, backend: str, value: str, owner: str) -> None:
        if name in self.secrets:
            raise CatalogError(f'secret "{name}" already exists')
        if backend != "meta":
            raise CatalogError(f'secret backend "{backend}" is not supported', hint="use backend = 'meta'")
        self.secrets[name] = {"id": self._alloc(), "backend": backend, "value": value}
        self.object_owners[f"secret:{name}"] = owner

    def drop_secret(self, name: str) -> None:
        if name not in self.secrets:
            raise CatalogError(f'secret "{name}" does not exist')
        del self.secrets[name]
        self.drop_object(f"secret:{name}")

    # -- privileges ---------------------------------------------------------------------------

    def grant(self, user: str, obj: str, action: str, grant_option: bool, granted_by: str) -> None:
        self.must_user(user)
        for g in self.grants:
            if (g["user"], g["object"], g["action"]) == (user, obj, action):
                g["grant_option"] = g["grant_option"] or grant_option
                return
        self.grants.append({"user": user, "object": obj, "action": action, "grant_option": grant_option,
                            "granted_by": granted_by})

    def revoke(self, user: str, obj: str, action: str, grant_option_only: bool) -> None:
        self.must_user(user)
        if grant_option_only:
            for g in self.grants:
                if (g["user"], g["object"], g["action"]) == (user, obj, action):
                    g["grant_option"] = False
            return
        self.grants = [g for g in self.grants if (g["user"], g["object"], g["action"]) != (user, obj, action)]

    def has_privilege(self, user: str, obj: str, action: str, owner: str | None, grant_option: bool) -> bool:
        """Whether `user` may `action` on `obj` (with the grant option if asked): superusers
        and the owner may do everything."""
        u = self.must_user(user)
        if u["superuser"] or owner == user:
            return True
        return any(g["user"] == user and g["object"] == obj and g["action"] == action
                   and (g["grant_option"] or not grant_option) for g in self.grants)

    def alter_default(self, schema: str | None, object_type: str, actions: list[str], users: list[str],
                      grant: bool, grant_option: bool) -> None:
        """ALTER DEFAULT PRIVILEGES: what objects created from now on grant by themselves."""
        for user in users:
            self.must_user(user)
            for action in actions:
                # a REVOKE for every schema revokes what was granted in each one, too
                found = [d for d in self.default_privileges
                         if (d["object_type"], d["action"], d["user"]) == (object_type, action, user)
                         and (d["schema"] == schema or (not grant and schema is None))]
                if grant and found:
                    found[0]["grant_option"] = found[0]["grant_option"] or grant_option
                elif grant:
                    self.default_privileges.append({"schema": schema, "object_type": object_type,
                                                    "action": action, "user": user,
                                                    "grant_option": grant_option})
                elif grant_option:  # REVOKE GRANT OPTION FOR: the privilege stays, without it
                    for d in found:
                        d["grant_option"] = False
                else:
                    self.default_privileges = [d for d in self.default_privileges if d not in found]

    def apply_defaults(self, schema: str, object_type: str, obj: str, owner: str) -> None:
        """Grant what the default privileges say to a new object of `object_type` in `schema`."""
        for d in self.default_privileges:
            if d["object_type"] == object_type and d["schema"] in (None, schema):
                self.grant(d["user"], obj, d["action"], d["grant_option"], owner)

    # -- persistence --------------------------------------------------------------------------

    def to_json(self) -> dict:
        return {"users": self.users, "databases": self.databases, "schema_owners": self.schema_owners,
                "object_owners": self.object_owners, "grants": self.grants,
                "default_privileges": self.default_privileges, "secrets": self.secrets, "next_id": self.next_id}

    @staticmethod
    def from_json(d: dict | None) -> "AccessCatalog":
        return AccessCatalog(**d) if d else AccessCatalog()


def _database(db_id: int, owner: str) -> dict:
    return {"id": db_id, "owner": owner, "resource_group": "default", "barrier_interval_ms": None,
            "checkpoint_frequency": None}
