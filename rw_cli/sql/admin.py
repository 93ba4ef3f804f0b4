"""Statements of users, databases, ownership and privileges, which sqlglot leaves to `Command`:
CREATE | ALTER | DROP USER and DATABASE, CREATE SCHEMA ... AUTHORIZATION, ALTER SCHEMA,
ALTER <object> OWNER TO, GRANT, REVOKE, ALTER DEFAULT PRIVILEGES and COMMENT ON.

Each parses into an `Admin` node: `this` names the statement ("CREATE USER"), `meta["spec"]`
holds what it says as plain values (names already folded as PostgreSQL folds them).
"""
from __future__ import annotations

import re

from sqlglot import exp

from rw_cli.errors import SqlSyntaxError


class Admin(exp.Expression):
    """An access-control or database statement; `spec` (in meta) is its parsed content."""

    arg_types = {"this": True}

    @property
    def spec(self) -> dict:
        return self.meta["spec"]


# quoted name | string | dollar-quoted string ($$...$$, $tag$...$tag$) | word | number | punct
_TOKEN = re.compile(r"""\s*(?:("(?:[^"]|"")*")|('(?:[^']|'')*')|(\$(?P<tag>(?:[A-Za-z_][A-Za-z0-9_]*)?)\$[\s\S]*?\$(?P=tag)\$)"""
                    r"""|([A-Za-z_][A-Za-z0-9_$]*)|(-?\d+(?:\.\d+)?)|(\S))""")
_LEADS = re.compile(
    r"^\s*(create\s+(user|database|schema|secret)|alter\s+(user|database|schema|default\s+privileges)"
    r"|drop\s+(user|database|secret)|grant|revoke|comment\s+on|alter\s+compaction\b|alter\s+system\s+set\b"
    r"|alter\s+table\s+\S+\s+alter\s+watermark\b|alter\s+subscription\s+.*\sset\s+schema\b"
    r"|alter\s+(table|materialized\s+view|view|index|sink|source)\s+.*\s(set\s+(parallelism|resource_group|schema|config"
    r"|(source|backfill|sink|dml)_rate_limit)|reset\s+(resource_group|config))\b"
    r"|alter\s+.*\sowner\s+to\s+\S+\s*;?\s*$)",
    re.IGNORECASE | re.DOTALL)


class _Tok:
    """A token: `kind` word | quoted | string | number | punct; `value` folded for words."""

    __slots__ = ("kind", "value", "pos")

    def __init__(self, kind: str, value: str, pos: int):
        self.kind, self.value, self.pos = kind, value, pos


def _tokens(sql: str) -> list[_Tok]:
    out, pos = [], 0
    text = sql.rstrip().rstrip(";")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        q, s, d, tag, w, n, p = m.groups()
        start = m.start(m.lastindex)
        if q is not None:
            out.append(_Tok("quoted", q[1:-1].replace('""', '"'), start))
        elif s is not None:
            out.append(_Tok("string", s[1:-1].replace("''", "'"), start))
        elif d is not None:  # the text between the delimiters, as written
            edge = len(tag or "") + 2
            out.append(_Tok("string", d[edge:-edge], start))
        elif w is not None:
            out.append(_Tok("word", w.lower(), start))
        elif n is not None:
            out.append(_Tok("number", n, start))
        else:
            out.append(_Tok("punct", p, start))
        pos = m.end()
    return out


