"""The document store in PostgreSQL with pgvector: chunks, their
documents' metadata and their vectors in tables, permissions enforced by
the database (chapter 15).

:class:`PostgresStore` holds one connection and does the store's work
through it: it makes its tables, roles and policies where missing, loads,
adds, replaces and deletes documents, each in one transaction, and
searches. Vectors are unit vectors, ranked by inner product (``<#>`` is
its negative) through an HNSW index (``vector_ip_ops``), or exactly by a
sequential scan. The score of a hit is the cosine, ties are broken by
chunk id, and ``allowed`` restricts the candidates before ranking (the
contract of :mod:`ragbook.retrieval`). :func:`store_factory` makes the
stores of :class:`~ragbook.pipeline.RAGPipeline`.

What the store stands on has modules of its own:

- :mod:`ragbook.pgtables`: the two tables, where a foreign key keeps every
  chunk on its document's current version; a chunk's row; COPY.
- :mod:`ragbook.pgroles`: a role per access level and a reader role per
  combination of levels, and the row-level-security policies;
  :meth:`PostgresStore.search_for` runs its query as the user's reader
  role, so the engine itself removes the rows the user may not read.
- :mod:`ragbook.pgerrors`: the errors the store raises and the check of
  its connection string.

The errors, :func:`check_dsn`, :func:`level_role` and :func:`reader_role`
import from here too.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import validate
from .access import User
from .chunking import Chunk, sentence_chunks
from .documents import Document
from .embedder import encode_queries
from .orgdocs import DocumentMeta, OrgDocument
from .pgerrors import (  # importable from here too
    DatabaseError,
    DatabaseUnavailable,
    QueryTimeout,
    check_dsn,
    check_schema,
    connect,
)
from .pgroles import (  # level_role and reader_role import from here too
    create_roles,
    level_role,
    reader_role,
    set_role,
    user_role,
)
from .pgtables import (
    _CHUNK_COLUMNS,
    _chunk,
    _unit_rows,
    copy_chunks,
    copy_documents,
    create_tables,
    schema_sql,
    stored_dimension,
)
from .retrieval import Hit, as_hits

__all__ = [
    "DatabaseError",
    "DatabaseUnavailable",
    "QueryTimeout",
    "StoreHit",
    "PostgresStore",
    "check_dsn",
    "store_factory",
    "level_role",
    "reader_role",
]

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


class PostgresStore:
    """Chunks and vectors in PostgreSQL; a retriever (chapter 15).

    ``dsn`` is a libpq connection string (:class:`ragbook.pgserver.
    LocalCluster` gives one); ``encoder`` turns texts into vectors
    (``encode``, and ``encode_queries`` if it has one), as for
    :class:`ragbook.dense.DenseRetriever`. With ``create`` the schema, the
    roles and the policies are made when missing (a replica is opened
    with ``create=False``). ``exact`` ranks by a sequential scan instead
    of the HNSW index; ``ef_search`` is HNSW's candidate list per query,
    ``m`` and ``ef_construction`` its build parameters. ``timeout`` (s)
    cuts any statement that runs longer (:class:`QueryTimeout`). A store
    holds one connection: give each thread its own store.
    """

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
                width = _unit_rows(
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

    # -- the schema -------------------------------------------------------
    def _create(self) -> None:
        def work(cur):
            cur.execute(
                "SELECT pg_advisory_xact_lock(7262687)"
            )  # one creator at a time
            create_tables(cur, self.schema, self.dimension)
            create_roles(cur, self.schema)

        self._run(work)
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

        self._run(work)

    def drop_index(self) -> None:
        self._run(
            lambda cur: cur.execute(self._sql("DROP INDEX IF EXISTS {s}.chunks_hnsw"))
        )

    def clear(self) -> None:
        """Delete every document and chunk (one transaction)."""
        self._run(
            lambda cur: cur.execute(self._sql("TRUNCATE {s}.chunks, {s}.documents")),
            write=True,
        )

    # -- writing ----------------------------------------------------------
    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = _unit_rows(
            self.encoder.encode(texts), self.dimension, "the encoder's vectors"
        )
        if vectors.shape[0] != len(texts):
            raise ValueError(
                f"the encoder returned {vectors.shape[0]} "
                f"vectors for {len(texts)} texts"
            )
        return vectors

    def load(
        self,
        chunks: Sequence[Chunk],
        documents: Mapping[str, DocumentMeta | OrgDocument],
        vectors: object = None,
        index: bool = True,
        replace: bool = False,
    ) -> int:
        """Bulk-load chunks that keep their own ids, in one transaction
        with COPY, then build the HNSW index (``index``).

        ``documents`` maps every chunk's document id to its metadata;
        ``vectors`` (one row per chunk) skips the encoder. An id or a
        document already in the store, a chunk without metadata or a
        vector of the wrong dimension is refused before anything is
        written, or rolls the whole load back. With ``replace`` the
        store's previous contents are deleted in the same transaction.
        Returns the chunks loaded.
        """
        replace = validate.flag(replace, "replace")
        chunks = validate.sequence(chunks, "chunks", "Chunk objects")
        for position, chunk in enumerate(chunks):
            if not isinstance(chunk, Chunk):
                raise TypeError(
                    f"chunks must hold Chunk objects, got "
                    f"{type(chunk).__name__} at {position}"
                )
        if not isinstance(documents, Mapping):
            raise TypeError(
                "documents must map document ids to DocumentMeta or OrgDocument"
            )
        metas, titles = {}, {}
        for doc_id, value in documents.items():
            if isinstance(value, OrgDocument):
                metas[doc_id], titles[doc_id] = value.meta, value.document.title
            elif isinstance(value, DocumentMeta):
                metas[doc_id], titles[doc_id] = value, ""
            else:
                raise TypeError(
                    f"documents[{doc_id!r}] must be a "
                    f"DocumentMeta or OrgDocument, got "
                    f"{type(value).__name__}"
                )
        missing = sorted({c.doc_id for c in chunks} - set(metas))
        if missing:
            raise ValueError(
                f"chunk of document {missing[0]!r} has no "
                "metadata (access level, version, date)"
            )
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids) or any(i < 0 for i in ids):
            raise ValueError("chunk ids must be distinct whole numbers of at least 0")
        if vectors is None:
            vectors = (
                self._encode([c.indexed_text for c in chunks])
                if chunks
                else np.zeros((0, self.dimension), np.float32)
            )
        else:
            vectors = _unit_rows(vectors, self.dimension, "vectors")
            if vectors.shape[0] != len(chunks):
                raise ValueError(
                    f"got {vectors.shape[0]} vectors for {len(chunks)} chunks"
                )
        used = sorted(metas)

        def work(cur):
            cur.execute("SET LOCAL statement_timeout = 0")  # a bulk load
            if replace:
                cur.execute(self._sql("TRUNCATE {s}.chunks, {s}.documents"))
            copy_documents(
                cur, self.schema, [metas[d] for d in used], [titles[d] for d in used]
            )
            copy_chunks(cur, self.schema, ids, chunks, metas, vectors)
            cur.execute(
                self._sql(
                    "SELECT setval('{s}.chunk_ids', greatest(%s, (SELECT "
                    "coalesce(max(id) + 1, 0) FROM {s}.chunks)), false)"
                ),
                (max(ids, default=-1) + 1,),
            )

        import psycopg

        def done(cur):  # a replacing load may simply run again
            return not replace and self._has(cur, {d: metas[d].version for d in used})

        try:
            self._run(work, write=True, done=done)
        except psycopg.errors.UniqueViolation as error:
            raise ValueError(
                "the store already holds a chunk id or a "
                "document of this load; nothing was written ("
                + str(error).splitlines()[0]
                + ")"
            ) from None
        if index:
            self.build_index()
        return len(chunks)

    @classmethod
    def from_chunks(
        cls,
        dsn: str,
        encoder,
        chunks: Sequence[Chunk],
        documents: Mapping[str, DocumentMeta] | None = None,
        **options,
    ) -> "PostgresStore":
        """A store holding exactly ``chunks`` (what was in its schema is
        replaced), e.g. a pipeline's chunks; documents without metadata
        are public, version 1."""
        store = cls(dsn, encoder, **options)
        chunks = list(chunks)
        metas = dict(documents or {})
        for chunk in chunks:
            metas.setdefault(
                chunk.doc_id,
                DocumentMeta(chunk.doc_id, "public", 1, _dt.date(2026, 1, 1)),
            )
        store.drop_index()  # built again once the rows are in
        store.load(chunks, metas, replace=True)
        return store

    def _has(self, cur, versions: Mapping[str, int | None]) -> bool:
        """Whether every document holds the given version (None: absent)
        — how a retried write tells that its first attempt committed."""
        cur.execute(
            self._sql(
                "SELECT doc_id, version FROM {s}.documents WHERE doc_id = ANY(%s)"
            ),
            (list(versions),),
        )
        found = dict(cur.fetchall())
        return all(found.get(d) == v for d, v in versions.items())

    @staticmethod
    def _checked(document: object) -> OrgDocument:
        if not isinstance(document, OrgDocument):
            raise TypeError(
                "the store keeps OrgDocument objects (metadata"
                f" and text), got {type(document).__name__}"
            )
        return document

    def add(self, documents: OrgDocument | Iterable[OrgDocument]) -> None:
        """Add new documents, chunked and encoded, in one transaction; an
        id already in the store is an error and nothing is written."""
        if isinstance(documents, OrgDocument):
            batch = [documents]
        else:
            batch = [
                self._checked(d)
                for d in validate.sequence(
                    documents, "documents", "OrgDocument objects"
                )
            ]
        ids = [d.id for d in batch]
        if len(set(ids)) != len(ids):
            raise ValueError(
                "the batch holds two documents with the same "
                "id; add the first, then replace it"
            )
        chunks = self.chunker([d.document for d in batch])
        vectors = (
            self._encode([c.indexed_text for c in chunks])
            if chunks
            else np.zeros((0, self.dimension), np.float32)
        )
        metas = {d.id: d.meta for d in batch}

        def work(cur):
            cur.execute(
                self._sql(
                    "SELECT doc_id, version FROM {s}.documents WHERE doc_id = ANY(%s)"
                ),
                (ids,),
            )
            held = cur.fetchone()
            if held is not None:
                raise ValueError(
                    f"the store already holds {held[0]!r} "
                    f"(version {held[1]}); use replace to "
                    "store a new version"
                )
            copy_documents(
                cur,
                self.schema,
                [d.meta for d in batch],
                [d.document.title for d in batch],
            )
            copy_chunks(
                cur,
                self.schema,
                self._new_ids(cur, len(chunks)),
                chunks,
                metas,
                vectors,
            )

        self._run(
            work,
            write=True,
            done=lambda cur: self._has(cur, {d.id: d.meta.version for d in batch}),
        )

    def _new_ids(self, cur, n: int) -> list[int]:
        cur.execute(
            self._sql("SELECT nextval('{s}.chunk_ids') FROM generate_series(1, %s)"),
            (n,),
        )
        return [row[0] for row in cur.fetchall()]

    def replace(self, document: OrgDocument) -> None:
        """Store a higher version of a document, in one transaction: its
        old chunks are deleted, the new ones inserted; a reader sees the
        old version or the new one, never a mixture, never both."""
        document = self._checked(document)
        chunks = self.chunker([document.document])
        vectors = (
            self._encode([c.indexed_text for c in chunks])
            if chunks
            else np.zeros((0, self.dimension), np.float32)
        )
        meta = document.meta

        def work(cur):
            cur.execute(
                self._sql(
                    "SELECT version FROM {s}.documents WHERE doc_id = %s FOR UPDATE"
                ),
                (document.id,),
            )
            row = cur.fetchone()
            if row is None:
                raise ValueError(
                    f"the store holds no document {document.id!r} to replace; use add"
                )
            if meta.version <= row[0]:
                raise ValueError(
                    f"version {meta.version} of {document.id!r} does not "
                    f"supersede the stored version {row[0]}; a "
                    "replacement needs a higher version"
                )
            cur.execute(
                self._sql("DELETE FROM {s}.chunks WHERE doc_id = %s"), (document.id,)
            )
            cur.execute(
                self._sql(
                    "UPDATE {s}.documents SET version = %s, access = %s, "
                    "date = %s, title = %s WHERE doc_id = %s"
                ),
                (
                    meta.version,
                    meta.access,
                    meta.date,
                    document.document.title,
                    document.id,
                ),
            )
            copy_chunks(
                cur,
                self.schema,
                self._new_ids(cur, len(chunks)),
                chunks,
                {document.id: meta},
                vectors,
            )

        self._run(
            work,
            write=True,
            done=lambda cur: self._has(cur, {document.id: meta.version}),
        )

    def delete(self, doc_id: str) -> None:
        """Remove a document; its chunks go with it (ON DELETE CASCADE)."""
        doc_id = validate.text(doc_id, "doc_id")

        def work(cur):
            cur.execute(
                self._sql(
                    "DELETE FROM {s}.documents WHERE doc_id = %s RETURNING version"
                ),
                (doc_id,),
            )
            if cur.fetchone() is None:
                raise KeyError(f"the store holds no document {doc_id!r} to delete")

        self._run(work, write=True, done=lambda cur: self._has(cur, {doc_id: None}))

    # -- reading ----------------------------------------------------------
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
                self._sql(f"SELECT {_CHUNK_COLUMNS} FROM {{s}}.chunks ORDER BY id")
            ).fetchall()
        )
        return {r[0]: _chunk(r) for r in rows}

    def allowed(self, user: User) -> list[int]:
        """Ids of the current chunks ``user`` may read, in id order."""
        if not isinstance(user, User):
            raise TypeError(f"expected a User, got {type(user).__name__}")
        return self._run(
            lambda cur: [
                r[0]
                for r in cur.execute(
                    self._sql(
                        "SELECT id FROM {s}.chunks WHERE access = ANY(%s) ORDER BY id"
                    ),
                    (sorted(user.levels),),
                ).fetchall()
            ]
        )

    def query_vectors(self, queries: Sequence[str]) -> np.ndarray:
        """The queries' unit vectors (``encode_queries`` if the encoder
        has it); each query is checked as the contract requires."""
        queries = [validate.query(q, terms=False) for q in queries]
        vectors = _unit_rows(
            encode_queries(self.encoder, queries), self.dimension, "the query vectors"
        )
        if vectors.shape[0] != len(queries):
            raise ValueError(
                f"the encoder returned {vectors.shape[0]} "
                f"vectors for {len(queries)} queries"
            )
        return vectors

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k chunks by cosine with the query, as hits (the
        contract of :mod:`ragbook.retrieval`); ``allowed`` restricts the
        candidates before ranking."""
        vector = self.query_vectors([validate.query(query, terms=False)])
        k = validate.k(k)
        if allowed is not None:
            allowed = validate.ids(allowed, "allowed")
            if not allowed:
                return []
        rows = self._run(lambda cur: self._ranked(cur, vector[0], k, allowed))
        return as_hits((r[0], r[1]) for r in rows)

    def search_vector(
        self, vector: object, k: int = 10, user: User | None = None
    ) -> list[Hit]:
        """The top k for a query vector, as the store's user or as
        ``user`` (row-level security)."""
        vector = _unit_rows(
            np.asarray(vector)[None, :], self.dimension, "the query vector"
        )[0]
        k = validate.k(k)
        role = user_role(user)
        if role is False:
            return []
        rows = self._run(lambda cur: self._ranked(cur, vector, k, None, role))
        return as_hits((r[0], r[1]) for r in rows)

    def search_for(self, user: User, query: str, k: int = 10) -> list[StoreHit]:
        """The top k chunks ``user`` may read, with their documents'
        versions and access levels. The query runs as the user's reader
        role, so the database's row-level security chooses the rows."""
        role = user_role(user)
        if role is None:
            raise TypeError(f"expected a User, got {type(user).__name__}")
        vector = self.query_vectors([validate.query(query, terms=False)])
        k = validate.k(k)
        if role is False:
            return []
        rows = self._run(
            lambda cur: self._ranked(cur, vector[0], k, None, role, details=True)
        )
        return [
            StoreHit(rank, r[1], _chunk(r[2:]), r[6], r[5])
            for rank, r in enumerate(rows, start=1)
        ]

    def search_many(
        self, queries: Sequence[str], k: int = 10, user: User | None = None
    ) -> list[list[Hit]]:
        """:meth:`search` (or, with ``user``, the ranking of
        :meth:`search_for`) for many queries in one statement."""
        queries = validate.texts(queries, "queries")
        vectors = self.query_vectors(queries) if queries else None
        return self.search_vectors(vectors, k, user) if queries else []

    def search_vectors(
        self, vectors: object, k: int = 10, user: User | None = None
    ) -> list[list[Hit]]:
        """The top k for each query vector (rows), in one statement."""
        vectors = _unit_rows(vectors, self.dimension, "the query vectors")
        k = validate.k(k)
        role = user_role(user)
        if role is False:
            return [[] for _ in range(len(vectors))]

        def work(cur):
            set_role(cur, role)
            exact = self.exact or k > MAX_EF_SEARCH
            found = self._batch(cur, vectors, k, exact)
            short = [i for i, rows in enumerate(found) if len(rows) < k]
            if short and not exact:
                again = self._batch(cur, vectors[short], k, True)
                for i, rows in zip(short, again):
                    found[i] = rows
            return found

        return [as_hits(rows) for rows in self._run(work)]

    def _batch(
        self, cur, vectors: np.ndarray, k: int, exact: bool
    ) -> list[list[tuple[int, float]]]:
        from pgvector import Vector

        n = k if exact else min(MAX_EF_SEARCH, 2 * k)
        self._set_scan(cur, exact, n, True)
        order = "embedding <#> q.v, id" if exact else "embedding <#> q.v"
        cur.execute(
            self._sql(
                "SELECT q.n, c.id, c.d FROM unnest(%s::vector[]) WITH "
                "ORDINALITY AS q(v, n) CROSS JOIN LATERAL (SELECT id, "
                "embedding <#> q.v AS d FROM {s}.chunks "
                f"ORDER BY {order} LIMIT %s) c ORDER BY q.n, c.d, c.id"
            ),
            ([Vector(v) for v in vectors], n),
        )
        found: list[list[tuple[int, float]]] = [[] for _ in vectors]
        for number, chunk_id, distance in cur.fetchall():
            rows = found[number - 1]
            if len(rows) < k:
                rows.append((chunk_id, -distance))
        return found

    def _set_scan(self, cur, exact: bool, n: int, filtered: bool) -> None:
        if exact:
            cur.execute("SET LOCAL enable_indexscan = off")
            return
        cur.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)", (str(self.ef_search),)
        )
        # the scan goes on past ef_search candidates while the LIMIT or a
        # filter (allowed, row-level security) needs more rows
        cur.execute("SET LOCAL hnsw.iterative_scan = strict_order")

    def _ranked(
        self,
        cur,
        vector: np.ndarray,
        k: int,
        allowed: list[int] | None,
        role: str | None = None,
        details: bool = False,
    ) -> list[tuple]:
        """Rows (id, score, ...) of the top k, best first, ties by id:
        the HNSW index's top candidates re-sorted by (distance, id), or,
        when the index found fewer than k rows (a filter that few rows
        pass), an exact scan."""
        from pgvector import Vector

        set_role(cur, role)
        columns = f", {_CHUNK_COLUMNS}" if details else ""
        where = "WHERE id = ANY(%(allowed)s)" if allowed is not None else ""
        params = {"q": Vector(vector), "k": k, "allowed": allowed}
        filtered = allowed is not None or role is not None
        if not self.exact and k <= MAX_EF_SEARCH:
            n = min(MAX_EF_SEARCH, 2 * k)
            self._set_scan(cur, False, n, filtered)
            cur.execute(
                self._sql(
                    f"SELECT id, -d{columns} FROM (SELECT *, embedding <#> "
                    f"%(q)s AS d FROM {{s}}.chunks {where} ORDER BY "
                    "embedding <#> %(q)s LIMIT %(n)s) c ORDER BY d, id "
                    "LIMIT %(k)s"
                ),
                {**params, "n": n},
            )
            rows = cur.fetchall()
            if len(rows) == k:
                return rows
        self._set_scan(cur, True, k, filtered)
        cur.execute(
            self._sql(
                f"SELECT id, -(embedding <#> %(q)s){columns} FROM {{s}}.chunks"
                f" {where} ORDER BY embedding <#> %(q)s, id LIMIT %(k)s"
            ),
            params,
        )
        return cur.fetchall()

    def text_search(
        self,
        query: str,
        k: int = 10,
        allowed: Iterable[int] | None = None,
        match: str = "any",
    ) -> list[Hit]:
        """PostgreSQL's own full-text ranking: ``ts_rank_cd`` (cover
        density) over ``to_tsvector('english', header || text)``, among
        the chunks that match the query's lexemes: all of them
        (``match="all"``, what ``plainto_tsquery`` gives) or any
        (``"any"``). No idf: a rare term weighs what a common one does."""
        query = validate.query(query, terms=False).replace("\x00", " ")
        k = validate.k(k)
        if match not in ("any", "all"):
            raise ValueError(f"match must be 'any' or 'all', got {match!r}")
        tsquery = (
            "plainto_tsquery('english', %(t)s)"
            if match == "all"
            else (
                "replace(plainto_tsquery('english', %(t)s)::text, "
                "' & ', ' | ')::tsquery"
            )
        )
        if allowed is not None:
            allowed = validate.ids(allowed, "allowed")
        where = "AND id = ANY(%(allowed)s)" if allowed is not None else ""

        def work(cur):
            cur.execute(
                self._sql(
                    f"SELECT id, ts_rank_cd(tsv, t.q)::float8 AS r FROM "
                    f"{{s}}.chunks, (SELECT {tsquery} AS q) t WHERE tsv @@ t.q"
                    f" {where} "
                    "ORDER BY r DESC, id LIMIT %(k)s"
                ),
                {"t": query, "k": k, "allowed": allowed},
            )
            return cur.fetchall()

        return as_hits(self._run(work))

    def answer(
        self,
        question: str,
        user: User,
        generator,
        k: int = 5,
        budget: int | None = None,
        **options,
    ):
        """:func:`~ragbook.pipeline.answer_question` over the chunks
        ``user`` may read, chosen by the database's row-level security."""
        from .pipeline import answer_question

        if user_role(user) is None:
            raise TypeError(f"expected a User, got {type(user).__name__}")
        view = _UserView(self, user)
        return answer_question(question, view, view, generator, k, budget, **options)

    def explain(self, k: int = 10) -> str:
        """The plan PostgreSQL chooses for a top-k query (one line per
        node, costs removed)."""
        from pgvector import Vector

        vector = np.zeros(self.dimension, np.float32)
        vector[0] = 1

        def work(cur):
            self._set_scan(cur, self.exact, k, False)
            cur.execute(
                self._sql(
                    "EXPLAIN (COSTS OFF) SELECT id FROM {s}.chunks ORDER BY "
                    "embedding <#> %s LIMIT %s"
                ),
                (Vector(vector), k),
            )
            lines = [re.sub(r"'\[[^']*\]'::vector", "$1", r[0]) for r in cur.fetchall()]
            return "\n".join(lines)

        return self._run(work)

    def __repr__(self) -> str:
        mode = "exact" if self.exact else f"hnsw ef_search={self.ef_search}"
        return (
            f"PostgresStore(schema={self.schema!r}, vector({self.dimension}), {mode})"
        )


