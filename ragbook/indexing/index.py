"""The inverted index that the sparse retrievers share (chapter 5).

For every term t of the vocabulary the index keeps its *postings*: the chunks that
contain t and how often. They are stored as three NumPy arrays in compressed sparse
form, the layout of a term-by-chunk matrix: the postings of term ``i`` are
``doc_ids[indptr[i]:indptr[i + 1]]`` (ascending chunk ids) with counts
``counts[indptr[i]:indptr[i + 1]]``. The document frequency n_t is the length of that
slice, and the chunk lengths |d| (in terms) sit in ``lengths``.

The index is built from the chunks alone. Queries are analysed with the same analyzer
but never change the vocabulary or the statistics: a query term the chunks do not
contain simply has no postings.
"""

from __future__ import annotations

from itertools import chain
from typing import Callable, Iterable, Sequence

import numpy as np

from .. import validate
from .text import analyze

__all__ = ["InvertedIndex"]


class InvertedIndex:
    """Postings of every term over N chunks, built from the chunks' token lists."""

    def __init__(
        self,
        token_lists: Sequence[Sequence[str]],
        analyzer: Callable[[str], list[str]] = analyze,
    ):
        """Index ``token_lists`` (one list of terms per chunk; use :meth:`from_texts` to
        analyse texts).

        ``analyzer`` is kept to turn query strings into terms the same way the chunks
        were analysed.
        """
        token_lists = validate.token_lists(token_lists)
        validate.non_empty_corpus(token_lists)
        if not callable(analyzer):
            raise TypeError(
                f"analyzer must be a function from a str to its terms, got {analyzer!r}"
            )
        self.analyzer = analyzer
        lengths = np.fromiter(
            map(len, token_lists), dtype=np.int64, count=len(token_lists)
        )
        # Term ids in order of first appearance, then one id per token, without a Python
        # list in between.
        vocabulary = {
            t: i for i, t in enumerate(dict.fromkeys(chain.from_iterable(token_lists)))
        }
        for term in vocabulary:
            if not isinstance(term, str):
                raise TypeError(
                    "token_lists must hold lists of str terms, got the term "
                    f"{term!r} of type {type(term).__name__}"
                )
        terms = np.fromiter(
            map(vocabulary.__getitem__, chain.from_iterable(token_lists)),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        docs = np.repeat(np.arange(len(token_lists), dtype=np.int64), lengths)
        # One (term, chunk) key per token; unique keys sorted by term then chunk give
        # the postings in order.
        terms *= len(token_lists)
        terms += docs
        del docs
        keys, counts = np.unique(terms, return_counts=True)
        del terms
        posting_terms = keys // len(token_lists)
        self.doc_ids = (keys % len(token_lists)).astype(np.int32)
        self.counts = counts.astype(
            np.min_scalar_type(int(counts.max())) if counts.size else np.uint8
        )
        self.indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(
            np.bincount(posting_terms, minlength=len(vocabulary)), out=self.indptr[1:]
        )
        self.vocabulary = vocabulary
        self.lengths = lengths

    @classmethod
    def from_texts(
        cls, texts: Iterable[str], analyzer: Callable[[str], list[str]] = analyze
    ) -> "InvertedIndex":
        """Analyse every text with ``analyzer`` and index the terms."""
        if not callable(analyzer):
            raise TypeError(
                f"analyzer must be a function from a str to its terms, got {analyzer!r}"
            )
        return cls(
            [analyzer(text) for text in validate.texts(texts, "texts")], analyzer
        )

    @property
    def n_chunks(self) -> int:
        """N, the number of indexed chunks."""
        return int(self.lengths.shape[0])

    @property
    def document_frequency(self) -> np.ndarray:
        """n_t for every term id: the number of chunks that contain the term."""
        return np.diff(self.indptr)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, counts) of ``term``; empty arrays for a term no chunk
        contains."""
        i = self.vocabulary.get(validate.text(term, "term"))
        if i is None:
            return self.doc_ids[:0], self.counts[:0]
        return self.doc_ids[self.indptr[i] : self.indptr[i + 1]], self.counts[
            self.indptr[i] : self.indptr[i + 1]
        ]

    def query_terms(self, query: str) -> list[str]:
        """The analysed terms of ``query``; a query with no terms at all is refused."""
        query = validate.query(query, terms=False)
        terms = self.analyzer(query)
        if not terms:
            raise ValueError(
                f"the query {query!r} has no terms after analysis (only stopwords "
                "or punctuation)"
            )
        return terms

    @property
    def nbytes(self) -> int:
        """Bytes held by the postings and lengths arrays (not counting the vocabulary
        dictionary)."""
        return (
            self.doc_ids.nbytes
            + self.counts.nbytes
            + self.indptr.nbytes
            + self.lengths.nbytes
        )
