"""Who the session acts as and what it may do: SET SESSION AUTHORIZATION's user (root, a
superuser, by default), held to the privileges the access catalog records (rw_cli.meta.access).

Reads need SELECT on the relations a query names (a view's own relations are its owner's),
DML needs INSERT, UPDATE or DELETE on its table, DROP needs ownership; superusers and owners
may do everything, as in RisingWave.
"""
from __future__ import annotations

from rw_cli.meta.access import DEFAULT_USER, PermissionDenied
from rw_cli.meta.catalog import RelationCatalog


def current_user(session) -> str:
    """The user the session acts as: SET SESSION AUTHORIZATION's, else root."""
    settings = getattr(session, "settings", None)
    return session.catalog.access.acting_user(settings.get("session_authorization") if settings else None)


def require(session, rel: RelationCatalog, action: str) -> None:
    """Refuse `action` (SELECT, INSERT, UPDATE, DELETE) on `rel` to a session user that holds
    no such privilege (superusers and the owner hold all), with RisingWave's words."""
    user = current_user(session)
    if user == DEFAULT_USER:
        return
    if not session.catalog.access.has_privilege(user, f"relation:{rel.id}", action, rel.owner, False):
        raise PermissionDenied(f"Do not have the privilege to {action} {rel.kind} \"{rel.name}\"",
                               hint=f"GRANT {action} ON {rel.name} TO {user}")


def require_owner(session, rel: RelationCatalog) -> None:
    """DROP and ALTER of a relation: its owner's or a superuser's."""
    user = current_user(session)
    if user == DEFAULT_USER or rel.owner == user or session.catalog.access.users[user]["superuser"]:
        return
    raise PermissionDenied(f'must be owner of {rel.kind} "{rel.name}"')
