"""What goes wrong between a store and PostgreSQL: the errors the PostgreSQL
stores (:mod:`ragbook.postgres.store`, :mod:`ragbook.postgres.shards`) raise, and
the checks of a connection string and a schema name before any connection is
tried.

:class:`DatabaseError` is the database refusing or failing what was asked;
:class:`DatabaseUnavailable`, a connection that cannot be made or kept, is
also a ``ConnectionError``, and :class:`QueryTimeout`, a statement cut at the
store's ``timeout``, also a ``TimeoutError``, so code that knows nothing of
PostgreSQL still catches them. Each says in its message what happened and, for
a write, whether it may have committed; its ``may_have_committed`` says the same
to a program (False: nothing was written). :func:`check_dsn` refuses a
connection string that does not parse, without ever showing a password, and
:func:`check_schema` a schema name that could not go into SQL as it is;
:func:`connect` turns a connection that cannot be made into
:class:`DatabaseUnavailable`.
"""

from __future__ import annotations

import re

from .. import validate

__all__ = [
    "DatabaseError",
    "DatabaseUnavailable",
    "QueryTimeout",
    "check_dsn",
    "check_schema",
    "connect",
]

_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,40}")


class DatabaseError(RuntimeError):
    """The database could not do what was asked; the message says why.

    ``may_have_committed`` is True only for a write whose connection was
    lost while it committed and whose outcome could not be checked: it
    may be in the database or not, and reading it tells. False means that
    nothing was written."""

    def __init__(self, message: str = "", *, may_have_committed: bool = False):
        super().__init__(message)
        self.may_have_committed = bool(may_have_committed)


class DatabaseUnavailable(DatabaseError, ConnectionError):
    """No connection: a wrong address, port, user or password, a server
    that is down, or a connection that was lost and could not be made
    again (or was lost again); the message says whether a write may have
    committed."""


class QueryTimeout(DatabaseError, TimeoutError):
    """A statement ran longer than the store's ``timeout``."""


def check_dsn(dsn: object) -> str:
    """``dsn`` if it is a libpq connection string or URI that parses;
    a ``ValueError`` naming the problem otherwise (never a password)."""
    import psycopg

    dsn = validate.text(dsn, "dsn")
    if not dsn.strip():
        raise ValueError(
            "dsn is empty: give a connection string such as "
            "'host=127.0.0.1 port=5432 dbname=postgres "
            "user=me' or a postgresql:// URI"
        )
    try:
        psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as error:
        reason = str(error).split("\n")[0]
        raise ValueError(f"dsn is not a valid connection string: {reason}") from None
    return dsn


def check_schema(schema: object) -> str:
    """``schema`` if it is a name the stores can write into SQL unquoted:
    a lowercase letter or '_', then at most 40 lowercase letters, digits or
    '_'; a ``ValueError`` otherwise."""
    schema = validate.text(schema, "schema")
    if not _SCHEMA.fullmatch(schema):
        raise ValueError(
            "schema must be lowercase letters, digits and '_' (at most 41, "
            f"not starting with a digit), got {schema!r}"
        )
    return schema


def connect(dsn: str, what: str = "PostgreSQL", **options):
    """``psycopg.connect(dsn, **options)``; a connection that cannot be made
    raises :class:`DatabaseUnavailable` saying that ``what`` cannot be
    reached, with the driver's reason on one line."""
    import psycopg

    try:
        return psycopg.connect(dsn, **options)
    except psycopg.OperationalError as error:
        raise DatabaseUnavailable(
            f"cannot connect to {what}: " + " ".join(str(error).split())
        ) from None
