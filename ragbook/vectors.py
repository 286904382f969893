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

from .ranking import check_k, top_k

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
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
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
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors (one per row), got shape {matrix.shape}")
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(f"expected at least one vector of at least one dimension, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("vectors must be finite (no nan or inf)")
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
        keep = self.ids[row] >= 0
        return [(int(i), float(s)) for i, s in zip(self.ids[row][keep], self.scores[row][keep])]


def _queries(queries: np.ndarray, dimension: int) -> np.ndarray:
    q = np.asarray(queries, dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dimension:
        raise ValueError(f"queries must have {dimension} dimensions like the indexed vectors, got shape {np.shape(queries)}")
    return unit_rows(q)


_BLOCK = 64


def _top_rows(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row of ``scores`` (candidates ``ids``), by score descending then id ascending.

    A full sort of each row is wasteful when k is small. Instead, split the row into blocks of 64 and take
    each block's maximum: the k-th largest block maximum is a score that at least k entries reach, so every
    entry of the top k (ties at the k-th included) is at or above it. Only those few candidates are sorted.
    """
    m, n = scores.shape
    take = min(k, n)
    out_ids = np.full((m, k), -1, dtype=np.int64)
    out_scores = np.full((m, k), -np.inf, dtype=np.float32)
    if take == 0:
        return out_ids, out_scores
    blocks = n // _BLOCK
    if blocks < 4 * take:  # too few entries for blocks to pay: partition the rows outright
        if take < n:
            chosen = np.argpartition(-scores, take - 1, axis=1)[:, :take]
            kth = np.take_along_axis(scores, chosen, axis=1).min(axis=1, keepdims=True)
            # argpartition picks arbitrarily among entries tied with the k-th; redo the rows where some tied
            # entry was left out, so that ties are filled in id order
            for row in np.flatnonzero((scores >= kth).sum(axis=1) > take):
                candidates = np.flatnonzero(scores[row] >= kth[row, 0])
                best = np.lexsort((ids[candidates], -scores[row, candidates]))[:take]
                chosen[row] = candidates[best]
        else:
            chosen = np.broadcast_to(np.arange(n), (m, n))
        chosen_scores = np.take_along_axis(scores, chosen, axis=1)
        chosen_ids = ids[chosen]
        order = np.lexsort((chosen_ids, -chosen_scores), axis=-1)
        out_ids[:, :take] = np.take_along_axis(chosen_ids, order, axis=1)
        out_scores[:, :take] = np.take_along_axis(chosen_scores, order, axis=1)
        return out_ids, out_scores
    maxima = scores[:, : blocks * _BLOCK].reshape(m, blocks, _BLOCK).max(axis=2)
    thresholds = np.partition(maxima, blocks - take, axis=1)[:, blocks - take]
    for row in range(m):
        s = scores[row]
        candidates = np.flatnonzero(s >= thresholds[row])
        order = np.lexsort((ids[candidates], -s[candidates]))[:take]
        out_ids[row, :take] = ids[candidates[order]]
        out_scores[row, :take] = s[candidates[order]]
    return out_ids, out_scores


class ExactIndex:
    """Exact cosine search: unit vectors, one matrix product and a partial sort per batch of queries."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = unit_rows(vectors)
        self.n, self.dimension = self.vectors.shape

    def search(self, queries: np.ndarray, k: int = 10) -> SearchResult:
        """The k most similar vectors for every query row (k beyond N returns all N, padded with id -1)."""
        k = check_k(k)
        q = _queries(queries, self.dimension)
        scores = q @ self.vectors.T
        ids, best = _top_rows(scores, np.arange(self.n), k)
        return SearchResult(ids, best, np.full(q.shape[0], self.n, dtype=np.int64))

    def search_one(self, query: np.ndarray, k: int = 10, allowed: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """One query's top k as (id, score) pairs; ``allowed`` restricts the candidates before ranking."""
        q = _queries(query, self.dimension)[0]
        return top_k(self.vectors @ q, k, allowed)

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
    if not isinstance(clusters, (int, np.integer)) or not 1 <= clusters <= n:
        raise ValueError(f"the number of clusters must be between 1 and the number of vectors ({n}), got {clusters!r}")
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


def _at_least_one(name: str, value) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if isinstance(value, bool) or not np.all(array >= 1):  # also refuses nan
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return array


def ivf_cost(n, lists, probes):
    """Expected dot products per query: L centroids plus p lists of N/L vectors each, L + p N / L.

    Each argument may be a number or an array (for a whole curve at once).
    """
    n = _at_least_one("the number of vectors", n)
    lists = _at_least_one("lists", lists)
    probes = _at_least_one("probes", probes)
    if np.any(probes > lists):
        raise ValueError("probes cannot exceed the number of lists")
    cost = lists + probes * n / lists
    return float(cost) if cost.ndim == 0 else cost


def optimal_lists(n, probes):
    """The L minimising L + p N / L: setting the derivative 1 - p N / L^2 to zero gives L = sqrt(p N)."""
    best = np.sqrt(_at_least_one("probes", probes) * _at_least_one("the number of vectors", n))
    return float(best) if best.ndim == 0 else best


class IVFIndex:
    """An inverted-file index: spherical k-means lists, and a search that scans only the p nearest lists."""

    def __init__(self, vectors: np.ndarray, lists: int, iterations: int = 20, seed: int = 0):
        x = unit_rows(vectors)
        self.n, self.dimension = x.shape
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
        k = check_k(k)
        if not isinstance(probes, (int, np.integer)) or not 1 <= probes <= self.lists:
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
            best_ids, best_scores = _top_rows(q[rows] @ self.vectors[a:b].T, self.order[a:b], k)
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
