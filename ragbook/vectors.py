"""Vector search: cosine similarity, exact search and an inverted-file (IVF) index (chapter 7).

With unit vectors the cosine q.d / (|q| |d|) is the dot product q.d, so exact search is one matrix product
of the chunk matrix with the query and a partial sort: N r operations per query for N vectors of r
dimensions. An IVF index partitions the vectors into L lists by spherical k-means; a query is compared with
the L centroids, and only the vectors of the p closest lists are scanned:

    cost(L) = L + p N / L   dot products,  smallest at L = sqrt(p N), where it is 2 sqrt(p N).

Rankings follow the same rules as the sparse retrievers: score descending, ties by id ascending.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from . import validate
from .ranking import _candidates

__all__ = [
    "cosine",
    "unit_rows",
    "ExactIndex",
    "spherical_kmeans",
    "IVFIndex",
    "SearchResult",
    "ivf_cost",
    "optimal_lists",
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """a.b / (|a| |b|) for two non-zero vectors of the same dimension; raises otherwise."""
    a, b = validate.finite_array(a, "a"), validate.finite_array(b, "b")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"cosine takes two vectors, got arrays of shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise ValueError(f"vectors of different dimensions: {a.shape[0]} and {b.shape[0]}")
    denominator = np.linalg.norm(a) * np.linalg.norm(b)
    if denominator == 0:
        raise ValueError("cosine is undefined for a zero vector")
    return float(a @ b / denominator)


def unit_rows(vectors: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The rows of ``vectors`` divided by their Euclidean lengths; a zero row is an error, not a guess."""
    matrix = validate.finite_array(vectors, "vectors")
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors (one per row), got shape {matrix.shape}")
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"expected at least one vector of at least one dimension, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"row {zero[0]} is a zero vector, which has no direction; {zero.size} zero rows in all")
    return (matrix / norms[:, None]).astype(dtype)


@dataclass(frozen=True)
class SearchResult:
    """Top-k ids and scores for a batch of queries (rows), and the dot products each query cost."""

    ids: np.ndarray
    scores: np.ndarray
    dot_products: np.ndarray

    def ranking(self, row: int = 0) -> list[tuple[int, float]]:
        """The (id, score) pairs of one query, best first, without the padding of short results."""
        row = validate.whole(row, "row", minimum=0, maximum=self.ids.shape[0] - 1)
        keep = self.ids[row] >= 0
        return [(int(i), float(s)) for i, s in zip(self.ids[row][keep], self.scores[row][keep])]


