"""Administering the PostgreSQL store (chapter 16 and the database appendix): its
tables, roles and row-level-security policies, made where missing; the HNSW index,
built once the rows are in and dropped before a bulk load; and what the store holds:
its documents and chunks, and how many of each.

:class:`AdminMixin` is that part of :class:`ragbook.postgres.store.PostgresStore`.
The tables are those of :mod:`ragbook.postgres.tables`, the roles and policies
those of :mod:`ragbook.postgres.roles`; an index build runs without the store's
``timeout``, since it takes as long as it takes. Each of them may run twice, so
a connection lost while one ran makes it run again on a new one.
"""

from __future__ import annotations

from ..corpus.orgdocs import DocumentMeta
from ..indexing.chunking import Chunk
from .roles import create_roles
from .tables import CHUNK_COLUMNS, chunk_from_row, create_tables

__all__ = ["AdminMixin"]


class AdminMixin:
    """The schema, the index and the store's contents, for
    :class:`~ragbook.postgres.store.PostgresStore`, which gives the ``schema``,
    ``dimension``, ``m`` and ``ef_construction``, runs the work with ``_run`` and
    connects again with ``_connect``."""

    def _create(self) -> None:
        def work(cur):
            cur.execute(
                "SELECT pg_advisory_xact_lock(7262687)"
            )  # one creator at a time
            create_tables(cur, self.schema, self.dimension)
            create_roles(cur, self.schema)

        self._run(work, write=True)  # made where missing: it may run twice
        self._connect()  # the vector type exists now: register it

    def build_index(self) -> None:
        """Build the HNSW index over the vectors, if it does not exist (a
        bulk load builds it once, after the rows are in); the store's
        ``timeout`` does not apply to the build."""
        from psycopg import sql

        def work(cur):
            # an index build takes as long as it takes: no timeout
            cur.execute("SET LOCAL statement_timeout = 0")
            cur.execute(
                self._sql(
                    "CREATE INDEX IF NOT EXISTS chunks_hnsw ON {s}.chunks "
                    "USING hnsw (embedding vector_ip_ops) "
                    "WITH (m = {m}, ef_construction = {e})",
                    m=sql.Literal(self.m),
                    e=sql.Literal(self.ef_construction),
                )
            )

        self._run(work, write=True)

    def drop_index(self) -> None:
        self._run(
            lambda cur: cur.execute(self._sql("DROP INDEX IF EXISTS {s}.chunks_hnsw")),
            write=True,
        )

    # -- what the store holds ---------------------------------------------
    def __len__(self) -> int:
        return self._run(
            lambda cur: cur.execute(
                self._sql("SELECT count(*) FROM {s}.documents")
            ).fetchone()[0]
        )

    @property
    def n_chunks(self) -> int:
        return self._run(
            lambda cur: cur.execute(
                self._sql("SELECT count(*) FROM {s}.chunks")
            ).fetchone()[0]
        )

    @property
    def meta(self) -> dict[str, DocumentMeta]:
        """Document id -> metadata of its current version."""
        rows = self._run(
            lambda cur: cur.execute(
                self._sql(
                    "SELECT doc_id, access, version, date FROM {s}.documents "
                    "ORDER BY doc_id"
                )
            ).fetchall()
        )
        return {r[0]: DocumentMeta(r[0], r[1], r[2], r[3]) for r in rows}

    @property
    def chunks(self) -> dict[int, Chunk]:
        """Chunk id -> chunk, every current chunk, in id order."""
        rows = self._run(
            lambda cur: cur.execute(
                self._sql(f"SELECT {CHUNK_COLUMNS} FROM {{s}}.chunks ORDER BY id")
            ).fetchall()
        )
        return {r[0]: chunk_from_row(r) for r in rows}