class _UserView(Mapping):
    """What :func:`~ragbook.pipeline.answer_question` needs for one user:
    a retriever whose search runs under the user's role, and the chunks it
    returned, by id."""

    def __init__(self, store: PostgresStore, user: User):
        self.store, self.user = store, user
        self._seen: dict[int, Chunk] = {}

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        if allowed is not None:
            raise ValueError(
                "a user's view takes no allowed list: the database chooses the rows"
            )
        hits = self.store.search_for(self.user, query, k)
        self._seen.update((h.chunk.id, h.chunk) for h in hits)
        return [Hit(h.chunk.id, h.score, h.rank) for h in hits]

    def __getitem__(self, chunk_id: int) -> Chunk:
        return self._seen[chunk_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._seen)

    def __len__(self) -> int:
        return len(self._seen)


@contextlib.contextmanager
def store_factory(dsn: str | None = None, **options):
    """``store(encoder, chunks) -> PostgresStore`` for
    :class:`~ragbook.pipeline.RAGPipeline` (``ragbook ask --store
    postgres``): at ``dsn``, else ``RAGBOOK_PG_DSN``, else on a throwaway
    :class:`~ragbook.pgserver.LocalCluster` stopped on leaving the block.
    Every store it made is closed then too."""
    from .pgserver import LocalCluster

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
