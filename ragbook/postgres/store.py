"""The document store in PostgreSQL with pgvector: chunks, their
documents' metadata and their vectors in tables, permissions enforced by
the database (chapter 15).

:class:`PostgresStore` holds one connection and does the store's work
through it, each piece in one transaction (``_run``): a read that lost its
connection runs again on a new one, a write only if it did not commit.
What it does is in modules of their own, one mixin class each:

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
stores of :class:`~ragbook.system.pipeline.RAGPipeline`.

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
import os
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
    """Chunks and vectors in PostgreSQL; a retriever (chapter 15).

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
        from pgvector.psycopg import register_vector

        self.close()
        conn = connect(self.dsn)
        try:
            with conn.transaction():
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
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def close(self) -> None:
        """Close the connection (the data stays in the database)."""
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

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
        harmless); a write is run again only if ``done(cursor)`` shows
        that the first attempt did not commit, so nothing is written
        twice (a write without ``done`` is one that may run twice, such
        as TRUNCATE)."""
        import psycopg

        for attempt in (1, 2):
            try:
                if self._conn is None or self._conn.closed:
                    self._connect()
                with self._conn.transaction():
                    with self._conn.cursor() as cur:
                        return work(cur)
            except psycopg.errors.ReadOnlySqlTransaction:
                raise DatabaseError(
                    "the server is a read-only replica: write to the primary"
                ) from None
            except (
                psycopg.errors.QueryCanceled,
                psycopg.errors.LockNotAvailable,
            ) as error:
                raise QueryTimeout(
                    f"a statement ran longer than the timeout of "
                    f"{self.timeout:g} s and was cancelled: "
                    f"{str(error).splitlines()[0]}"
                ) from None
            except psycopg.OperationalError as error:
                broken = self._conn is None or self._conn.closed or self._conn.broken
                if not broken or attempt == 2:
                    raise DatabaseUnavailable(
                        "the connection to PostgreSQL failed: "
                        + " ".join(str(error).split())
                    ) from None
                self._connect()
                if write and done is not None:
                    with self._conn.transaction():
                        with self._conn.cursor() as cur:
                            if done(cur):
                                return None

    def _sql(self, text: str, **parts):
        return schema_sql(self.schema, text, **parts)

    def __repr__(self) -> str:
        mode = "exact" if self.exact else f"hnsw ef_search={self.ef_search}"
        return (
            f"PostgresStore(schema={self.schema!r}, vector({self.dimension}), {mode})"
        )


@contextlib.contextmanager
def store_factory(dsn: str | None = None, **options):
    """``store(encoder, chunks) -> PostgresStore`` for
    :class:`~ragbook.system.pipeline.RAGPipeline` (``ragbook ask --store
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
