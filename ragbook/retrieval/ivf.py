"""An inverted-file (IVF) index for approximate vector search (chapter 7).

The index partitions the vectors into L lists by spherical k-means; a query is compared
with the L centroids, and only the vectors of the p closest lists are scanned:

    cost(L) = L + p N / L   dot products,
    smallest at L = sqrt(p N), where it is 2 sqrt(p N).

Scores and rankings are those of exact search (:mod:`ragbook.retrieval.vectors`): the
same score for the same pair of vectors, score descending, ties by id ascending.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import validate
from .vector_kernels import ivf_scan, ivf_scan_parallel
from .vectors import (
    SHARED_BATCH,
    SearchResult,
    one_blas_thread,
    query_rows,
    dot_slack,
    unit_matrix,
    unit_rows,
)

__all__ = ["spherical_kmeans", "IVFIndex", "ivf_cost", "optimal_lists"]


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
    with one_blas_thread() if m * clusters < 2**20 else contextlib.nullcontext():
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
        return unit_matrix(sums)
    out = previous.copy()
    out[~zero] = unit_matrix(sums[~zero])
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
        # the vectors list by list, one per row: list l is rows offsets[l] to
        # offsets[l + 1] - 1 (order maps a row back to its id); the centroids
        # coordinate by coordinate, as one r x L block (see block_scores)
        self.order = np.argsort(assignment, kind="stable")
        self.list_sizes = np.bincount(assignment, minlength=lists)
        self.offsets = np.zeros(lists + 1, dtype=np.int64)
        np.cumsum(self.list_sizes, out=self.offsets[1:])
        self.rows = x[self.order]
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
        (:func:`ragbook.retrieval.vector_kernels.ivf_scan`).
        """
        k = validate.k(k)
        probes = validate.whole(probes, "probes")
        if not 1 <= probes <= self.lists:
            raise ValueError(
                "probes must be between 1 and the number of lists "
                f"({self.lists}), got {probes!r}"
            )
        q = query_rows(queries, self.dimension)
        m = q.shape[0]
        ids = np.empty((m, k), dtype=np.int64)
        scores = np.empty((m, k), dtype=np.float32)
        cost = np.empty(m, dtype=np.int64)
        scan = ivf_scan_parallel if m >= SHARED_BATCH else ivf_scan
        scan(
            q,
            self.centroid_block,
            self.rows,
            self.offsets,
            self.order,
            probes,
            dot_slack(self.dimension),
            ids,
            scores,
            cost,
        )
        return SearchResult(ids, scores, cost)

    @property
    def nbytes(self) -> int:
        return (
            self.rows.nbytes
            + self.centroids.nbytes
            + self.centroid_block.nbytes
            + self.order.nbytes
            + self.offsets.nbytes
        )
