"""Writing to the PostgreSQL store (chapter 16 and the database appendix): a
bulk load with COPY, and adding, replacing and deleting documents, each in one
transaction.

:class:`LoadingMixin` is the part of :class:`ragbook.postgres.store.PostgresStore`
that writes. Every write runs through the store's ``_run`` with ``write=True`` and a
check of whether it committed (:meth:`LoadingMixin._has`): a write that lost its
connection runs again only if its first attempt did not commit, so nothing is
written twice; when it cannot run again, the store's error says whether it may
have committed (:mod:`ragbook.postgres.errors`). A replacement deletes a
document's old chunks and inserts the new ones in the same transaction, as the
foreign key of :mod:`ragbook.postgres.tables` demands, so a reader sees the old
version or the new one, never both.
"""

from __future__ import annotations

import datetime as _dt
from typing import Iterable, Mapping, Sequence

import numpy as np

from .. import validate
from ..corpus.orgdocs import DocumentMeta, OrgDocument
from ..indexing.chunking import Chunk
from .tables import copy_chunks, copy_documents, unit_vectors

__all__ = ["LoadingMixin"]


class LoadingMixin:
    """Loading, adding, replacing and deleting documents, for
    :class:`~ragbook.postgres.store.PostgresStore`, which gives the ``encoder``,
    ``chunker``, ``schema`` and ``dimension``, and runs the work with ``_run``."""

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = unit_vectors(
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
            vectors = unit_vectors(vectors, self.dimension, "vectors")
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
    ) -> LoadingMixin:
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

    def clear(self) -> None:
        """Delete every document and chunk (one transaction)."""
        self._run(
            lambda cur: cur.execute(self._sql("TRUNCATE {s}.chunks, {s}.documents")),
            write=True,
        )

    # -- what a write needs -----------------------------------------------
    @staticmethod
    def _checked(document: object) -> OrgDocument:
        if not isinstance(document, OrgDocument):
            raise TypeError(
                "the store keeps OrgDocument objects (metadata"
                f" and text), got {type(document).__name__}"
            )
        return document

    def _new_ids(self, cur, n: int) -> list[int]:
        cur.execute(
            self._sql("SELECT nextval('{s}.chunk_ids') FROM generate_series(1, %s)"),
            (n,),
        )
        return [row[0] for row in cur.fetchall()]

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
