"""Who reads which rows of the PostgreSQL store (:mod:`ragbook.postgres.store`):
the roles of the access levels and their readers, the row-level-security
policies, and a query run as a user's role.

Row-level security: one role per access level (``ragbook_level_public``,
...) with a policy that lets it read the rows of that level only, and one
reader role per combination of levels, a member of the level roles.
:meth:`ragbook.postgres.store.PostgresStore.search_for` runs its query as the
user's reader role (``SET LOCAL ROLE`` inside the transaction), so the
engine itself removes the rows the user may not read, before ranking,
whatever the query.
"""

from __future__ import annotations

import itertools
from typing import Iterable

from ..system.access import User
from ..corpus.orgdocs import ACCESS_LEVELS
from .tables import schema_sql

__all__ = ["level_role", "reader_role", "create_roles", "user_role", "set_role"]


def level_role(level: str) -> str:
    """The database role that may read documents of one access level."""
    if level not in ACCESS_LEVELS:
        raise ValueError(
            f"unknown access level {level!r}; choose among {', '.join(ACCESS_LEVELS)}"
        )
    return f"ragbook_level_{level}"


def reader_role(levels: Iterable[str]) -> str:
    """The role of a user holding exactly ``levels`` (a member of their
    level roles), e.g. ``ragbook_reader_finance_public``."""
    levels = sorted(set(levels))
    if not levels:
        raise ValueError("a reader role needs at least one access level")
    for level in levels:
        level_role(level)
    return "ragbook_reader_" + "_".join(levels)


def _combinations() -> list[tuple[str, ...]]:
    """Every non-empty set of access levels, each sorted: one reader role
    for each."""
    return [
        c
        for n in range(1, len(ACCESS_LEVELS) + 1)
        for c in itertools.combinations(sorted(ACCESS_LEVELS), n)
    ]


def create_roles(cur, schema: str) -> None:
    """The level roles, with their read policies on ``schema``'s tables and
    row-level security switched on, and the reader roles, where missing;
    a user who is not a superuser is let ``SET ROLE`` to every reader
    role."""
    from psycopg import sql

    cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    superuser = cur.fetchone()[0]
    for level in ACCESS_LEVELS:
        role = sql.Identifier(level_role(level))
        _create_role(cur, level_role(level), sql.SQL(""))
        cur.execute(schema_sql(schema, "GRANT USAGE ON SCHEMA {s} TO {r}", r=role))
        cur.execute(
            schema_sql(
                schema, "GRANT SELECT ON {s}.documents, {s}.chunks TO {r}", r=role
            )
        )
        for table in ("documents", "chunks"):
            name = sql.Identifier(f"read_{level}")
            target = sql.SQL("{s}.{t}").format(
                s=sql.Identifier(schema), t=sql.Identifier(table)
            )
            cur.execute(
                sql.SQL("DROP POLICY IF EXISTS {n} ON {t}").format(n=name, t=target)
            )
            cur.execute(
                sql.SQL(
                    "CREATE POLICY {n} ON {t} FOR SELECT TO {r} USING (access = {v})"
                ).format(n=name, t=target, r=role, v=sql.Literal(level))
            )
    for table in ("documents", "chunks"):
        cur.execute(
            schema_sql(schema, f"ALTER TABLE {{s}}.{table} ENABLE ROW LEVEL SECURITY")
        )
    for levels in _combinations():
        members = sql.SQL(", ").join(
            sql.Identifier(level_role(level)) for level in levels
        )
        _create_role(
            cur, reader_role(levels), sql.SQL(" IN ROLE {m}").format(m=members)
        )
        if not superuser:  # the store's own user may SET ROLE to it
            cur.execute(
                sql.SQL(
                    "GRANT {r} TO CURRENT_USER WITH INHERIT FALSE, SET TRUE"
                ).format(r=sql.Identifier(reader_role(levels)))
            )


def _create_role(cur, name: str, extra) -> None:
    """``CREATE ROLE name NOLOGIN`` and ``extra`` (SQL), unless it exists."""
    from psycopg import sql

    cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,))
    if cur.fetchone() is None:
        cur.execute(
            sql.SQL("CREATE ROLE {r} NOLOGIN{x}").format(
                r=sql.Identifier(name), x=extra
            )
        )


def user_role(user: User | None):
    """None for no user, False for a user without levels, else the
    reader role's name."""
    if user is None:
        return None
    if not isinstance(user, User):
        raise TypeError(f"user must be a User, got {type(user).__name__}")
    return reader_role(user.levels) if user.levels else False


def set_role(cur, role: str | None) -> None:
    """``SET LOCAL ROLE`` to ``role`` for the rest of the transaction (none
    for no role)."""
    from psycopg import sql

    if role:
        cur.execute(sql.SQL("SET LOCAL ROLE {r}").format(r=sql.Identifier(role)))
