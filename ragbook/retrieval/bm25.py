"""BM25, the probabilistic relevance model's ranking function (chapter 5).

    score(q, d) = sum over distinct query terms t in d of idf(t) * f (k1 + 1) / (f + K),
    K = k1 (1 - b + b |d| / avg|d|),
    idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)).

f is the count of t in chunk d, n_t the number of chunks containing t, N the number of
chunks. The idf is Lucene's: the Robertson/Sparck Jones weight ln((N - n + 0.5)/(n +
0.5)) with 1 added inside the logarithm, which keeps it positive for terms in more than
half the chunks (:func:`rsj_idf` is the classic weight). The saturating factor is 0
without the term and approaches k1 + 1 as f grows; K grows with the chunk's length
relative to the average, so the same count is worth less in a long chunk.

Lucene (and bm25s's "lucene" method) leave out the constant factor k1 + 1, which scales
every score alike and so changes no ranking; scores here are theirs times k1 + 1.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Sequence

import numpy as np

from .. import validate
from ..indexing.index import InvertedIndex
from .pruning import prune_pays, slack, top_k_batch
from .ranking import allowed_positions, top_k_arrays
from .threads import in_parts
from .contract import Hit, as_hits
from ..indexing.text import analyze

__all__ = ["BM25", "lucene_idf", "rsj_idf"]

# top_k_batch's "every chunk is allowed", and its modes (the last: "leave the row")
_NO_FILTER = np.zeros(0, dtype=np.uint8)
_NO_CANDIDATES = np.zeros(0, dtype=np.int64)
_AUTOMATIC, _MAXSCORE, _EVERY, _LEFT_OUT = 0, 1, 2, 3
# the fewest queries a thread takes: fewer wait longer for the thread than they save
SHARED_BATCH = 16
_LOCAL = threading.local()


def _scratch(n: int) -> tuple[np.ndarray, np.ndarray]:
    """This thread's scratch arrays for a collection of n chunks (scores, zero between
    calls, and ids), made on first use and kept for the last few sizes."""
    kept = _LOCAL.__dict__.setdefault("scratch", {})
    if n not in kept:
        while len(kept) >= 4:
            kept.pop(next(iter(kept)))
        kept[n] = (
            np.zeros(n, dtype=np.float32),
            np.zeros(n + 1, dtype=np.int32),  # one more: written before counted
        )
    return kept[n]


def lucene_idf(n: np.ndarray | int, N: int) -> np.ndarray:
    """ln(1 + (N - n + 0.5) / (n + 0.5)): positive for every document frequency n."""
    n, N = validate.document_frequencies(n, N)
    return np.log1p((N - n + 0.5) / (n + 0.5))


def rsj_idf(n: np.ndarray | int, N: int) -> np.ndarray:
    """ln((N - n + 0.5) / (n + 0.5)), the classic Robertson/Sparck Jones weight:
    negative when n > N/2."""
    n, N = validate.document_frequencies(n, N)
    return np.log((N - n + 0.5) / (n + 0.5))


class BM25:
    """BM25 over an :class:`~ragbook.indexing.index.InvertedIndex`, with k1 = 1.5 and b
    = 0.75 by default.

    Every posting's contribution idf * f (k1 + 1) / (f + K) is computed once, at
    construction, and stored as float32 beside the postings; a query adds up the slices
    of its terms. Each term's largest contribution, its upper bound, is kept too:
    :meth:`search` can use the bounds to skip chunks that cannot enter the top k
    (MaxScore, :mod:`ragbook.retrieval.pruning`), with the same hits as scoring every
    posting; by default it does where that is expected to be faster (:meth:`prunes`).
    :meth:`search_batch` ranks many queries in one compiled call and returns arrays.
    """

    def __init__(
        self,
        index: InvertedIndex,
        k1: float = 1.5,
        b: float = 0.75,
        idf: Callable[[np.ndarray, int], np.ndarray] = lucene_idf,
        count_repeats: bool = False,
    ):
        """``count_repeats=True`` adds a term repeated in the query once per occurrence,
        as Lucene's boolean queries and bm25s do; by default the sum runs over the
        query's distinct terms, as in the formula."""
        if not isinstance(index, InvertedIndex):
            raise TypeError(
                "index must be an InvertedIndex (use BM25.from_texts for texts), "
                f"got {type(index).__name__}"
            )
        k1, b = (
            validate.real(k1, "k1", minimum=0),
            validate.real(b, "b", minimum=0, maximum=1),
        )
        if not callable(idf):
            raise TypeError(
                f"idf must be a function of (document frequencies, N), got {idf!r}"
            )
        self.k1, self.b = k1, b
        self.count_repeats = validate.flag(count_repeats, "count_repeats")
        self.analyzer = index.analyzer
        self.vocabulary, self.doc_ids = index.vocabulary, index.doc_ids
        # The term offsets as int32 while the postings fit: 4 bytes a term, the
        # space of the upper bounds that MaxScore reads (below).
        fits = index.indptr[-1] <= np.iinfo(np.int32).max
        self.indptr = index.indptr.astype(np.int32) if fits else index.indptr
        self.n_chunks = index.n_chunks
        lengths = index.lengths.astype(np.float64)
        self.average_length = float(lengths.mean())
        self.idf = idf(index.document_frequency, self.n_chunks)
        norm = (
            k1 * (1 - b + b * lengths / self.average_length)
            if self.average_length > 0
            else np.full_like(lengths, k1)
        )
        f = index.counts.astype(np.float64)
        per_posting_idf = np.repeat(self.idf, index.document_frequency)
        self.weights = (
            per_posting_idf * f * (k1 + 1) / (f + norm[index.doc_ids])
        ).astype(np.float32)
        # Each term's largest contribution (the index has no term without postings),
        # and whether every contribution is positive: pruning needs both.
        self.upper_bounds = (
            np.maximum.reduceat(self.weights, self.indptr[:-1])
            if self.weights.size
            else np.zeros(0, dtype=np.float32)
        )
        self._all_positive = bool(np.all(self.weights > 0))

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        analyzer: Callable[[str], list[str]] = analyze,
        **parameters,
    ) -> "BM25":
        """Analyse and index ``texts``, then build BM25 over them."""
        return cls(InvertedIndex.from_texts(texts, analyzer), **parameters)

    @classmethod
    def from_tokens(
        cls,
        token_lists: Sequence[Sequence[str]],
        analyzer: Callable[[str], list[str]] = analyze,
        **parameters,
    ) -> "BM25":
        """Build BM25 over chunks that are already lists of terms."""
        return cls(InvertedIndex(token_lists, analyzer), **parameters)

    def term_ids(self, query: str | Sequence[str]) -> list[int]:
        """Ids of the known terms of a query string (analysed) or term list, in
        first-seen order: distinct unless the retriever was built with
        ``count_repeats``."""
        query = validate.query(query)
        if isinstance(query, str):
            terms = self.analyzer(query)
            if not terms:
                raise ValueError(
                    f"the query {query!r} has no terms after analysis (only "
                    "stopwords or punctuation)"
                )
        else:
            terms = query
        ids = (
            self.vocabulary.get(t)
            for t in (terms if self.count_repeats else dict.fromkeys(terms))
        )
        return [i for i in ids if i is not None]

    def scores(self, query: str | Sequence[str]) -> np.ndarray:
        """The BM25 score of every chunk for ``query``; 0 for chunks sharing no term
        with it."""
        scores = np.zeros(self.n_chunks, dtype=np.float32)
        for i in self.term_ids(query):
            start, end = self.indptr[i], self.indptr[i + 1]
            scores[self.doc_ids[start:end]] += self.weights[start:end]
        return scores

    def search(
        self,
        query: str | Sequence[str],
        k: int = 10,
        allowed: Iterable[int] | None = None,
        pruning: bool | None = None,
    ) -> list[Hit]:
        """The top k chunks as hits, ties by chunk id; ``allowed`` filters before
        ranking (see :mod:`ragbook.retrieval.contract`).

        ``pruning=True`` skips the chunks that cannot enter the top k (MaxScore,
        :mod:`ragbook.retrieval.pruning`); ``pruning=False`` scores every posting of
        every query term, then selects. Both give the same hits, to the bit. Pruning
        pays for a small k; when k is near the number of chunks that match, it reads
        almost every posting and its bookkeeping per chunk costs more than scoring
        them all. By default (``None``) the index chooses for each query from k and
        its terms' postings (:func:`~ragbook.retrieval.pruning.prune_pays`)."""
        ids, values = self.search_arrays(query, k, allowed, pruning)
        return as_hits(zip(ids.tolist(), values.tolist()))

    def search_arrays(
        self,
        query: str | Sequence[str],
        k: int = 10,
        allowed: Iterable[int] | None = None,
        pruning: bool | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`search` as two arrays (chunk ids, scores)."""
        ids, values = self.search_batch([query], k, allowed, pruning)
        return ids[0], values[0]

    def search_batch(
        self,
        queries: Sequence[str | Sequence[str]],
        k: int = 10,
        allowed: Iterable[int] | None = None,
        pruning: bool | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top k of each query of a batch as two arrays, (chunk ids, int64; scores,
        float32), one row per query: row i holds what ``search(queries[i], k,
        allowed, pruning)`` returns, as arrays. Every row has min(k, candidates)
        entries; ``allowed`` applies to every query.

        The batch is ranked in one compiled call (:func:`~ragbook.retrieval.pruning.
        top_k_batch`), cut into parts that the CPU's threads take side by side when
        it is long enough. Queries whose terms have a contribution that is not
        positive are ranked here, by :meth:`scores`."""
        if isinstance(queries, str) or not isinstance(queries, Sequence):
            raise TypeError(
                "queries must be a sequence (list or tuple) of queries, each a str or "
                f"a list of terms, got {type(queries).__name__}; for one query use "
                "search"
            )
        k = validate.k(k)
        if pruning is not None and not isinstance(pruning, (bool, np.bool_)):
            raise TypeError(
                "pruning must be True, False or None (the index chooses), got "
                f"{pruning!r}"
            )
        mode = _AUTOMATIC if pruning is None else _MAXSCORE if pruning else _EVERY
        term_lists = [self.term_ids(q) for q in queries]
        candidates = (
            None if allowed is None else allowed_positions(self.n_chunks, allowed)
        )
        size = min(k, self.n_chunks if candidates is None else candidates.size)
        m = len(term_lists)
        keys = np.empty((m, size), dtype=np.uint64)
        read = np.full(m, -1, dtype=np.int64)
        if m and size:
            self._rank(term_lists, mode, candidates, keys, read)
        # a key is (~score bits << 32) | id: sorted, best first and ties by id
        keys.sort(axis=1)
        ids = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
        values = (np.uint64(0xFFFFFFFF) - (keys >> np.uint64(32))).astype(np.uint32)
        values = values.view(np.float32)
        for q in np.flatnonzero(read < 0).tolist():
            ids[q], values[q] = top_k_arrays(self._scores(term_lists[q]), k, candidates)
        return ids, values

    def _rank(self, term_lists, mode, candidates, keys, read):
        """Rank the batch by :func:`top_k_batch`, in parts on the CPU's threads; rows
        whose terms have a contribution that is not positive are left at read -1."""
        m = len(term_lists)
        starts = np.zeros(m + 1, dtype=np.int64)
        starts[1:] = np.cumsum([len(t) for t in term_lists])
        terms = np.fromiter(
            (t for ts in term_lists for t in ts), dtype=np.int64, count=starts[-1]
        )
        modes = np.full(m, mode, dtype=np.uint8)
        if not self._all_positive:
            for q, ts in enumerate(term_lists):
                if not self._positive(ts):
                    modes[q] = _LEFT_OUT
        if candidates is None:
            filters = (_NO_FILTER, _NO_CANDIDATES)
        else:
            flags = np.zeros(self.n_chunks, dtype=np.uint8)
            flags[candidates] = 1
            filters = (flags, candidates.astype(np.int64))
        index = (self.doc_ids, self.weights, self.indptr, self.upper_bounds)

        def work(first: int, last: int) -> None:
            scratch = _scratch(self.n_chunks)
            top_k_batch(
                index,
                terms,
                starts,
                modes,
                filters,
                first,
                last,
                scratch,
                keys,
                read,
            )

        in_parts(work, m, SHARED_BATCH)

    def _scores(self, terms: list[int]) -> np.ndarray:
        """:meth:`scores` for term ids."""
        scores = np.zeros(self.n_chunks, dtype=np.float32)
        for i in terms:
            start, end = self.indptr[i], self.indptr[i + 1]
            scores[self.doc_ids[start:end]] += self.weights[start:end]
        return scores

    def prunes(
        self,
        query: str | Sequence[str],
        k: int = 10,
        allowed: Iterable[int] | None = None,
    ) -> bool:
        """Whether the default search (``pruning=None``) ranks ``query`` by MaxScore
        rather than by scoring every posting:
        :func:`~ragbook.retrieval.pruning.prune_pays` on k (at most the candidates)
        and its terms' postings, where every contribution of theirs is positive and
        their bounds add up within float32."""
        terms = self.term_ids(query)
        size = min(
            validate.k(k),
            self.n_chunks
            if allowed is None
            else allowed_positions(self.n_chunks, allowed).size,
        )
        lengths = [int(self.indptr[i + 1] - self.indptr[i]) for i in terms]
        bound = float(np.sum(self.upper_bounds[terms], dtype=np.float64))
        return (
            bool(terms)
            and self._positive(terms)
            and bound * slack(len(terms)) <= np.finfo(np.float32).max
            and prune_pays(size, sum(lengths), max(lengths))
        )

    def postings_read(
        self,
        query: str | Sequence[str],
        k: int = 10,
        allowed: Iterable[int] | None = None,
    ) -> tuple[int, int]:
        """(postings MaxScore reads for the top k, postings exhaustive scoring reads):
        the second is the sum of the query terms' document frequencies. Where the
        bounds do not hold (a contribution that is not positive) MaxScore is not
        used, and the first is the second."""
        terms = self.term_ids(query)
        exhaustive = sum(int(self.indptr[i + 1] - self.indptr[i]) for i in terms)
        candidates = (
            None if allowed is None else allowed_positions(self.n_chunks, allowed)
        )
        size = min(
            validate.k(k), self.n_chunks if candidates is None else candidates.size
        )
        if size == 0:
            return 0, exhaustive
        read = np.full(1, -1, dtype=np.int64)
        keys = np.empty((1, size), dtype=np.uint64)
        self._rank([terms], _MAXSCORE, candidates, keys, read)
        return (exhaustive if read[0] < 0 else int(read[0])), exhaustive

    def _positive(self, terms: list[int]) -> bool:
        """Whether every contribution of the given terms' postings is positive."""
        return self._all_positive or all(
            np.all(self.weights[self.indptr[i] : self.indptr[i + 1]] > 0) for i in terms
        )

    def explain(self, query: str | Sequence[str], chunk_id: int) -> dict[str, float]:
        """Each query term's contribution to one chunk's score (0 for terms the chunk
        lacks)."""
        chunk_id = validate.whole(chunk_id, "chunk_id")
        if not 0 <= chunk_id < self.n_chunks:
            raise ValueError(
                f"chunk id {chunk_id} is outside the collection (0 to "
                f"{self.n_chunks - 1})"
            )
        query = validate.query(query)
        terms = self.analyzer(query) if isinstance(query, str) else query
        parts = {}
        for term in dict.fromkeys(terms):
            i = self.vocabulary.get(term)
            value = 0.0
            if i is not None:
                start, end = self.indptr[i], self.indptr[i + 1]
                hit = np.searchsorted(self.doc_ids[start:end], chunk_id)
                if hit < end - start and self.doc_ids[start + hit] == chunk_id:
                    value = float(self.weights[start + hit])
            parts[term] = value
        return parts

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays a query reads: postings, their weights, the term
        offsets and the terms' upper bounds."""
        return (
            self.doc_ids.nbytes
            + self.weights.nbytes
            + self.indptr.nbytes
            + self.upper_bounds.nbytes
        )
