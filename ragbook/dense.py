"""Dense retrieval: an encoder turns chunks and questions into unit vectors, and a vector index ranks them
by cosine (chapters 6 and 7).

An encoder is anything with ``encode(texts) -> array`` (one unit vector per text) and, optionally,
``encode_queries(texts)`` for models that encode questions differently: :class:`ragbook.lsa.LSA` and
:class:`ragbook.embedder.MiniLMEncoder` both qualify.
"""
from __future__ import annotations

from typing import Iterable, Protocol, Sequence

import numpy as np

from .vectors import ExactIndex, IVFIndex

__all__ = ["Encoder", "DenseRetriever"]


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class DenseRetriever:
    """Encode the chunk texts once; answer each question with exact search, or IVF if ``lists`` is given."""

    def __init__(self, encoder: Encoder, texts: Sequence[str], lists: int | None = None, probes: int = 1, seed: int = 0):
        if len(texts) == 0:
            raise ValueError("cannot index an empty collection: there are no chunks")
        self.encoder = encoder
        self.vectors = np.asarray(encoder.encode(list(texts)), dtype=np.float32)
        self.exact = ExactIndex(self.vectors)
        self.ivf = IVFIndex(self.vectors, lists, seed=seed) if lists else None
        self.probes = probes
        self._queries: dict[str, np.ndarray] = {}

    def encode_query(self, query: str) -> np.ndarray:
        """The query's vector, remembered, since evaluation asks the same questions many times."""
        if not isinstance(query, str):
            raise TypeError(f"a query is a str, got {type(query).__name__}")
        vector = self._queries.get(query)
        if vector is None:
            encode = getattr(self.encoder, "encode_queries", self.encoder.encode)
            vector = np.asarray(encode([query]), dtype=np.float32)[0]
            if len(self._queries) >= 10_000:
                self._queries.clear()
            self._queries[query] = vector
        return vector

    def scores(self, query: str) -> np.ndarray:
        """The cosine of every chunk with the query."""
        return self.exact.vectors @ _unit(self.encode_query(query))

    def search(self, query: str, k: int = 10, allowed: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """The top k (chunk id, cosine) pairs; exact unless the retriever was built with IVF lists.

        ``allowed`` restricts the candidates before ranking and always uses exact search, since an IVF
        probe could otherwise find no allowed chunk at all.
        """
        q = self.encode_query(query)
        if self.ivf is None or allowed is not None:
            return self.exact.search_one(q, k, allowed)
        return self.ivf.search(q, k, self.probes).ranking(0)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    if norm == 0:
        raise ValueError("the query vector is zero and has no direction")
    return vector / norm
