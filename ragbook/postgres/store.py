"""The document store in PostgreSQL with pgvector: chunks, their
documents' metadata and their vectors in tables, permissions enforced by
the database (chapter 16).

:class:`PostgresStore` holds one connection and does the store's work
through it, each piece in one transaction (``_run``): a read that lost its
connection runs again on a new one, a write only if a check on a new one
shows that it did not commit. Any other end of a lost connection is one of
the store's errors, which says whether the write may have committed (the
database appendix lists them). What it does is in modules of their own,
one mixin class each:

- :mod:`ragbook.postgres.loading`: a bulk load, and adding, replacing and
  deleting documents.
- :mod:`ragbook.postgres.searching`: the searches, by vector or by text, as
  the store's user or as a user of the organisation.
- :mod:`ragbook.postgres.admin`: the tables, roles and policies, made where
  missing; the HNSW index; what the store holds.

Vectors are unit vectors, ranked by inner product (``<#>`` is its
negative) through an HNSW index (``vector_ip_ops``), or exactly by a
sequential scan. The score of a hit is the cosine, ties are broken by
chunk id, and ``allowed`` restricts the candidates before ranking (the
contract of :mod:`ragbook.retrieval.contract`). :func:`store_factory` makes the
stores of :class:`~ragbook.system.rag.RAGPipeline`.

What the store stands on has modules of its own:

- :mod:`ragbook.postgres.tables`: the two tables, where a foreign key keeps every
  chunk on its document's current version; a chunk's row; COPY.
- :mod:`ragbook.postgres.roles`: a role per access level and a reader role per
  combination of levels, and the row-level-security policies;
  :meth:`PostgresStore.search_for` runs its query as the user's reader
  role, so the engine itself removes the rows the user may not read.
- :mod:`ragbook.postgres.errors`: the errors the store raises and the check of
  its connection string.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from .. import validate
from ..corpus.documents import Document
from ..indexing.chunking import Chunk, sentence_chunks
from .admin import AdminMixin
from .errors import (
    DatabaseError,
    DatabaseUnavailable,
    QueryTimeout,
    check_dsn,
    check_schema,
    connect,
)
from .loading import LoadingMixin
from .searching import SearchingMixin
from .tables import schema_sql, stored_dimension, unit_vectors

__all__ = ["StoreHit", "PostgresStore", "store_factory"]

MAX_EF_SEARCH = 1000  # pgvector's upper limit for hnsw.ef_search


@dataclass(frozen=True)
class StoreHit:
    """One result of :meth:`PostgresStore.search_for`: rank, score, the
    chunk, and its document's version and access level."""

    rank: int
    score: float
    chunk: Chunk
    version: int
    access: str


def _default_chunker(documents: Sequence[Document]) -> list[Chunk]:
    return sentence_chunks(documents, 30)


