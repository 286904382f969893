"""Vector search: cosine similarity and exact search (chapter 7); the approximate
inverted-file index is :mod:`ragbook.retrieval.ivf`.

With unit vectors the cosine q.d / (|q| |d|) is the dot product q.d, so exact search is
one matrix product of the chunk matrix with the query and a partial sort: N r operations
per query for N vectors of r dimensions. Rankings follow the same rules as the sparse
retrievers: score descending, ties by id ascending.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from .. import validate
from .ranking import allowed_positions
from .threads import in_parts, parts
from .vector_kernels import select_rows, unit_rows_into

__all__ = [
    "cosine",
    "unit_rows",
    "ExactIndex",
    "SearchResult",
    # shared with the inverted-file index (ragbook.retrieval.ivf)
    "unit_matrix",
    "query_rows",
    "one_blas_thread",
    "dot_slack",
    "SHARED_BATCH",
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """a.b / (|a| |b|) for two non-zero vectors of the same dimension; raises
    otherwise."""
    a, b = validate.finite_array(a, "a"), validate.finite_array(b, "b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(
            f"cosine takes two vectors, got arrays of shapes {a.shape} and {b.shape}"
        )
    if a.shape != b.shape:
        raise ValueError(
            f"vectors of different dimensions: {a.shape[0]} and {b.shape[0]}"
        )
    denominator = np.linalg.norm(a) * np.linalg.norm(b)
    if denominator == 0:
        raise ValueError("cosine is undefined for a zero vector")
    return float(a @ b / denominator)


def unit_rows(vectors: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The rows of ``vectors`` divided by their Euclidean lengths; a zero row is an
    error, not a guess."""
    matrix = validate.finite_array(vectors, "vectors")
    if matrix.ndim != 2:
        raise ValueError(
            f"expected a 2-D array of vectors (one per row), got shape {matrix.shape}"
        )
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(
            "expected at least one vector of at least one dimension, got shape "
            f"{matrix.shape}"
        )
    return unit_matrix(matrix, dtype)


def unit_matrix(
    matrix: np.ndarray, dtype=np.float32, name: str = "vectors"
) -> np.ndarray:
    """The rows of a 2-D float matrix (called ``name`` in errors) divided by their
    lengths (the work of :func:`unit_rows`, compiled:
    :func:`ragbook.retrieval.vector_kernels.unit_rows_into`)."""
    out = np.empty(matrix.shape, dtype=dtype)
    bad = unit_rows_into(matrix, out)
    if bad >= 0:
        validate.finite_array(matrix, name)  # names a nan or inf entry
        row = np.asarray(matrix[bad], dtype=np.float64)
        if not row.any():
            zero = np.flatnonzero(~np.asarray(matrix).any(axis=1))
            raise ValueError(
                f"row {zero[0]} is a zero vector, which has no direction; {zero.size} "
                "zero rows in all"
            )
        raise ValueError(
            f"row {bad} of {name} is too long to measure in float64: entries as "
            f"large as {np.abs(row).max():.3g}"
        )
    return out


@dataclass(frozen=True)
class SearchResult:
    """Top-k ids and scores for a batch of queries (rows), and the dot products each
    query cost."""

    ids: np.ndarray
    scores: np.ndarray
    dot_products: np.ndarray

    def ranking(self, row: int = 0) -> list[tuple[int, float]]:
        """The (id, score) pairs of one query, best first, without the padding of short
        results."""
        row = validate.whole(row, "row", minimum=0, maximum=self.ids.shape[0] - 1)
        keep = self.ids[row] >= 0
        return [
            (int(i), float(s))
            for i, s in zip(self.ids[row][keep], self.scores[row][keep])
        ]


