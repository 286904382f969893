"""A document store that stays current: one version of each document, its chunks and a
retriever (chapter 16).

:class:`DocumentStore` keeps exactly one current version of each document;
:meth:`~DocumentStore.replace` supersedes it and :meth:`~DocumentStore.delete` removes
it, and after every change the chunks and the retriever are rebuilt, so no deleted or
superseded text can be found. BM25's idf and average length depend on every chunk, and
this book's BM25 stores weights that already include them, so any change means
rebuilding the sparse index; its cost grows with the collection.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from .. import validate
from .access import User, allowed_chunks
from ..retrieval.bm25 import BM25
from ..indexing.chunking import Chunk, sentence_chunks
from ..corpus.documents import Document
from ..corpus.orgdocs import DocumentMeta, OrgDocument
from ..generation.answer import Answer
from .pipeline import answer_question
from ..generation.prompts import Prompt, count_tokens
from ..retrieval.contract import Hit

__all__ = ["StoreHit", "DocumentStore"]


@dataclass(frozen=True)
class StoreHit:
    """One result of :meth:`DocumentStore.search_for`: rank, score, the chunk, and its
    document's version and access."""

    rank: int
    score: float
    chunk: Chunk
    version: int
    access: str


def _default_chunker(documents: Sequence[Document]) -> list[Chunk]:
    return sentence_chunks(documents, 30)


