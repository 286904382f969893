"""Dense retrieval: an encoder turns chunks and questions into unit vectors, and a
vector index ranks them by cosine (chapters 6 and 7).

An encoder is anything with ``encode(texts) -> array`` (one unit vector per text) and,
optionally, ``encode_queries(texts)`` for models that encode questions differently:
:class:`ragbook.retrieval.lsa.LSA` and :class:`ragbook.retrieval.embedder.MiniLMEncoder`
both qualify.
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence

import numpy as np

from .. import validate
from .embedder import encode_queries, encode_texts
from .contract import Hit, as_hits
from ..indexing.text import tokenize
from .ivf import IVFIndex
from .vectors import ExactIndex

__all__ = ["Encoder", "DenseRetriever"]


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class DenseRetriever:
    """Encode the chunk texts once; answer each question with exact search, or IVF if
    ``lists`` is given.

    ``progress`` is passed to an encoder that reports it (the MiniLM encoder: texts
    embedded, n of N; see :func:`ragbook.progress.reporter`).
    """

    def __init__(
        self,
        encoder: Encoder,
        texts: Sequence[str],
        lists: int | None = None,
        probes: int = 1,
        seed: int = 0,
        progress: object = None,
    ):
        texts = validate.texts(texts, "texts")
        if not texts:
            raise ValueError("cannot index an empty collection: there are no chunks")
        if not any(tokenize(text) for text in texts):
            raise ValueError(
                f"cannot index the collection: all {len(texts)} texts are empty "
                "(no word or number, only whitespace or punctuation)"
            )
        if not callable(getattr(encoder, "encode", None)):
            raise TypeError(
                f"encoder must have an encode(texts) method, got {encoder!r}"
            )
        lists = None if lists is None else validate.k(lists, "lists")
        probes = validate.k(probes, "probes")
        if lists is not None and probes > lists:
            raise ValueError(
                f"probes must be between 1 and the number of lists ({lists}), got "
                f"{probes!r}"
            )
        self.encoder = encoder
        self.vectors = validate.finite_array(
            encode_texts(encoder, texts, progress),
            "the encoded vectors",
            ndim=2,
            dtype=np.float32,
        )
        if self.vectors.shape[0] != len(texts):
            raise ValueError(
                f"the encoder returned {self.vectors.shape[0]} vectors for "
                f"{len(texts)} texts"
            )
        self.exact = ExactIndex(self.vectors)
        self.ivf = IVFIndex(self.vectors, lists, seed=seed) if lists else None
        self.probes = probes
        self._queries: dict[str, np.ndarray] = {}

    def encode_query(self, query: str) -> np.ndarray:
        """The query's vector, remembered, since evaluation asks the same questions many
        times."""
        query = validate.query(query, terms=False)
        vector = self._queries.get(query)
        if vector is None:
            vector = np.asarray(
                encode_queries(self.encoder, [query]), dtype=np.float32
            )[0]
            if len(self._queries) >= 10_000:
                self._queries.clear()
            self._queries[query] = vector
        return vector

    def scores(self, query: str) -> np.ndarray:
        """The cosine of every chunk with the query."""
        return self.exact.vectors @ _unit(self.encode_query(query)[None, :])[0]

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k chunks by cosine, as hits; exact unless the retriever was built
        with IVF lists.

        ``allowed`` restricts the candidates before ranking and always uses exact
        search, since an IVF probe could otherwise find no allowed chunk at all.
        """
        q = self.encode_query(query)
        if self.ivf is None or allowed is not None:
            return as_hits(self.exact.search_one(q, k, allowed))
        return as_hits(self.ivf.search_batch(q, k, self.probes).ranking(0))


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    if norm == 0:
        raise ValueError("the query vector is zero and has no direction")
    return vector / norm