class PostgresStore(LoadingMixin, SearchingMixin, AdminMixin):
    """Chunks and vectors in PostgreSQL; a retriever (chapter 16).

    ``dsn`` is a libpq connection string (:class:`ragbook.postgres.server.
    LocalCluster` gives one); ``encoder`` turns texts into vectors
    (``encode``, and ``encode_queries`` if it has one), as for
    :class:`ragbook.retrieval.dense.DenseRetriever`. With ``create`` the schema, the
    roles and the policies are made when missing (a replica is opened
    with ``create=False``). ``exact`` ranks by a sequential scan instead
    of the HNSW index; ``ef_search`` is HNSW's candidate list per query,
    ``m`` and ``ef_construction`` its build parameters. ``timeout`` (s)
    cuts any statement that runs longer (:class:`QueryTimeout`). A store
    holds one connection: give each thread its own store.
    """

    # what the searching mixin needs from here
    MAX_EF_SEARCH = MAX_EF_SEARCH
    StoreHit = StoreHit

    def __init__(
        self,
        dsn: str,
        encoder,
        schema: str = "ragbook",
        *,
        create: bool = True,
        exact: bool = False,
        ef_search: int = 40,
        m: int = 16,
        ef_construction: int = 64,
        timeout: float = 30.0,
        chunker: Callable[[Sequence[Document]], list[Chunk]] | None = None,
        dimension: int | None = None,
    ):
        self.dsn = check_dsn(dsn)
        if not callable(getattr(encoder, "encode", None)):
            raise TypeError(
                f"encoder must have an encode(texts) method, got {encoder!r}"
            )
        schema = check_schema(schema)
        if chunker is not None and not callable(chunker):
            raise TypeError(f"chunker must be a function, got {chunker!r}")
        self.encoder = encoder
        self.schema = schema
        self.exact = validate.flag(exact, "exact")
        self.ef_search = validate.whole(ef_search, "ef_search", 1, MAX_EF_SEARCH)
        self.m = validate.whole(m, "m", 2, 100)
        self.ef_construction = validate.whole(
            ef_construction, "ef_construction", 4, 1000
        )
        self.timeout = validate.real(timeout, "timeout", above=0)
        self.chunker = chunker or _default_chunker
        self._conn = None
        self._pid: int | None = None
        self._connect()
        self.dimension = self._run(lambda cur: stored_dimension(cur, schema))
        if self.dimension is None:
            if not validate.flag(create, "create"):
                raise DatabaseError(
                    f"the database holds no schema {schema!r} with a chunks table"
                )
            width = dimension or getattr(encoder, "dimension", None)
            if width is None:
                width = unit_vectors(
                    encoder.encode(["dimension probe"]), None, "the encoder's vectors"
                ).shape[1]
            self.dimension = validate.whole(width, "dimension", 1, 16000)
            self._create()
        elif dimension is not None and dimension != self.dimension:
            raise ValueError(
                f"schema {schema!r} holds vector("
                f"{self.dimension}), not vector({dimension})"
            )

    # -- connections ------------------------------------------------------
    def _connect(self) -> None:
        """A new connection, with the store's timeouts and the vector type;
        :class:`DatabaseUnavailable` if it cannot be made or is lost while
        it is set up."""
        import psycopg
        from pgvector.psycopg import register_vector

        self.close()
        options = {}
        if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(self.dsn):
            options["connect_timeout"] = max(2, math.ceil(self.timeout))
        conn = connect(self.dsn, **options)
        try:
            with _transaction(conn):
                for name in ("statement_timeout", "lock_timeout"):
                    conn.execute(
                        "SELECT set_config(%s, %s, false)",
                        (name, f"{int(self.timeout * 1000)}ms"),
                    )
            if conn.execute(
                "SELECT 1 FROM pg_type WHERE typname = 'vector'"
            ).fetchone():
                register_vector(conn)
            conn.commit()
        except psycopg.OperationalError as error:
            _close_quietly(conn)
            raise DatabaseUnavailable(
                "the connection to PostgreSQL was lost while it was set up: "
                + _one_line(error)
            ) from None
        except BaseException:
            _close_quietly(conn)
            raise
        self._conn = conn
        self._pid = conn.info.backend_pid  # its server process, for _settle

    def close(self) -> None:
        """Close the connection (the data stays in the database)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            _close_quietly(conn)

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run(
        self,
        work: Callable,
        write: bool = False,
        done: Callable[[object], bool] | None = None,
    ):
        """``work(cursor)`` in one transaction. A read that loses its
        connection is run again once on a new one (reading twice is
        harmless); a write is run again only if ``done(cursor)``, run on a
        new connection, shows that the first attempt did not commit, so
        nothing is written twice (a write without ``done`` is one that may
        run twice, such as TRUNCATE). Every other end is one of the store's
        errors, whose message says whether the write may have committed:
        only a connection lost during COMMIT leaves that open, and only
        until ``done`` has run."""
        what = "write" if write else "read"
        try:
            return self._attempt(work)
        except _Lost as lost:
            first = lost
        except DatabaseUnavailable as error:  # no connection: nothing ran
            raise DatabaseUnavailable(
                f"{error}; the {what} did not run, nothing was written"
            ) from None
        said = f"the connection to PostgreSQL was lost {first.during(what)}"
        said += f" ({first.reason})"
        may = write and first.committing
        if write and done is not None:
            try:  # on a new connection, outside the handling of the loss
                if first.committing:
                    self._settle(first.pid)
                finished = self._attempt(done)
            except (_Lost, DatabaseError) as error:
                raise DatabaseUnavailable(
                    f"{said}, and checking on a new connection whether it "
                    f"committed failed ({_one_line(error)})" + _outcome(True, may),
                    may_have_committed=may,
                ) from None
            if finished:
                return None
            may = False  # checked: the first attempt did not commit
            said += "; it had not committed"
        try:
            return self._attempt(work)
        except _Lost as again:
            may = may or (write and again.committing)
            raise DatabaseUnavailable(
                f"{said}; run again on a new connection, it lost that one "
                f"{again.during(what)} ({again.reason})" + _outcome(write, may),
                may_have_committed=may,
            ) from None
        except DatabaseUnavailable as error:
            raise DatabaseUnavailable(
                f"{said}, and a new connection failed ({_one_line(error)})"
                + _outcome(write, may),
                may_have_committed=may,
            ) from None
        except DatabaseError as error:
            if not may:
                raise
            raise type(error)(
                f"{error}; before that, {said}" + _outcome(True, True),
                may_have_committed=True,
            ) from None

    def _attempt(self, work: Callable):
        """``work(cursor)`` once, in one transaction, on the connection
        (made first if there is none): its result, or :class:`_Lost` when
        the connection was lost (it is closed then), or the store's error
        for a timeout, a read-only server or a failed transaction."""
        import psycopg

        committing = False
        try:
            if self._conn is None or self._conn.closed:
                self._connect()
            with _transaction(self._conn):
                with self._conn.cursor() as cur:
                    result = work(cur)
                committing = True  # leaving the block sends COMMIT
            return result
        except psycopg.Error as error:
            if _is_lost(self._conn, error):
                pid = self._pid
                self.close()
                raise _Lost(_one_line(error), committing, pid) from None
            if isinstance(error, psycopg.errors.ReadOnlySqlTransaction):
                raise DatabaseError(
                    "the server is a read-only replica: write to the primary"
                ) from None
            if isinstance(
                error,
                (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable),
            ):
                raise QueryTimeout(
                    f"a statement ran longer than the timeout of "
                    f"{self.timeout:g} s and was cancelled: "
                    f"{str(error).splitlines()[0]}"
                ) from None
            if isinstance(error, psycopg.OperationalError):
                raise DatabaseError(
                    "PostgreSQL failed the transaction and rolled it back ("
                    + _one_line(error)
                    + "): nothing was written"
                ) from None
            raise

    def _settle(self, pid: int) -> None:
        """Wait until the server process of a connection lost during COMMIT
        has ended its transaction (at most the store's timeout), so that
        ``done`` sees its outcome: once the process has ended it, the
        transaction has committed or will never commit."""
        deadline = time.monotonic() + self.timeout
        sql = (
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity "
            "WHERE pid = %s AND xact_start IS NOT NULL)"
        )
        while self._attempt(lambda cur: cur.execute(sql, (pid,)).fetchone()[0]):
            if time.monotonic() > deadline:
                raise DatabaseError(
                    f"server process {pid} still held the transaction open "
                    f"after the timeout of {self.timeout:g} s"
                )
            time.sleep(0.005)

    def _sql(self, text: str, **parts):
        return schema_sql(self.schema, text, **parts)

    def __repr__(self) -> str:
        mode = "exact" if self.exact else f"hnsw ef_search={self.ef_search}"
        return (
            f"PostgresStore(schema={self.schema!r}, vector({self.dimension}), {mode})"
        )


class _Lost(Exception):
    """The connection was lost during an attempt (``_run`` handles it):
    the driver's reason, whether COMMIT had been sent, and the server
    process that ran the attempt."""

    def __init__(self, reason: str, committing: bool, pid: int | None):
        super().__init__(reason)
        self.reason, self.committing, self.pid = reason, committing, pid

    def during(self, what: str) -> str:
        if what != "write":
            return f"during the {what}"
        if self.committing:
            return "while the write was committing"
        return "before the write committed"


def _is_lost(conn, error: Exception) -> bool:
    """Whether ``error`` means the connection is gone: the connection is
    closed, or the driver lost it (no SQLSTATE), or the server ended it
    (class 08, connection exception; 57P, an administrator's shutdown, a
    crash, a server starting or stopping)."""
    import psycopg

    if conn is None or conn.closed:
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False
    state = error.sqlstate or ""
    return not state or state.startswith(("08", "57P"))


@contextlib.contextmanager
def _transaction(conn):
    """``conn.transaction()``, except that a connection lost inside it is
    closed at once: psycopg then does not try a ROLLBACK on it (and log the
    failure of that as a warning); the server rolls the transaction back."""
    import psycopg

    with conn.transaction():
        try:
            yield
        except psycopg.Error as error:
            if _is_lost(conn, error):
                _close_quietly(conn)
            raise


def _outcome(write: bool, may: bool) -> str:
    if not write:
        return ": nothing was written"
    if may:
        return ": the write may have committed; read the store to know whether it did"
    return ": the write did not commit, nothing was written"


def _one_line(error: BaseException) -> str:
    """The error's first line (a server's CONTEXT lines left out)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _close_quietly(conn) -> None:
    """Close a connection that may be broken already."""
    import psycopg

    try:
        conn.close()
    except psycopg.Error:
        pass


@contextlib.contextmanager
def store_factory(dsn: str | None = None, **options):
    """``store(encoder, chunks) -> PostgresStore`` for
    :class:`~ragbook.system.rag.RAGPipeline` (``ragbook ask --store
    postgres``): at ``dsn``, else ``RAGBOOK_PG_DSN``, else on a throwaway
    :class:`~ragbook.postgres.server.LocalCluster` stopped on leaving the block.
    Every store it made is closed then too."""
    from .server import LocalCluster

    dsn = dsn or os.environ.get("RAGBOOK_PG_DSN") or None
    if dsn is not None:
        dsn = check_dsn(dsn)
    cluster = None if dsn else LocalCluster().start()
    made: list[PostgresStore] = []

    def store(encoder, chunks) -> PostgresStore:
        made.append(
            PostgresStore.from_chunks(dsn or cluster.dsn, encoder, chunks, **options)
        )
        return made[-1]

    try:
        yield store
    finally:
        for each in made:
            each.close()
        if cluster is not None:
            cluster.stop()
