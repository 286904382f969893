"""The retriever contract: what every retriever of the book promises (chapter 5 states
it).

A retriever answers ``search(query, k=10, allowed=None)`` with a list of :class:`Hit`
records, best first:

- ``query`` is the question's text; an empty or missing query is refused (``ValueError``
  / ``TypeError``);
- at most ``k`` hits come back (k >= 1); k larger than the collection returns every
  candidate;
- ranks run 1, 2, 3, ...; scores never increase down the list; equal scores are ordered
  by chunk id;
- ``allowed`` (chunk ids) restricts the candidates *before* ranking, so the result is
  the top k among the chunks a user may read, never a global top k filtered afterwards;
- the same call gives the same hits.

BM25 and tf-idf (:mod:`ragbook.retrieval.bm25`, :mod:`ragbook.retrieval.tfidf`), dense
retrieval over LSA or MiniLM vectors with exact or IVF search
(:mod:`ragbook.retrieval.dense`), hybrid fusion and reranking
(:mod:`ragbook.retrieval.fusion`) and the document store (:mod:`ragbook.system.store`)
satisfy it, and so does any object a reader writes with that method. Vector indexes
(:mod:`ragbook.retrieval.vectors`) are not retrievers: they take and return arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol, runtime_checkable

__all__ = ["Hit", "Retriever", "as_hits"]


@dataclass(frozen=True)
class Hit:
    """One ranked chunk: its id in the collection, its score, and its rank (1 for the
    best)."""

    chunk_id: int
    score: float
    rank: int


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``search(query, k, allowed) -> list[Hit]`` that keeps the rules of
    this module."""

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]: ...


def as_hits(ranked: Iterable[tuple[int, float]]) -> list[Hit]:
    """Ranked (chunk id, score) pairs, best first, as hits with ranks 1, 2, ...; ids as
    int, scores as float."""
    return [
        Hit(int(chunk_id), float(score), rank)
        for rank, (chunk_id, score) in enumerate(ranked, start=1)
    ]
