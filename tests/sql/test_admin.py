"""The parser of user, database, privilege and deployment statements (rw_cli.sql.admin)."""
from __future__ import annotations

import pytest

from rw_cli.errors import SqlSyntaxError
from rw_cli.sql.admin import Admin
from rw_cli.sql.dialect import parse_statement


@pytest.mark.parametrize("sql, statement, spec", [
    ("CREATE USER u WITH \"login\" SUPERUSER NOCREATEDB PASSWORD 'p'", "CREATE USER",
     {"name": "u", "options": {"login": True, "superuser": True, "createdb": False, "password": "p"}}),
    ("alter user U rename to \"V\"", "ALTER USER", {"name": "u", "rename": "V"}),
    ("drop user if exists a, b", "DROP USER", {"names": ["a", "b"], "exists": True}),
    ("create database d owner u", "CREATE DATABASE", {"name": "d", "exists": False, "options": {"owner": "u"}}),
    ("alter database d set resource_group to default deferred", "ALTER DATABASE",
     {"name": "d", "set": ("resource_group", None)}),
    ("create schema if not exists authorization u", "CREATE SCHEMA",
     {"name": "u", "exists": True, "owner": "u", "database": None}),
    ("create schema db2.s", "CREATE SCHEMA", {"name": "s", "exists": False, "owner": None, "database": "db2"}),
    ("GRANT ALL ON ALL TABLES IN SCHEMA s TO a, b WITH GRANT OPTION GRANTED BY root", "GRANT",
     {"actions": None, "objects": {"kind": "table", "all_in": ["s"]}, "users": ["a", "b"], "grant_option": True,
      "granted_by": "root"}),
    ("revoke grant option for select on materialized view m from a", "REVOKE",
     {"actions": ["SELECT"], "objects": {"kind": "materialized view", "names": ["m"]}, "users": ["a"],
      "grant_option": True, "granted_by": None}),
    ("alter default privileges in schema s revoke all on functions from a", "ALTER DEFAULT PRIVILEGES",
     {"for_users": None, "schemas": ["s"], "revoke": True, "actions": None, "kind": "function", "users": ["a"],
      "grant_option": False}),
    ("alter function f(int, varchar) owner to u", "ALTER OWNER",
     {"kind": "function", "name": "f(int, varchar)", "owner": "u"}),
    ("comment on column s.t.c is null", "COMMENT", {"kind": "column", "name": "s.t.c", "text": None}),
    ("ALTER COMPACTION GROUP 2, 3 SET a = 1, b TO 'x'", "ALTER COMPACTION GROUP",
     {"ids": [2, 3], "settings": [("a", 1), ("b", "x")]}),
    ("alter system set license_key to default", "ALTER SYSTEM", {"name": "license_key", "value": None}),
    ("alter index i set parallelism = 4 deferred", "ALTER JOB",
     {"kind": "index", "name": "i", "exists": False, "key": "parallelism", "value": 4, "deferred": True}),
    ("alter table t alter watermark for ts as ts - interval '1' second with ttl", "ALTER WATERMARK",
     {"table": "t", "column": "ts", "expr": "ts - interval '1' second", "ttl": True}),
    ("create secret s with (backend = 'meta') as 'v'", "CREATE SECRET",
     {"name": "s", "exists": False, "options": {"backend": "meta"}, "value": "v"}),
])
def test_statements_parse_into_their_spec(sql, statement, spec):
    tree = parse_statement(sql)
    assert isinstance(tree, Admin) and tree.this == statement
    assert tree.spec == spec


@pytest.mark.parametrize("sql, message", [
    ('CREATE USER u WITH "LOGIn"', "unexpected user option"),
    ('create schema ""', "zero-length delimited identifier"),
    ("ALTER COMPACTION GROUP 2 SET a = 1,2", "syntax error"),
    ("ALTER COMPACTION GROUP 2 SET", "syntax error at end of input"),
    ("grant select on t", "syntax error at end of input"),
])
def test_bad_statements_are_syntax_errors(sql, message):
    with pytest.raises(SqlSyntaxError) as e:
        parse_statement(sql)
    assert message in e.value.message


def test_other_alters_are_left_to_the_grammar():
    assert not isinstance(parse_statement("alter table t rename to u"), Admin)
