"""tf-idf vectors and cosine scores (chapter 5).

    w(t, d) = tf(t, d) * idf(t),
    tf = f (raw) or 1 + ln f (sublinear),   idf(t) = ln((1 + N) / (1 + n_t)) + 1

The idf is scikit-learn's smoothed form: the added ones act as if one extra chunk
contained every term, so no idf divides by zero, and the final + 1 keeps a term found in
every chunk from vanishing. Chunk and query vectors are divided by their Euclidean
length, so the score, their dot product, is the cosine of the angle between them.
Without that division (``cosine=False``) a long chunk scores higher simply for being
long.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Sequence

import numpy as np

from .. import validate
from ..indexing.index import InvertedIndex
from .ranking import top_k
from .contract import Hit
from ..indexing.text import analyze

__all__ = ["TfIdf", "smoothed_idf"]


def smoothed_idf(n: np.ndarray | int, N: int) -> np.ndarray:
    """ln((1 + N) / (1 + n)) + 1, scikit-learn's ``smooth_idf=True``."""
    n, N = validate.document_frequencies(n, N)
    return np.log((1.0 + N) / (1.0 + n)) + 1.0


class TfIdf:
    """tf-idf over an :class:`~ragbook.indexing.index.InvertedIndex`, scored by cosine
    (or raw dot products)."""

    def __init__(
        self, index: InvertedIndex, sublinear: bool = False, cosine: bool = True
    ):
        if not isinstance(index, InvertedIndex):
            raise TypeError(
                "index must be an InvertedIndex (use TfIdf.from_texts for "
                f"texts), got {type(index).__name__}"
            )
        self.index = index
        self.sublinear, self.cosine = (
            validate.flag(sublinear, "sublinear"),
            validate.flag(cosine, "cosine"),
        )
        self.idf = smoothed_idf(index.document_frequency, index.n_chunks)
        weights = self._tf(index.counts.astype(np.float64)) * np.repeat(
            self.idf, index.document_frequency
        )
        if self.cosine:
            squared = np.bincount(
                index.doc_ids, weights=weights**2, minlength=index.n_chunks
            )
            self.norms = np.sqrt(squared)
            weights = weights / self.norms[index.doc_ids]
        self.weights = weights

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        analyzer: Callable[[str], list[str]] = analyze,
        **options,
    ) -> "TfIdf":
        """Analyse and index ``texts``, then build tf-idf over them."""
        return cls(InvertedIndex.from_texts(texts, analyzer), **options)

    def _tf(self, counts: np.ndarray) -> np.ndarray:
        return 1.0 + np.log(counts) if self.sublinear else counts

    def query_vector(self, query: str | Sequence[str]) -> dict[int, float]:
        """The query's weights by term id: known terms only, unit length when scoring by
        cosine."""
        query = validate.query(query)
        terms = self.index.query_terms(query) if isinstance(query, str) else query
        counts = Counter(t for t in terms if t in self.index.vocabulary)
        ids = [self.index.vocabulary[t] for t in counts]
        values = (
            self._tf(np.array(list(counts.values()), dtype=np.float64)) * self.idf[ids]
        )
        if self.cosine and values.size:
            values = values / np.sqrt(np.sum(values**2))
        return dict(zip(ids, values.tolist()))

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """The score of every chunk: the dot product of its vector with the query's (0
        if nothing shared)."""
        scores = np.zeros(self.index.n_chunks, dtype=np.float64)
        indptr, doc_ids = self.index.indptr, self.index.doc_ids
        for i, q in self.query_vector(query).items():
            start, end = indptr[i], indptr[i + 1]
            scores[doc_ids[start:end]] += q * self.weights[start:end]
        return scores

    def search(
        self,
        query: str | Sequence[str],
        k: int = 10,
        allowed: Iterable[int] | None = None,
    ) -> list[Hit]:
        """The top k chunks as hits, ties by chunk id; ``allowed`` filters before
        ranking (see :mod:`ragbook.retrieval.contract`)."""
        return top_k(self.scores(query), k, allowed)
