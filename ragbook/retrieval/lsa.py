"""Latent semantic analysis: dense vectors from the SVD of the tf-idf matrix (chapter
6).

X is the tf-idf matrix of the chunks, one unit-length row per chunk, over the terms
found in at least two chunks (a term in a single chunk carries no co-occurrence
information). Its singular value decomposition X = U S V^T, singular values in
decreasing order, gives by the Eckart-Young theorem the closest rank-D matrix to X in
the Frobenius norm: U_D S_D V_D^T. A chunk or query with tf-idf row x is embedded as x
V_D, its projection on the first D right singular vectors, and compared by cosine. The
rows of V_D S_D embed the terms.

With D equal to the rank of X nothing is lost, and the ranking equals the tf-idf cosine
ranking over the same terms; a smaller D merges terms that occur in similar chunks. The
SVD here is dense and exact, which suits collections of a few thousand chunks.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence

import numpy as np

from .. import validate
from ..indexing.text import analyze
from .tfidf import smoothed_idf

__all__ = ["LSA"]


class LSA:
    """An LSA encoder fitted on a collection: ``encode`` maps texts to unit vectors of D
    dimensions."""

    def __init__(
        self,
        texts: Sequence[str],
        dimensions: int,
        analyzer: Callable[[str], list[str]] = analyze,
        min_df: int = 2,
    ):
        texts = validate.texts(texts, "texts")
        if not texts:
            raise ValueError(
                "cannot fit LSA on an empty collection: there are no chunks"
            )
        if not callable(analyzer):
            raise TypeError(
                f"analyzer must be a function from a str to its terms, got {analyzer!r}"
            )
        min_df = validate.k(min_df, "min_df")
        token_lists = [analyzer(text) for text in texts]
        validate.non_empty_corpus(token_lists, "the LSA collection")
        df = Counter(t for tokens in token_lists for t in set(tokens))
        self.analyzer = analyzer
        self.terms = sorted(t for t, n in df.items() if n >= min_df)
        if not self.terms:
            raise ValueError(
                f"no term occurs in at least {min_df} chunks; LSA has nothing to "
                "factorise"
            )
        self.columns = {t: j for j, t in enumerate(self.terms)}
        self.idf = smoothed_idf(np.array([df[t] for t in self.terms]), len(token_lists))
        self.matrix = self._tfidf_rows(token_lists)
        _, s, vt = np.linalg.svd(self.matrix, full_matrices=False)
        tolerance = s[0] * max(self.matrix.shape) * np.finfo(float).eps
        self.rank = int(np.sum(s > tolerance))
        if not 1 <= validate.whole(dimensions, "dimensions") <= self.rank:
            raise ValueError(
                "dimensions must be between 1 and the rank of the tf-idf matrix "
                f"({self.rank}), got {dimensions!r}"
            )
        self.dimensions = int(dimensions)
        self.all_singular_values = s
        self.singular_values = s[: self.dimensions]
        self.components = vt[
            : self.dimensions
        ]  # V_D^T: one right singular vector per row

    def _tfidf_rows(self, token_lists: Sequence[Sequence[str]]) -> np.ndarray:
        """Unit-length tf-idf rows (raw counts times smoothed idf) over the kept terms;
        empty rows stay zero."""
        rows = np.zeros((len(token_lists), len(self.terms)))
        for r, tokens in enumerate(token_lists):
            for t in tokens:
                j = self.columns.get(t)
                if j is not None:
                    rows[r, j] += 1.0
        rows *= self.idf
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        np.divide(rows, norms, out=rows, where=norms > 0)
        return rows

    def project(self, texts: Sequence[str]) -> np.ndarray:
        """x V_D for each text's tf-idf row x: the coordinates before normalisation
        (zero if no kept term)."""
        return (
            self._tfidf_rows([self.analyzer(t) for t in validate.texts(texts, "texts")])
            @ self.components.T
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of D dimensions; a text that shares no kept term with the
        collection is an error."""
        texts = validate.texts(texts, "texts")
        vectors = self.project(texts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        empty = np.flatnonzero(norms[:, 0] == 0)
        if empty.size:
            raise ValueError(
                f"text {empty[0]} ({texts[empty[0]]!r}) shares no term with the "
                "fitted vocabulary, "
                "so it has no direction in the LSA space"
            )
        return (vectors / norms).astype(np.float32)

    encode_queries = encode

    @property
    def term_vectors(self) -> np.ndarray:
        """V_D S_D: one row per kept term, in the order of ``terms``."""
        return self.components.T * self.singular_values

    def nearest_terms(self, term: str, n: int = 5) -> list[tuple[str, float]]:
        """The n terms whose embeddings have the largest cosine with ``term``'s (itself
        excluded)."""
        validate.text(term, "term")
        n = validate.count(n, "n")
        if term not in self.columns:
            raise ValueError(
                f"{term!r} is not in the LSA vocabulary (terms found in at least "
                "two chunks)"
            )
        vectors = self.term_vectors
        unit = vectors / np.maximum(
            np.linalg.norm(vectors, axis=1, keepdims=True), 1e-300
        )
        similarity = unit @ unit[self.columns[term]]
        order = np.lexsort((np.arange(len(self.terms)), -similarity))
        return [
            (self.terms[j], float(similarity[j]))
            for j in order
            if self.terms[j] != term
        ][:n]
