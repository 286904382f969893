"""Vector search: cosine similarity, exact search and an inverted-file (IVF) index
(chapter 7).

With unit vectors the cosine q.d / (|q| |d|) is the dot product q.d, so exact search is
one matrix product of the chunk matrix with the query and a partial sort: N r operations
per query for N vectors of r dimensions. An IVF index partitions the vectors into L
lists by spherical k-means; a query is compared with the L centroids, and only the
vectors of the p closest lists are scanned:

    cost(L) = L + p N / L   dot products,
    smallest at L = sqrt(p N), where it is 2 sqrt(p N).

Rankings follow the same rules as the sparse retrievers: score descending, ties by id
ascending.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from . import validate
from .ranking import _candidates
from .vector_kernels import (
    ivf_scan,
    ivf_scan_parallel,
    select_rows,
    select_rows_parallel,
    unit_rows_into,
)

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
    return _unit(matrix, dtype)


def _unit(matrix: np.ndarray, dtype=np.float32, name: str = "vectors") -> np.ndarray:
    """The rows of a 2-D float matrix (called ``name`` in errors) divided by their
    lengths (the work of :func:`unit_rows`, compiled:
    :func:`ragbook.vector_kernels.unit_rows_into`)."""
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


def _queries(queries: np.ndarray, dimension: int) -> np.ndarray:
    """Query vectors as unit float32 rows; a single vector is one row.

    Every search starts here, so a float array is taken as it is (its entries are
    checked by :func:`_unit`); anything else goes through ``validate.finite_array``,
    whose errors say what was wrong.
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
    return _unit(q, name="queries")


_BLOCKS: list[ThreadpoolController] = []


def _one_blas_thread():
    """A context in which NumPy's BLAS uses one thread (for the whole process).

    IVF search makes one small matrix product per probed list. Above a size threshold
    the BLAS splits each one over its threads, and on a machine busy with other work
    every product then waits for a second thread to be scheduled: the same search took
    20 to 70 times longer. One thread per product is steady. Exact search and k-means
    use it for their small products too.
    """
    if not _BLOCKS:
        _BLOCKS.append(ThreadpoolController())
    return _BLOCKS[0].limit(limits=1, user_api="blas")


_EPSILON32 = float(np.finfo(np.float32).eps)