def _queries(queries: np.ndarray, dimension: int) -> np.ndarray:
    q = validate.finite_array(queries, "queries", dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dimension:
        raise ValueError(f"queries must have {dimension} dimensions like the indexed vectors, got shape {np.shape(queries)}")
    return unit_rows(q)


_BLOCK = 64
_EPSILON32 = float(np.finfo(np.float32).eps)


def _slack(dimension: int) -> float:
    """A bound on how far two float32 computations of one dot product of unit vectors can disagree.

    Any order of summing r products errs by at most gamma_r = r u / (1 - r u) times |q| |v| (u = 2^-24,
    and |q| |v| is 1 up to the rounding of the unit rows); two computations disagree by twice that, and
    a candidate set must reach twice further still (see :func:`_top_rows`). Doubling u keeps it safe.
    """
    r = dimension + 2
    return 4 * r * _EPSILON32 / (1 - r * _EPSILON32)


def _exact_scores(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """q.v for paired rows, the same way for every pair: exact float64 products, summed along each row.

    The result depends only on the two vectors, never on where they sit in a batch or in the index, so
    identical vectors get identical scores and a query gets the same scores alone or in a batch.
    """
    products = queries.astype(np.float64) * vectors.astype(np.float64)
    return products.sum(axis=-1).astype(np.float32)


def _top_rows(scores: np.ndarray, ids: np.ndarray, k: int, queries: np.ndarray, vectors: np.ndarray,
              positions: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row of ``scores`` (candidates ``ids``), by score descending then id ascending.

    ``scores`` come from a matrix product, whose float32 results for one pair of vectors differ in the last
    bits with the shape of the batch and the position in it (BLAS kernels block differently), so identical
    vectors could get different scores and break the tie-by-id rule. They only select candidates: every
    entry within twice the possible disagreement (:func:`_slack`) of each row's k-th score, which is a
    superset of the true top k. The candidates are then rescored by :func:`_exact_scores` (column j of
    ``scores`` is row ``positions[j]`` of ``vectors``, or row j without ``positions``) and sorted.

    A full sort of each row is wasteful when k is small. Instead, split the row into blocks of 64 and take
    each block's maximum: the k-th largest block maximum is a score that at least k entries reach, so every
    entry of the top k (ties at the k-th included) is at or above it. Short rows are partitioned outright.
    """
    m, n = scores.shape
    take = min(k, n)
    out_ids = np.full((m, k), -1, dtype=np.int64)
    out_scores = np.full((m, k), -np.inf, dtype=np.float32)
    if take == 0 or m == 0:
        return out_ids, out_scores
    slack = _slack(queries.shape[1])
    blocks = n // _BLOCK
    if blocks >= 4 * take:
        full = blocks * _BLOCK
        maxima = scores[:, :full].reshape(m, blocks, _BLOCK).max(axis=2)
        limit = np.partition(maxima, blocks - take, axis=1)[:, blocks - take].astype(np.float64) - slack
        # only the blocks whose maximum reaches the limit hold candidates, and the entries after the last block
        block_rows, block_numbers = np.nonzero(maxima >= limit[:, None])
        rows = np.repeat(block_rows, _BLOCK)
        columns = (block_numbers[:, None] * _BLOCK + np.arange(_BLOCK)).ravel()
        reach = scores[rows, columns] >= limit[rows]
        tail_rows, tail_columns = np.nonzero(scores[:, full:] >= limit[:, None])
        rows = np.concatenate([rows[reach], tail_rows])
        columns = np.concatenate([columns[reach], tail_columns + full])
    else:
        kth = np.partition(scores, n - take, axis=1)[:, n - take] if take < n else np.full(m, -np.inf)
        rows, columns = np.nonzero(scores >= (kth.astype(np.float64) - slack)[:, None])
    exact = _exact_scores(queries[rows], vectors[columns if positions is None else positions[columns]])
    candidate_ids = ids[columns]
    order = np.lexsort((candidate_ids, -exact, rows))
    rows, candidate_ids, exact = rows[order], candidate_ids[order], exact[order]
    starts = np.searchsorted(rows, np.arange(m))
    rank = np.arange(rows.size) - starts[rows]
    keep = rank < take
    out_ids[rows[keep], rank[keep]] = candidate_ids[keep]
    out_scores[rows[keep], rank[keep]] = exact[keep]
    return out_ids, out_scores


class ExactIndex:
    """Exact cosine search: unit vectors, one matrix product and a partial sort per batch of queries."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = unit_rows(vectors)
        self.n, self.dimension = self.vectors.shape

    def search(self, queries: np.ndarray, k: int = 10) -> SearchResult:
        """The k most similar vectors for every query row (k beyond N returns all N, padded with id -1)."""
        k = validate.k(k)
        q = _queries(queries, self.dimension)
        scores = q @ self.vectors.T
        ids, best = _top_rows(scores, np.arange(self.n), k, q, self.vectors)
        return SearchResult(ids, best, np.full(q.shape[0], self.n, dtype=np.int64))

    def search_one(self, query: np.ndarray, k: int = 10, allowed: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """One query's top k as (id, score) pairs; ``allowed`` restricts the candidates before ranking.

        The ids and scores are those of :meth:`search` for the same query, whatever the batch.
        """
        k = validate.k(k)
        q = _queries(query, self.dimension)
        if q.shape[0] != 1:
            raise ValueError(f"search_one takes one query vector, got {q.shape[0]}; use search for a batch")
        if allowed is None:
            candidates = np.arange(self.n)
            scores = self.vectors @ q[0]
        else:
            candidates = _candidates(self.n, allowed)
            scores = (self.vectors @ q[0])[candidates]
        ids, best = _top_rows(scores[None, :], candidates, k, q, self.vectors, positions=candidates)
        return SearchResult(ids, best, np.array([candidates.size])).ranking(0)

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes


def spherical_kmeans(vectors: np.ndarray, clusters: int, iterations: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means on unit vectors: maximise the sum of each vector's cosine with its centroid.

    Centroids start at distinct random vectors (seeded). Each iteration assigns every vector to the centroid
    with the largest dot product and resets each centroid to the normalised mean of its vectors. A cluster
    left empty is moved to the vector worst served by its current centroid, so all ``clusters`` lists stay
    in use. Returns (centroids, assignment).
    """
    x = unit_rows(vectors)
    n = x.shape[0]
    clusters = validate.whole(clusters, "clusters")
    if not 1 <= clusters <= n:
        raise ValueError(f"the number of clusters must be between 1 and the number of vectors ({n}), got {clusters!r}")
    iterations = validate.k(iterations, "iterations")
    seed = validate.count(seed, "seed")
    rng = np.random.default_rng(seed)
    centroids = x[rng.choice(n, size=clusters, replace=False)].copy()
    assignment = np.full(n, -1)
    for _ in range(iterations):
        similarity = x @ centroids.T
        new = np.argmax(similarity, axis=1)
        best = similarity[np.arange(n), new]
        sizes = np.bincount(new, minlength=clusters)
        sums = np.zeros(centroids.shape, dtype=np.float64)
        order = np.argsort(new, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        filled = sizes > 0
        sums[filled] = np.add.reduceat(x[order], starts[filled], axis=0)
        taken: set[int] = set()
        for empty in np.flatnonzero(sizes == 0):
            order = np.argsort(best, kind="stable")
            donor = next(int(i) for i in order if int(i) not in taken and sizes[new[i]] > 1)
            taken.add(donor)
            sizes[new[donor]] -= 1
            sums[new[donor]] -= x[donor]
            new[donor] = empty
            sums[empty] = x[donor]
            sizes[empty] = 1
        centroids = unit_rows(sums)
        if np.array_equal(new, assignment):
            break
        assignment = new
    return centroids, assignment


def ivf_cost(n, lists, probes):
    """Expected dot products per query: L centroids plus p lists of N/L vectors each, L + p N / L.

    Each argument may be a number or an array (for a whole curve at once).
    """
    n = validate.at_least_one(n, "the number of vectors")
    lists = validate.at_least_one(lists, "lists")
    probes = validate.at_least_one(probes, "probes")
    if np.any(probes > lists):
        raise ValueError("probes cannot exceed the number of lists")
    cost = lists + probes * n / lists
    return float(cost) if cost.ndim == 0 else cost


def optimal_lists(n, probes):
    """The L minimising L + p N / L: setting the derivative 1 - p N / L^2 to zero gives L = sqrt(p N)."""
    best = np.sqrt(validate.at_least_one(probes, "probes") * validate.at_least_one(n, "the number of vectors"))
    return float(best) if best.ndim == 0 else best


class IVFIndex:
    """An inverted-file index: spherical k-means lists, and a search that scans only the p nearest lists."""

    def __init__(self, vectors: np.ndarray, lists: int, iterations: int = 20, seed: int = 0):
        x = unit_rows(vectors)
        self.n, self.dimension = x.shape
        lists = validate.whole(lists, "lists")
        self.centroids, assignment = spherical_kmeans(x, lists, iterations, seed)
        self.lists = lists
        # store the vectors list by list, so that a list is a contiguous slice
        self.order = np.argsort(assignment, kind="stable")
        self.vectors = x[self.order]
        self.offsets = np.zeros(lists + 1, dtype=np.int64)
        np.cumsum(np.bincount(assignment, minlength=lists), out=self.offsets[1:])

    @property
    def list_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def search(self, queries: np.ndarray, k: int = 10, probes: int = 1) -> SearchResult:
        """The top k among the vectors of each query's ``probes`` nearest lists."""
        k = validate.k(k)
        probes = validate.whole(probes, "probes")
        if not 1 <= probes <= self.lists:
            raise ValueError(f"probes must be between 1 and the number of lists ({self.lists}), got {probes!r}")
        q = _queries(queries, self.dimension)
        m = q.shape[0]
        nearest = np.argpartition(-(q @ self.centroids.T), probes - 1, axis=1)[:, :probes]
        # Work list by list rather than query by query: every query that probes list l is scored against it
        # in one matrix product, and keeps its k best from that list; then each query merges its p lists.
        pair_lists = nearest.ravel()
        pair_rows = np.repeat(np.arange(m), probes)
        pair_slots = np.tile(np.arange(probes), m)
        by_list = np.argsort(pair_lists, kind="stable")
        starts = np.searchsorted(pair_lists[by_list], np.arange(self.lists + 1))
        candidate_ids = np.full((m, probes, k), -1, dtype=np.int64)
        candidate_scores = np.full((m, probes, k), -np.inf, dtype=np.float32)
        for l in np.flatnonzero(np.diff(starts)):
            pairs = by_list[starts[l] : starts[l + 1]]
            a, b = self.offsets[l], self.offsets[l + 1]
            if a == b:
                continue
            rows = pair_rows[pairs]
            best_ids, best_scores = _top_rows(q[rows] @ self.vectors[a:b].T, self.order[a:b], k, q[rows], self.vectors[a:b])
            candidate_ids[rows, pair_slots[pairs]] = best_ids
            candidate_scores[rows, pair_slots[pairs]] = best_scores
        flat_ids = candidate_ids.reshape(m, probes * k)
        flat_scores = candidate_scores.reshape(m, probes * k)
        # padding (id -1, score -inf) sorts last; real ids are distinct across lists
        order = np.lexsort((np.where(flat_ids < 0, np.iinfo(np.int64).max, flat_ids), -flat_scores), axis=-1)[:, :k]
        ids = np.take_along_axis(flat_ids, order, axis=1)
        scores = np.take_along_axis(flat_scores, order, axis=1)
        cost = self.lists + self.list_sizes[nearest].sum(axis=1)
        return SearchResult(ids, scores, cost)

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes + self.centroids.nbytes + self.order.nbytes + self.offsets.nbytes