class _Cursor:
    def __init__(self, sql: str, offset: int):
        self.toks, self.i, self.offset, self.sql = _tokens(sql), 0, offset, sql

    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, *words: str) -> bool:
        for k, w in enumerate(words):
            t = self.peek(k)
            if t is None or t.kind not in ("word", "punct") or t.value != w:
                return False
        return True

    def eat(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.eat(*words):
            self.fail()

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def fail(self):
        t = self.peek()
        if t is None:
            raise SqlSyntaxError("syntax error at end of input", position=self.offset + len(self.sql.rstrip()))
        raw = self.sql[t.pos:].split()[0] if self.sql[t.pos:].split() else t.value
        raise SqlSyntaxError(f'syntax error at or near "{raw}"', position=self.offset + t.pos)

    def ident(self) -> str:
        t = self.peek()
        if t is None or t.kind not in ("word", "quoted"):
            self.fail()
        if not t.value:
            raise SqlSyntaxError('zero-length delimited identifier at or near """"', position=self.offset + t.pos)
        self.i += 1
        return t.value

    def name(self) -> str:
        """`a` or `a.b`: the folded parts joined by a dot."""
        parts = [self.ident()]
        while self.eat("."):
            parts.append(self.ident())
        return ".".join(parts)

    def names(self) -> list[str]:
        out = [self.name()]
        while self.eat(","):
            out.append(self.name())
        return out

    def value(self):
        """A setting's value: a string, a number, a word (DEFAULT as None)."""
        t = self.peek()
        if t is None:
            self.fail()
        self.i += 1
        if t.kind == "number":
            return int(t.value) if re.fullmatch(r"-?\d+", t.value) else float(t.value)
        if t.kind == "word" and t.value == "default":
            return None
        return t.value

    def rest(self) -> str:
        t = self.peek()
        return "" if t is None else self.sql[t.pos:].rstrip().rstrip(";")


def parse_admin(sql: str, offset: int = 0) -> Admin | None:
    """The statement as an Admin node, or None when it is not one of these statements."""
    if not _LEADS.match(sql):
        return None
    c = _Cursor(sql, offset)
    if c.eat("create", "user"):
        return _node("CREATE USER", c, name=c.ident(), options=_user_options(c))
    if c.eat("alter", "user"):
        name = c.ident()
        if c.eat("rename", "to"):
            return _node("ALTER USER", c, name=name, rename=c.ident())
        return _node("ALTER USER", c, name=name, options=_user_options(c))
    if c.eat("drop", "user"):
        exists = c.eat("if", "exists")
        return _node("DROP USER", c, names=c.names(), exists=exists)
    if c.eat("create", "database"):
        exists = c.eat("if", "not", "exists")
        return _node("CREATE DATABASE", c, name=c.ident(), exists=exists, options=_db_options(c))
    if c.eat("alter", "database"):
        return _node("ALTER DATABASE", c, name=c.ident(), **_alter_named(c, settings=True))
    if c.eat("drop", "database"):
        exists = c.eat("if", "exists")
        return _node("DROP DATABASE", c, name=c.ident(), exists=exists)
    if c.eat("create", "secret"):
        return _create_secret(c)
    if c.eat("drop", "secret"):
        exists = c.eat("if", "exists")
        return _node("DROP SECRET", c, name=c.name(), exists=exists)
    if c.eat("create", "schema"):
        return _create_schema(c)
    if c.eat("alter", "schema"):
        return _node("ALTER SCHEMA", c, name=c.ident(), **_alter_named(c, settings=False))
    if c.eat("alter", "system", "set"):
        key = c.ident()
        if not (c.eat("=") or c.eat("to")):
            c.fail()
        return _node("ALTER SYSTEM", c, name=key, value=c.value())
    if c.eat("alter", "compaction"):
        return _compaction_group(c)
    if c.eat("alter", "default", "privileges"):
        return _default_privileges(c)
    if c.eat("grant"):
        return _grant(c, revoke=False)
    if c.eat("revoke"):
        return _grant(c, revoke=True)
    if c.eat("comment", "on"):
        return _comment(c)
    if c.eat("alter"):
        kind = _object_kind(c)
        exists = c.eat("if", "exists")
        name = _object_name(c, kind)
        if c.at("set") or c.at("reset"):
            return _alter_job(c, kind, name, exists)
        if kind == "table" and c.eat("alter", "watermark", "for"):
            return _alter_watermark(c, name)
        c.expect("owner", "to")
        return _node("ALTER OWNER", c, kind=kind, name=name, owner=c.ident())
    return None


def _node(statement: str, c: _Cursor, **spec) -> Admin:
    if not c.done():
        c.fail()
    node = Admin(this=statement)
    node.meta["spec"] = spec
    return node


_USER_FLAGS = {"superuser": True, "nosuperuser": False, "createdb": True, "nocreatedb": False,
               "createuser": True, "nocreateuser": False, "login": True, "nologin": False}


def _user_options(c: _Cursor) -> dict:
    """[WITH] SUPERUSER | NOSUPERUSER | CREATEDB | ... | PASSWORD 'p' | PASSWORD NULL."""
    c.eat("with")
    options: dict = {}
    while not c.done():
        t = c.peek()
        flag = t.value.lower() if t.kind in ("word", "quoted") else None
        if t.kind == "quoted" and t.value != t.value.lower():
            flag = None  # a quoted name keeps its case: "LOGIN" is no option
        if flag in _USER_FLAGS:
            c.i += 1
            options[flag.removeprefix("no")] = _USER_FLAGS[flag]
        elif flag == "password":
            c.i += 1
            v = c.value()
            options["password"] = None if v in ("null", "") else str(v)
        else:
            raise SqlSyntaxError(f'unexpected user option "{t.value}"', position=c.offset + t.pos)
    return options


_DB_SETTINGS = ("owner", "resource_group", "barrier_interval_ms", "checkpoint_frequency")


def _db_options(c: _Cursor) -> dict:
    c.eat("with")
    options: dict = {}
    while not c.done():
        key = c.ident()
        if key not in _DB_SETTINGS:
            c.i -= 1
            c.fail()
        c.eat("=")
        options[key] = c.ident() if key == "owner" else c.value()
    return options


def _alter_named(c: _Cursor, settings: bool) -> dict:
    """RENAME TO n | OWNER TO u | SWAP WITH n | SET p {=|TO} v [DEFERRED] | RESET p [DEFERRED]."""
    if c.eat("rename", "to"):
        return {"rename": c.ident()}
    if c.eat("owner", "to"):
        return {"owner": c.ident()}
    if c.eat("swap", "with"):
        return {"swap": c.ident()}
    if settings and c.eat("set"):
        key = c.ident()
        if not (c.eat("=") or c.eat("to")):
            c.fail()
        value = c.value()
        c.eat("deferred")
        return {"set": (key, value)}
    if settings and c.eat("reset"):
        key = c.ident()
        c.eat("deferred")
        return {"set": (key, None)}
    c.fail()


def _create_schema(c: _Cursor) -> Admin:
    """CREATE SCHEMA [IF NOT EXISTS] [name] [AUTHORIZATION user]: without a name, the schema
    is named after the user."""
    exists = c.eat("if", "not", "exists")
    name = None if c.at("authorization") else c.name()
    owner = c.ident() if c.eat("authorization") else None
    if name is None and owner is None:
        c.fail()
    database = None
    if name is not None and "." in name:
        database, name = name.rsplit(".", 1)  # db.schema
    return _node("CREATE SCHEMA", c, name=name or owner, exists=exists, owner=owner, database=database)


_OBJECT_KINDS = ("table", "view", "source", "sink", "index", "subscription", "function", "secret",
                 "connection", "schema", "database")


def _object_kind(c: _Cursor) -> str:
    if c.eat("materialized", "view"):
        return "materialized view"
    t = c.peek()
    if t is None or t.kind != "word" or t.value not in _OBJECT_KINDS:
        c.fail()
    c.i += 1
    return t.value


def _object_name(c: _Cursor, kind: str) -> str:
    """A name; a function's with its argument types: `f(int, varchar)`."""
    name = c.name()
    if kind == "function" and c.eat("("):
        args = []
        while not c.eat(")"):
            t = c.peek()
            if t is None:
                c.fail()
            c.i += 1
            if t.value != ",":
                args.append(t.value)
        return f"{name}({', '.join(args)})"
    return name


_ALL_KINDS = {"tables": "table", "sources": "source", "sinks": "sink", "views": "view",
              "functions": "function", "secrets": "secret", "connections": "connection",
              "subscriptions": "subscription", "schemas": "schema"}


def _privileges(c: _Cursor) -> list[str] | None:
    """ALL [PRIVILEGES] (None) or a list of actions, upper-case."""
    if c.eat("all"):
        c.eat("privileges")
        return None
    actions = [c.ident().upper()]
    while c.eat(","):
        actions.append(c.ident().upper())
    return actions


def _plural_kind(c: _Cursor) -> str:
    if c.eat("materialized", "views"):
        return "materialized view"
    word = c.ident()
    if word not in _ALL_KINDS:
        c.i -= 1
        c.fail()
    return _ALL_KINDS[word]


def _grant_objects(c: _Cursor) -> dict:
    """DATABASE a, b | SCHEMA a | ALL TABLES IN SCHEMA s | [TABLE] t | MATERIALIZED VIEW m | ..."""
    if c.eat("all"):
        kind = _plural_kind(c)
        c.expect("in", "schema")
        return {"kind": kind, "all_in": c.names()}
    if c.at("materialized", "view") or (c.peek() and c.peek().value in _OBJECT_KINDS
                                          and c.peek(1) is not None and c.peek(1).kind in ("word", "quoted")
                                          and c.peek(1).value not in ("to", "from")):
        kind = _object_kind(c)
    else:
        kind = "table"
    names = [_object_name(c, kind)]
    while c.eat(","):
        names.append(_object_name(c, kind))
    return {"kind": kind, "names": names}


def _grant(c: _Cursor, revoke: bool) -> Admin:
    """GRANT privs ON objects TO users [WITH GRANT OPTION] [GRANTED BY u], REVOKE [GRANT OPTION
    FOR] privs ON objects FROM users [GRANTED BY u] [CASCADE | RESTRICT]."""
    option_only = revoke and c.eat("grant", "option", "for")
    actions = _privileges(c)
    c.expect("on")
    objects = _grant_objects(c)
    c.expect("from" if revoke else "to")
    users = [c.ident()]
    while c.eat(","):
        users.append(c.ident())
    grant_option = not revoke and c.eat("with", "grant", "option")
    granted_by = c.ident() if c.eat("granted", "by") else None
    if revoke:
        c.eat("cascade") or c.eat("restrict")
    return _node("REVOKE" if revoke else "GRANT", c, actions=actions, objects=objects, users=users,
                 grant_option=grant_option or option_only, granted_by=granted_by)


def _default_privileges(c: _Cursor) -> Admin:
    """ALTER DEFAULT PRIVILEGES [FOR USER u, ...] [IN SCHEMA s, ...] GRANT ... | REVOKE ..."""
    for_users, schemas = None, None
    while True:
        if c.eat("for", "user") or c.eat("for", "role"):
            for_users = c.names()
        elif c.eat("in", "schema"):
            schemas = c.names()
        else:
            break
    revoke = c.eat("revoke")
    if not revoke:
        c.expect("grant")
    option_only = revoke and c.eat("grant", "option", "for")
    actions = _privileges(c)
    c.expect("on")
    kind = _plural_kind(c)
    c.expect("from" if revoke else "to")
    users = [c.ident()]
    while c.eat(","):
        users.append(c.ident())
    grant_option = not revoke and c.eat("with", "grant", "option")
    if revoke:
        c.eat("cascade") or c.eat("restrict")
    return _node("ALTER DEFAULT PRIVILEGES", c, for_users=for_users, schemas=schemas, revoke=revoke,
                 actions=actions, kind=kind, users=users, grant_option=grant_option or option_only)


def _alter_job(c: _Cursor, kind: str, name: str, exists: bool) -> Admin:
    """ALTER <streaming job> name SET PARALLELISM {= | TO} v | SET RESOURCE_GROUP {= | TO} v |
    RESET RESOURCE_GROUP, each maybe DEFERRED."""
    if c.eat("set", "schema"):
        return _node("ALTER SET SCHEMA", c, kind=kind, name=name, exists=exists, schema=c.ident())
    if c.at("set", "config") or c.at("reset", "config"):
        return _job_config(c, kind, name, exists)
    if c.eat("reset"):
        key, value = c.ident(), None
    else:
        c.expect("set")
        key = c.ident()
        if not (c.eat("=") or c.eat("to")):
            c.fail()
        value = c.value()
    deferred = c.eat("deferred")
    return _node("ALTER JOB", c, kind=kind, name=name, exists=exists, key=key, value=value, deferred=deferred)


def _job_config(c: _Cursor, kind: str, name: str, exists: bool) -> Admin:
    """SET CONFIG (a.b.c = v, ...) | RESET CONFIG (a.b.c, ...): a job's own streaming config
    entries (`value` None: reset)."""
    reset = c.eat("reset")
    if not reset:
        c.expect("set")
    c.expect("config")
    c.expect("(")
    entries: dict = {}
    while True:
        key = c.ident()
        while c.eat("."):
            key += "." + c.ident()
        if reset:
            entries[key] = None
        else:
            if not (c.eat("=") or c.eat("to")):
                c.fail()
            v = c.value()
            entries[key] = "default" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
        if not c.eat(","):
            break
    c.expect(")")
    return _node("ALTER JOB CONFIG", c, kind=kind, name=name, exists=exists, entries=entries, reset=reset)


def _alter_watermark(c: _Cursor, table: str) -> Admin:
    """ALTER TABLE t ALTER WATERMARK FOR col AS expr [WITH TTL]: `expr` kept as written."""
    column = c.ident()
    c.expect("as")
    text = c.rest()
    m = re.search(r"\s+with\s+ttl\s*$", text, re.IGNORECASE)
    if m:
        text = text[: m.start()]
    if not text.strip():
        c.fail()
    c.i = len(c.toks)
    return _node("ALTER WATERMARK", c, table=table, column=column, expr=text.strip(), ttl=m is not None)


def _create_secret(c: _Cursor) -> Admin:
    """CREATE SECRET [IF NOT EXISTS] name WITH (backend = 'meta') AS 'value'."""
    exists = c.eat("if", "not", "exists")
    name = c.name()
    options = {}
    c.expect("with")
    c.expect("(")
    while not c.eat(")"):
        key = c.name()
        c.expect("=")
        options[key] = c.value()
        c.eat(",")
    c.expect("as")
    t = c.peek()
    if t is None or t.kind != "string":
        c.fail()
    c.i += 1
    return _node("CREATE SECRET", c, name=name, exists=exists, options=options, value=t.value)


def _compaction_group(c: _Cursor) -> Admin:
    """ALTER COMPACTION GROUP id [, id] SET name {= | TO} value [, name {= | TO} value]."""
    c.expect("group")
    ids = [_number(c)]
    while c.eat(","):
        ids.append(_number(c))
    c.expect("set")
    settings = []
    while True:
        key = c.ident()
        if not (c.eat("=") or c.eat("to")):
            c.fail()
        settings.append((key, c.value()))
        if not c.eat(","):
            break
    return _node("ALTER COMPACTION GROUP", c, ids=ids, settings=settings)


def _number(c: _Cursor) -> int:
    t = c.peek()
    if t is None or t.kind != "number" or not t.value.isdigit():
        c.fail()
    c.i += 1
    return int(t.value)


def _comment(c: _Cursor) -> Admin:
    """COMMENT ON TABLE | MATERIALIZED VIEW | VIEW | ... name IS 'text' | NULL, COMMENT ON
    COLUMN rel.col IS ...."""
    if c.eat("column"):
        kind = "column"
    else:
        kind = _object_kind(c)
    name = c.name()
    c.expect("is")
    t = c.peek()
    if t is None or not (t.kind == "string" or (t.kind == "word" and t.value == "null")):
        c.fail()
    c.i += 1
    text = t.value if t.kind == "string" else None
    return _node("COMMENT", c, kind=kind, name=name, text=text or None)