def query_rows(queries: np.ndarray, dimension: int) -> np.ndarray:
    """Query vectors as unit float32 rows; a single vector is one row.

    Every search starts here, so a float array is taken as it is (its entries are
    checked by :func:`unit_matrix`); anything else goes through
    ``validate.finite_array``, whose errors say what was wrong.
    """
    if isinstance(queries, np.ndarray) and queries.dtype.kind == "f":
        q = queries.astype(np.float32, copy=False)
    else:
        q = validate.finite_array(queries, "queries", dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dimension:
        raise ValueError(
            f"queries must have {dimension} dimensions like the indexed vectors, "
            f"got shape {np.shape(queries)}"
        )
    return unit_matrix(q, name="queries")


_BLOCKS: list[ThreadpoolController] = []


def one_blas_thread():
    """A context in which NumPy's BLAS uses one thread (for the whole process).

    Above a size threshold the BLAS splits even a small product over its threads, and
    on a machine busy with other work every product then waits for a second thread to
    be scheduled (the old list-by-list IVF search took 20 to 70 times longer so). One
    thread per small product is steady; exact search and k-means use it. It also keeps
    the BLAS threads from spinning beside the threads that run the other parts of a
    batch, or the compiled loops' threads, which made exact search on the LSA vectors
    four times slower.
    """
    if not _BLOCKS:
        _BLOCKS.append(ThreadpoolController())
    return _BLOCKS[0].limit(limits=1, user_api="blas")


_EPSILON32 = float(np.finfo(np.float32).eps)


def dot_slack(dimension: int) -> float:
    """A bound on how far two float32 computations of one dot product of unit vectors
    can disagree (a matrix product's and
    :func:`ragbook.retrieval.vector_kernels.dot`'s).

    Any order of summing r products errs by at most gamma_r = r u / (1 - r u) times |q|
    |v| (u = 2^-24, and |q| |v| is 1 up to the rounding of the unit rows); two
    computations disagree by twice that, and a candidate set must reach twice further
    still (see :func:`_top_rows`). Doubling u keeps it safe. The last term covers
    rounding a threshold (a score minus this slack, at most 2 in size) to float32.
    """
    r = dimension + 2
    return 4 * r * _EPSILON32 / (1 - r * _EPSILON32) + 2 * _EPSILON32


# the fewest queries that the kernels share among the CPU's threads; a few queries would
# wait longer for the threads than they save
SHARED_BATCH = 32


def _top_rows(
    proposed: np.ndarray,
    k: int,
    queries: np.ndarray,
    vectors: np.ndarray,
    positions: np.ndarray | None = None,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row of ``proposed`` (column j is row ``positions[j]`` of
    ``vectors``, or row j without ``positions``; a row's id is its number), by score
    descending then id ascending, padded with id -1: (ids, scores), written into
    ``out`` when it is given.

    ``proposed`` comes from a matrix product, whose float32 results for one pair of
    vectors differ in the last bits with the shape of the batch and the position in it
    (BLAS kernels block differently), so identical vectors could get different scores
    and break the tie-by-id rule. They only select candidates: every entry within the
    slack (:func:`dot_slack`) of each row's k-th score, a superset of the true top k.
    The candidates are scored again the one way that depends only on the pair, and
    ranked, in one compiled loop (``select_rows``).
    """
    m = proposed.shape[0]
    out_ids, out_scores = out or (
        np.empty((m, k), dtype=np.int64),
        np.empty((m, k), dtype=np.float32),
    )
    ids = np.arange(vectors.shape[0])
    if positions is None:
        positions = ids
    slack = dot_slack(queries.shape[1])
    select_rows(proposed, positions, ids, queries, vectors, slack, out_ids, out_scores)
    return out_ids, out_scores


class ExactIndex:
    """Exact cosine search: unit vectors, one matrix product and a partial sort per
    batch of queries."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = unit_rows(vectors)
        self.n, self.dimension = self.vectors.shape

    def search_batch(self, queries: np.ndarray, k: int = 10) -> SearchResult:
        """Search a matrix of query vectors, one query per row (a single vector counts
        as one row).

        Returns a :class:`SearchResult` of arrays: row i holds query i's k most similar
        vectors (ids and scores, best first, ties by id; k beyond N returns all N,
        padded with id -1) and its dot products.
        """
        k = validate.k(k)
        q = query_rows(queries, self.dimension)
        m = q.shape[0]
        ids = np.empty((m, k), dtype=np.int64)
        best = np.empty((m, k), dtype=np.float32)

        def rows(a: int, b: int) -> None:
            # queries a to b - 1, straight into the result's rows
            proposed = q[a:b] @ self.vectors.T
            _top_rows(proposed, k, q[a:b], self.vectors, out=(ids[a:b], best[a:b]))

        # the batch goes in parts, one per CPU thread, each product on one BLAS thread
        # (see one_blas_thread); a batch in one part may give a large product them all
        large = parts(m, SHARED_BATCH) == 1 and m * self.n >= 2**20
        with contextlib.nullcontext() if large else one_blas_thread():
            in_parts(rows, m, SHARED_BATCH)
        return SearchResult(ids, best, np.full(m, self.n, dtype=np.int64))

    def search_one(
        self, query: np.ndarray, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        """One query's top k as (id, score) pairs; ``allowed`` restricts the candidates
        before ranking.

        The ids and scores are those of :meth:`search_batch` for the same query,
        whatever the batch.
        """
        k = validate.k(k)
        q = query_rows(query, self.dimension)
        if q.shape[0] != 1:
            raise ValueError(
                f"search_one takes one query vector, got {q.shape[0]}; use "
                "search_batch for a batch"
            )
        if allowed is None:
            candidates = np.arange(self.n)
            scores = self.vectors @ q[0]
        else:
            candidates = allowed_positions(self.n, allowed)
            scores = (self.vectors @ q[0])[candidates]
        ids, best = _top_rows(scores[None, :], k, q, self.vectors, positions=candidates)
        return SearchResult(ids, best, np.array([candidates.size])).ranking(0)

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes
