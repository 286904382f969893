"""What goes wrong between a store and PostgreSQL: the errors the PostgreSQL
stores (:mod:`ragbook.pgstore`, :mod:`ragbook.pgshards`) raise, and the check
of a connection string before any connection is tried.

:class:`DatabaseError` is the database refusing or failing what was asked;
:class:`DatabaseUnavailable`, a connection that cannot be made or kept, is
also a ``ConnectionError``, and :class:`QueryTimeout`, a statement cut at the
store's ``timeout``, also a ``TimeoutError``, so code that knows nothing of
PostgreSQL still catches them. :func:`check_dsn` refuses a connection string
that does not parse, without ever showing a password.
"""

from __future__ import annotations

from . import validate

__all__ = ["DatabaseError", "DatabaseUnavailable", "QueryTimeout", "check_dsn"]


class DatabaseError(RuntimeError):
    """The database could not do what was asked; the message says why."""


class DatabaseUnavailable(DatabaseError, ConnectionError):
    """No connection: a wrong address, port, user or password, a server
    that is down, or a connection that dropped and could not be made
    again."""


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