class DocumentStore:
    """The current version of every document, its chunks and a retriever over them, kept
    in step (chapter 16).

    ``chunker`` maps a list of documents to chunks (sentence chunks of at most 30 words
    by default, which suits short policy documents); ``retriever`` builds a retriever
    from the chunks' indexed texts (BM25 by default); any object with
    ``search(query, k, allowed)`` will do. Each document is chunked once, when it is
    added or replaced; the retriever is rebuilt from all chunks after every change,
    because collection statistics such as BM25's idf and average chunk length depend on
    all of them. ``rebuilds`` counts the rebuilds and ``rebuild_seconds`` holds the
    duration of the last one; ``history`` lists every change as (action, document id,
    version).
    """

    def __init__(
        self,
        chunker: Callable[[Sequence[Document]], list[Chunk]] | None = None,
        retriever: Callable[[list[str]], object] | None = None,
    ):
        for name, value in (("chunker", chunker), ("retriever", retriever)):
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be a function or None, got {value!r}")
        self.chunker = chunker or _default_chunker
        self.make_retriever = retriever or BM25.from_texts
        self._current: dict[str, OrgDocument] = {}
        self._chunks: dict[str, list[Chunk]] = {}
        self.chunks: list[Chunk] = []
        self.retriever = None
        self.rebuilds = 0
        self.rebuild_seconds = 0.0
        self.history: list[tuple[str, str, int]] = []

    # -- reading -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._current)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._current

    def get(self, doc_id: str) -> OrgDocument:
        """The current version of a document."""
        if doc_id not in self._current:
            raise KeyError(f"the store holds no document {doc_id!r}")
        return self._current[doc_id]

    @property
    def meta(self) -> dict[str, DocumentMeta]:
        """Document id -> metadata of its current version."""
        return {doc_id: d.meta for doc_id, d in self._current.items()}

    @property
    def documents(self) -> list[Document]:
        """The current versions' parsed documents, in the store's order."""
        return [d.document for d in self._current.values()]

    def allowed(self, user: User) -> list[int]:
        """Ids of the current chunks ``user`` may read."""
        return allowed_chunks(self.chunks, self.meta, user)

    # -- changes -----------------------------------------------------------------------
    def add(self, documents: OrgDocument | Iterable[OrgDocument]) -> None:
        """Add new documents (one rebuild for all of them); an id already in the store
        is an error."""
        if isinstance(documents, OrgDocument):
            batch = [documents]
        elif isinstance(documents, Iterable) and not isinstance(
            documents, (str, Document)
        ):
            batch = list(documents)
        else:
            raise TypeError(
                "the store keeps OrgDocument objects (metadata and text), got "
                f"{type(documents).__name__}"
            )
        ids = [self._checked(d).id for d in batch]
        if len(set(ids)) != len(ids):
            raise ValueError(
                "the batch holds two documents with the same id; add the first, "
                "then replace it"
            )
        for doc_id in ids:
            if doc_id in self._current:
                raise ValueError(
                    f"the store already holds {doc_id!r} (version "
                    f"{self._current[doc_id].meta.version}); "
                    "use replace to store a new version"
                )
        for d in batch:
            self._store(d, "add")
        self._rebuild()

    def replace(self, document: OrgDocument) -> None:
        """Store a new version of a document; the old version's chunks disappear from
        the index."""
        self._checked(document)
        old = self._current.get(document.id)
        if old is None:
            raise ValueError(
                f"the store holds no document {document.id!r} to replace; use add"
            )
        if document.meta.version <= old.meta.version:
            raise ValueError(
                f"version {document.meta.version} of {document.id!r} does not "
                "supersede the stored "
                f"version {old.meta.version}; a replacement needs a higher version"
            )
        self._store(document, "replace")
        self._rebuild()

    def delete(self, doc_id: str) -> None:
        """Remove a document and its chunks from the store and the index."""
        if doc_id not in self._current:
            raise KeyError(f"the store holds no document {doc_id!r} to delete")
        version = self._current.pop(doc_id).meta.version
        del self._chunks[doc_id]
        self.history.append(("delete", doc_id, version))
        self._rebuild()

    @staticmethod
    def _checked(document: OrgDocument) -> OrgDocument:
        if not isinstance(document, OrgDocument):
            raise TypeError(
                "the store keeps OrgDocument objects (metadata and text), got "
                f"{type(document).__name__}"
            )
        return document

    def _store(self, document: OrgDocument, action: str) -> None:
        self._current[document.id] = document
        self._chunks[document.id] = self.chunker([document.document])
        self.history.append((action, document.id, document.meta.version))

    def _rebuild(self) -> None:
        start = time.perf_counter()
        chunks = [c for doc_id in self._current for c in self._chunks[doc_id]]
        self.chunks = [replace(c, id=i) for i, c in enumerate(chunks)]
        self.retriever = (
            self.make_retriever([c.indexed_text for c in self.chunks])
            if self.chunks
            else None
        )
        self.rebuilds += 1
        self.rebuild_seconds = time.perf_counter() - start

    # -- searching ---------------------------------------------------------------------
    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k of the current chunks, as hits (the contract of
        :mod:`ragbook.retrieval.contract`).

        ``allowed`` holds ids of current chunks (:meth:`allowed` gives a user's); it
        filters before ranking.
        """
        query = validate.query(query)
        k = validate.k(k)
        if self.retriever is None:
            return []
        return self.retriever.search(query, k, allowed=allowed)

    def search_for(self, user: User, query: str, k: int = 10) -> list[StoreHit]:
        """The top k chunks among those ``user`` may read, with their documents'
        versions and access levels."""
        if not isinstance(user, User):
            raise TypeError(f"expected a User, got {type(user).__name__}")
        hits = self.search(query, k, allowed=self.allowed(user))
        meta = self.meta
        found = []
        for hit in hits:
            chunk = self.chunks[hit.chunk_id]
            found.append(
                StoreHit(
                    hit.rank,
                    hit.score,
                    chunk,
                    meta[chunk.doc_id].version,
                    meta[chunk.doc_id].access,
                )
            )
        return found

    def answer(
        self,
        question: str,
        user: User,
        generator: Callable[[Prompt], str],
        k: int = 5,
        budget: int | None = None,
        count: Callable[[str], int] = count_tokens,
    ) -> Answer:
        """:func:`~ragbook.system.pipeline.answer_question` over the current chunks that
        ``user`` may read."""
        question = validate.query(question, "question", terms=False)
        if self.retriever is None:
            raise ValueError("the store holds no documents to answer from")
        return answer_question(
            question,
            self.chunks,
            self.retriever,
            generator,
            k,
            budget,
            count,
            allowed=self.allowed(user),
        )