def _slack(dimension: int) -> float:
    """A bound on how far two float32 computations of one dot product of unit vectors
    can disagree (a matrix product's and :func:`ragbook.vector_kernels.dot`'s).

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
_SHARED_BATCH = 32


def _top_rows(
    proposed: np.ndarray,
    ids: np.ndarray,
    k: int,
    queries: np.ndarray,
    vectors: np.ndarray,
    positions: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row of ``proposed`` (candidates ``ids``), by score descending then
    id ascending, padded with id -1.

    ``proposed`` comes from a matrix product, whose float32 results for one pair of
    vectors differ in the last bits with the shape of the batch and the position in it
    (BLAS kernels block differently), so identical vectors could get different scores
    and break the tie-by-id rule. They only select candidates: every entry within the
    slack (:func:`_slack`) of each row's k-th score, a superset of the true top k. The
    candidates are scored again the one way that depends only on the pair (column j of
    ``proposed`` is row ``positions[j]`` of ``vectors``, or row j without
    ``positions``) and ranked, in one compiled loop (``select_rows``).
    """
    m = proposed.shape[0]
    out_ids = np.empty((m, k), dtype=np.int64)
    out_scores = np.empty((m, k), dtype=np.float32)
    if positions is None:
        positions = np.arange(proposed.shape[1])
    slack = _slack(queries.shape[1])
    select = select_rows_parallel if m >= _SHARED_BATCH else select_rows
    select(proposed, ids, positions, queries, vectors, slack, out_ids, out_scores)
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
        q = _queries(queries, self.dimension)
        # a small product on one BLAS thread (see _one_blas_thread)
        small = q.shape[0] * self.n < 2**20
        with _one_blas_thread() if small else contextlib.nullcontext():
            scores = q @ self.vectors.T
        ids, best = _top_rows(scores, np.arange(self.n), k, q, self.vectors)
        return SearchResult(ids, best, np.full(q.shape[0], self.n, dtype=np.int64))

    def search_one(
        self, query: np.ndarray, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        """One query's top k as (id, score) pairs; ``allowed`` restricts the candidates
        before ranking.

        The ids and scores are those of :meth:`search_batch` for the same query,
        whatever the batch.
        """
        k = validate.k(k)
        q = _queries(query, self.dimension)
        if q.shape[0] != 1:
            raise ValueError(
                f"search_one takes one query vector, got {q.shape[0]}; use "
                "search_batch for a batch"
            )
        if allowed is None:
            candidates = np.arange(self.n)
            scores = self.vectors @ q[0]
        else:
            candidates = _candidates(self.n, allowed)
            scores = (self.vectors @ q[0])[candidates]
        ids, best = _top_rows(
            scores[None, :], candidates, k, q, self.vectors, positions=candidates
        )
        return SearchResult(ids, best, np.array([candidates.size])).ranking(0)

    @property
    def nbytes(self) -> int:
        return self.vectors.nbytes


def spherical_kmeans(
    vectors: np.ndarray,
    clusters: int,
    iterations: int = 20,
    seed: int = 0,
    sample: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means on unit vectors: maximise the sum of each vector's cosine with
    its centroid.

    Centroids start at distinct random vectors (seeded). Each iteration assigns every
    vector to the centroid with the largest dot product and resets each centroid to the
    normalised mean of its vectors (a cluster whose vectors cancel out keeps its
    centroid). A cluster left empty is moved to the vector worst
    served by its current centroid, so all ``clusters`` lists stay in use. With
    ``sample`` (at least ``clusters``), the iterations run on that many vectors drawn at
    random (seeded) and every vector is then assigned to its nearest final centroid.
    Returns (centroids, assignment).
    """
    return _spherical_kmeans(unit_rows(vectors), clusters, iterations, seed, sample)


def _spherical_kmeans(x, clusters, iterations, seed, sample):
    """The work of :func:`spherical_kmeans`, on rows ``x`` already of unit length."""
    n = x.shape[0]
    clusters = validate.whole(clusters, "clusters")
    if not 1 <= clusters <= n:
        raise ValueError(
            "the number of clusters must be between 1 and the number of vectors "
            f"({n}), got {clusters!r}"
        )
    iterations = validate.k(iterations, "iterations")
    seed = validate.count(seed, "seed")
    rng = np.random.default_rng(seed)
    train = x
    if sample is not None:
        sample = validate.whole(sample, "sample")
        if sample < clusters:
            raise ValueError(
                f"a sample of {sample} vectors cannot train {clusters} clusters; "
                f"give at least {clusters}"
            )
        if sample < n:
            train = x[np.sort(rng.choice(n, size=sample, replace=False))]
    m = train.shape[0]
    centroids = train[rng.choice(m, size=clusters, replace=False)]
    assignment = None
    # a small product runs on one BLAS thread: waiting for a second thread would cost
    # more than it saves
    with _one_blas_thread() if m * clusters < 2**20 else contextlib.nullcontext():
        for _ in range(iterations):
            new = _nearest_centroid(train, centroids)
            sizes = np.bincount(new, minlength=clusters)
            empty = np.flatnonzero(sizes == 0)
            if empty.size:
                # each vector's cosine with its centroid: the worst served move first
                best = np.einsum("ij,ij->i", train, centroids[new])
                donors = iter(np.argsort(best, kind="stable").tolist())
                for cluster in empty.tolist():
                    donor = next(i for i in donors if sizes[new[i]] > 1)
                    sizes[new[donor]] -= 1
                    new[donor] = cluster
                    sizes[cluster] = 1
            if assignment is None:
                sums = _cluster_sums(train, new, clusters)
            else:  # only the vectors that changed cluster change the sums
                moved = np.flatnonzero(new != assignment)
                if moved.size == 0:
                    break
                sums += _cluster_sums(train[moved], new[moved], clusters)
                sums -= _cluster_sums(train[moved], assignment[moved], clusters)
            centroids = _directions(sums, centroids)
            assignment = new
    if train is not x:
        assignment = _nearest_centroid(x, centroids)
    return centroids, assignment


def _directions(sums: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Each cluster's new centroid: the direction of its vectors' sum, or its previous
    centroid where the sum is zero (vectors that cancel out, such as v and -v, have no
    mean direction)."""
    zero = ~sums.any(axis=1)
    if not zero.any():
        return _unit(sums)
    out = previous.copy()
    out[~zero] = _unit(sums[~zero])
    return out


def _nearest_centroid(x: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The centroid with the largest dot product, for every row of ``x``.

    The rows go a block at a time, at most 2^20 scores (4 MiB) at once: a product
    written to memory in one piece (64 MiB for 65,536 vectors and 256 centroids) and
    read again took twice as long.
    """
    nearest = np.empty(x.shape[0], dtype=np.int64)
    block = max(1, 2**20 // centroids.shape[0])
    for start in range(0, x.shape[0], block):
        scores = x[start : start + block] @ centroids.T
        nearest[start : start + block] = scores.argmax(axis=1)
    return nearest


def _cluster_sums(x: np.ndarray, assignment: np.ndarray, clusters: int) -> np.ndarray:
    """The float64 sum of the rows of ``x`` in each cluster: one weighted count over
    (cluster, coordinate) cells, entry (i, j) of ``x`` counted in cell assignment[i] r +
    j."""
    r = x.shape[1]
    cells = (assignment[:, None] * r + np.arange(r)).ravel()
    sums = np.bincount(cells, weights=x.ravel(), minlength=clusters * r)
    return sums.reshape(clusters, r)


def ivf_cost(n, lists, probes):
    """Expected dot products per query: L centroids plus p lists of N/L vectors each, L
    + p N / L.

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
    """The L minimising L + p N / L: setting the derivative 1 - p N / L^2 to zero gives
    L = sqrt(p N)."""
    best = np.sqrt(
        validate.at_least_one(probes, "probes")
        * validate.at_least_one(n, "the number of vectors")
    )
    return float(best) if best.ndim == 0 else best


class IVFIndex:
    """An inverted-file index: spherical k-means lists, and a search that scans only the
    p nearest lists.

    k-means trains on at most ``sample_per_list`` vectors per list (256 by default,
    FAISS's budget; None: every vector) for at most ``iterations`` rounds; then every
    vector goes to its nearest centroid.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        lists: int,
        iterations: int = 20,
        seed: int = 0,
        sample_per_list: int | None = 256,
    ):
        x = unit_rows(vectors)
        self.n, self.dimension = x.shape
        lists = validate.whole(lists, "lists")
        sample = (
            None
            if sample_per_list is None
            else validate.k(sample_per_list, "sample_per_list") * lists
        )
        self.centroids, assignment = _spherical_kmeans(
            x, lists, iterations, seed, sample
        )
        self.lists = lists
        # the vectors list by list (order maps a place back to its id), and each list
        # coordinate by coordinate: list l is the r x (its size) block at entries
        # r offsets[l] to r offsets[l + 1] of one flat array, read in place by the scan
        self.order = np.argsort(assignment, kind="stable")
        self.list_sizes = np.bincount(assignment, minlength=lists)
        self.offsets = np.zeros(lists + 1, dtype=np.int64)
        np.cumsum(self.list_sizes, out=self.offsets[1:])
        stored = x[self.order]
        bounds = self.offsets.tolist()
        self.blocks = np.concatenate(
            [stored[a:b].T.ravel() for a, b in zip(bounds, bounds[1:])]
        )
        self.centroid_block = np.ascontiguousarray(self.centroids.T).ravel()

    def search_batch(
        self, queries: np.ndarray, k: int = 10, probes: int = 1
    ) -> SearchResult:
        """Search a matrix of query vectors, one query per row (a single vector counts
        as one row).

        Returns a :class:`SearchResult` of arrays: row i holds the k best of the vectors
        in query i's ``probes`` nearest lists (ids and scores, best first, ties by id,
        padded with id -1) and the dot products it cost (L centroids plus the probed
        lists' sizes). The search is one compiled loop over the queries
        (:func:`ragbook.vector_kernels.ivf_scan`).
        """
        k = validate.k(k)
        probes = validate.whole(probes, "probes")
        if not 1 <= probes <= self.lists:
            raise ValueError(
                "probes must be between 1 and the number of lists "
                f"({self.lists}), got {probes!r}"
            )
        q = _queries(queries, self.dimension)
        m = q.shape[0]
        ids = np.empty((m, k), dtype=np.int64)
        scores = np.empty((m, k), dtype=np.float32)
        cost = np.empty(m, dtype=np.int64)
        scan = ivf_scan_parallel if m >= _SHARED_BATCH else ivf_scan
        scan(
            q,
            self.centroid_block,
            self.blocks,
            self.offsets,
            self.order,
            probes,
            ids,
            scores,
            cost,
        )
        return SearchResult(ids, scores, cost)

    @property
    def nbytes(self) -> int:
        return (
            self.blocks.nbytes
            + self.centroids.nbytes
            + self.centroid_block.nbytes
            + self.order.nbytes
            + self.offsets.nbytes
        )
