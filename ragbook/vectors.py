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


def _unit(matrix: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The rows of a checked float64 matrix divided by their lengths (the work of
    :func:`unit_rows`)."""
    norms = np.sqrt(np.add.reduce(matrix * matrix, axis=1))  # np.linalg.norm's sum
    if not norms.all():
        zero = np.flatnonzero(norms == 0)
        raise ValueError(
            f"row {zero[0]} is a zero vector, which has no direction; {zero.size} "
            "zero rows in all"
        )
    return (matrix / norms[:, None]).astype(dtype)


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
    q = validate.finite_array(queries, "queries", dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dimension:
        raise ValueError(
            f"queries must have {dimension} dimensions like the indexed vectors, "
            f"got shape {np.shape(queries)}"
        )
    return _unit(q.astype(np.float64))


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


_GROUP = 64  # the most entries of a row in one group (see _top_rows)
_EPSILON32 = float(np.finfo(np.float32).eps)


def _slack(dimension: int) -> float:
    """A bound on how far two float32 computations of one dot product of unit vectors
    can disagree.

    Any order of summing r products errs by at most gamma_r = r u / (1 - r u) times |q|
    |v| (u = 2^-24, and |q| |v| is 1 up to the rounding of the unit rows); two
    computations disagree by twice that, and a candidate set must reach twice further
    still (see :func:`_top_rows`). Doubling u keeps it safe. The last term covers
    rounding a threshold (a score minus this slack, at most 2 in size) to float32.
    """
    r = dimension + 2
    return 4 * r * _EPSILON32 / (1 - r * _EPSILON32) + 2 * _EPSILON32


def _exact_scores(queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """q.v for paired rows, the same way for every pair: exact float64 products, summed
    along each row.

    The result depends only on the two vectors, never on where they sit in a batch or in
    the index, so identical vectors get identical scores and a query gets the same
    scores alone or in a batch.
    """
    products = np.multiply(
        queries, vectors, dtype=np.float64, order="C"
    )  # C order: one summation order
    return products.sum(axis=-1).astype(np.float32)


def _top_rows(
    scores: np.ndarray,
    ids: np.ndarray,
    k: int,
    queries: np.ndarray,
    vectors: np.ndarray,
    positions: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row of ``scores`` (candidates ``ids``), by score descending then id
    ascending.

    ``scores`` come from a matrix product, whose float32 results for one pair of vectors
    differ in the last bits with the shape of the batch and the position in it (BLAS
    kernels block differently), so identical vectors could get different scores and
    break the tie-by-id rule. They only select candidates: every entry within twice the
    possible disagreement (:func:`_slack`) of each row's k-th score, which is a superset
    of the true top k. The candidates are then rescored by :func:`_exact_scores` (column
    j of ``scores`` is row ``positions[j]`` of ``vectors``, or row j without
    ``positions``) and sorted.

    A full sort of each row is wasteful when k is small. Instead, deal the row into g
    groups of up to 64 entries (entry c into group c mod g) and take each group's
    maximum, one elementwise maximum of the row's consecutive slices of length g: the
    k-th largest group maximum is a score that at least k entries reach, so every entry
    of the top k (ties at the k-th included) is at or above it. There are at least 4k
    groups, so few of them reach it; rows too short for two entries a group are
    partitioned outright.
    """
    m, n = scores.shape
    take = min(k, n)
    if take == 0 or m == 0:
        return np.full((m, k), -1, dtype=np.int64), np.full(
            (m, k), -np.inf, dtype=np.float32
        )
    slack = _slack(queries.shape[1])
    size = min(_GROUP, n // (4 * take))  # entries per group
    if size >= 2:
        groups = n // size
        full = groups * size
        maxima = scores[:, :full].reshape(m, size, groups).max(axis=1)
        limit = (
            np.partition(maxima, groups - take, axis=1)[:, groups - take].astype(
                np.float64
            )
            - slack
        )
        # only the groups whose maximum reaches the limit hold candidates, and the
        # entries after the last whole slice
        group_rows, group_numbers = np.nonzero(maxima >= limit[:, None])
        rows = np.repeat(group_rows, size)
        columns = (group_numbers[:, None] + groups * np.arange(size)).ravel()
        reach = scores[rows, columns] >= limit[rows]
        tail_rows, tail_columns = np.nonzero(scores[:, full:] >= limit[:, None])
        rows = np.concatenate([rows[reach], tail_rows])
        columns = np.concatenate([columns[reach], tail_columns + full])
    else:
        kth = (
            np.partition(scores, n - take, axis=1)[:, n - take]
            if take < n
            else np.full(m, -np.inf)
        )
        rows, columns = np.nonzero(scores >= (kth.astype(np.float64) - slack)[:, None])
    exact = _exact_scores(
        queries[rows], vectors[columns if positions is None else positions[columns]]
    )
    return _rank(rows, ids[columns], exact, m, k)


def _largest(scores: np.ndarray, count: int) -> np.ndarray:
    """The columns of the ``count`` largest entries of each row of ``scores`` (ties to
    the lower column), in column order.

    The count-th largest of each row comes from a partial sort; every entry that
    reaches it is kept, the first ``count`` of them in each row.
    """
    if count == 1:
        return scores.argmax(axis=1)[:, None]
    n = scores.shape[1]
    kth = np.partition(scores, n - count, axis=1)[:, n - count]
    rows, columns = np.nonzero(scores >= kth[:, None])
    place = np.arange(rows.size) - np.searchsorted(rows, rows)  # place in its row
    return columns[place < count].reshape(-1, count)


def _rank(
    rows: np.ndarray, ids: np.ndarray, scores: np.ndarray, m: int, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The k best candidates of each of m queries, by score descending then id
    ascending, padded with id -1.

    Candidate j belongs to query ``rows[j]``, has id ``ids[j]`` and the (exact) score
    ``scores[j]``.
    """
    out_ids = np.full((m, k), -1, dtype=np.int64)
    out_scores = np.full((m, k), -np.inf, dtype=np.float32)
    if m == 1:  # one query: every candidate is in row 0
        order = np.lexsort((ids, -scores))[:k]
        out_ids[0, : order.size] = ids[order]
        out_scores[0, : order.size] = scores[order]
        return out_ids, out_scores
    order = np.lexsort((ids, -scores, rows))
    rows, ids, scores = rows[order], ids[order], scores[order]
    rank = np.arange(rows.size) - np.searchsorted(rows, rows)  # place in its row
    keep = rank < k
    out_ids[rows[keep], rank[keep]] = ids[keep]
    out_scores[rows[keep], rank[keep]] = scores[keep]
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
        # store the vectors list by list: list l is the block of rows
        # offsets[l]:offsets[l + 1], read in place by a matrix product, and order maps a
        # row back to its id
        self.order = np.argsort(assignment, kind="stable")
        self.vectors = x[self.order]
        self.list_sizes = np.bincount(assignment, minlength=lists)
        self.offsets = np.zeros(lists + 1, dtype=np.int64)
        np.cumsum(self.list_sizes, out=self.offsets[1:])
        self._bounds = self.offsets.tolist()  # the same, as Python ints for slicing

    def search_batch(
        self, queries: np.ndarray, k: int = 10, probes: int = 1
    ) -> SearchResult:
        """Search a matrix of query vectors, one query per row (a single vector counts
        as one row).

        Returns a :class:`SearchResult` of arrays: row i holds the k best of the vectors
        in query i's ``probes`` nearest lists (ids and scores, best first, ties by id,
        padded with id -1) and the dot products it cost (L centroids plus the probed
        lists' sizes).
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
        if m == 1:
            nearest = _largest(q @ self.centroids.T, probes)
            positions = self._scan_one(q[0], nearest[0], k)
            rows = np.zeros(positions.size, dtype=np.int64)
        else:
            with _one_blas_thread():
                nearest = _largest(q @ self.centroids.T, probes)
                rows, positions = self._scan_by_list(q, nearest, k)
        # the candidates, scored exactly and ranked as in exact search (see _top_rows)
        exact = _exact_scores(q[rows], self.vectors[positions])
        ids, scores = _rank(rows, self.order[positions], exact, m, k)
        return SearchResult(
            ids, scores, self.lists + self.list_sizes[nearest].sum(axis=1)
        )

    def _scan_by_list(self, q, nearest, k):
        """Score the probed lists list by list: all the queries that probe list l
        against its block of rows at once.

        Returns the candidates, as (query row, position in ``self.vectors``): every
        entry within the slack (:func:`_slack`) of its query's k-th best score over its
        probed lists. A list keeps, for each of its queries, the entries within the
        slack of that list's own k-th best, which is at most the query's k-th best, so
        no candidate is lost; the k best scores of each (query, list) pair go into a
        table, from which each query's k-th best over all its lists is read.
        """
        m, probes = nearest.shape
        slack = np.float32(_slack(self.dimension))
        pair_lists = nearest.ravel()  # pair j: query j // probes and one of its lists
        pairs = np.argsort(pair_lists, kind="stable")  # the pairs, grouped by list
        q_pairs = q[pairs // probes]  # the queries of list l are one block of rows
        starts = np.zeros(self.lists + 1, dtype=np.int64)
        np.cumsum(np.bincount(pair_lists, minlength=self.lists), out=starts[1:])
        starts, bounds = starts.tolist(), self._bounds
        best = np.full((m * probes, k), -np.inf, dtype=np.float32)
        found = []  # per list: (first pair, first row, list size, hits, their scores)
        for l in range(self.lists):
            lo, hi, a, b = starts[l], starts[l + 1], bounds[l], bounds[l + 1]
            if lo == hi or a == b:
                continue
            # row j: pair lo + j against every vector of list l
            scores = q_pairs[lo:hi] @ self.vectors[a:b].T
            if b - a > k:
                top = np.partition(scores, b - a - k, axis=1)[:, b - a - k :]
                best[lo:hi] = top
                hits = np.flatnonzero(scores >= top[:, :1] - slack)
            else:
                best[lo:hi, : b - a] = scores
                hits = np.arange(scores.size)
            found.append((lo, a, b - a, hits, scores.ravel()[hits]))
        if not found:  # every probed list is empty
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        # each query's k-th best score over the k best of each of its pairs
        kth = np.empty_like(best)
        kth[pairs] = best
        kth = np.partition(kth.reshape(m, probes * k), (probes - 1) * k, axis=1)[
            :, (probes - 1) * k
        ]
        # hit h of a list with first pair lo, first row a and size s is pair lo + h // s
        # and row a + h % s
        lo, a, size, hits, scores = zip(*found)
        counts = [h.size for h in hits]
        hits, scores = np.concatenate(hits), np.concatenate(scores)
        lo, a, size = (np.repeat(v, counts) for v in (lo, a, size))
        rows = pairs[lo + hits // size] // probes
        keep = scores >= kth[rows] - slack
        return rows[keep], (a + hits % size)[keep]

    def _scan_one(self, q, lists, k):
        """The same for a single query, without the grouping: its lists are read in the
        order they are stored, neighbouring lists as one block of rows, one
        matrix-vector product per block. Returns the candidates' positions."""
        spans = []
        for l in sorted(lists.tolist()):
            a, b = self._bounds[l], self._bounds[l + 1]
            if spans and spans[-1][1] == a:
                spans[-1][1] = b
            elif a < b:
                spans.append([a, b])
        if not spans:  # every probed list is empty
            return np.zeros(0, np.int64)
        scores = np.concatenate([self.vectors[a:b] @ q for a, b in spans])
        positions = np.concatenate([np.arange(a, b) for a, b in spans])
        if scores.size <= k:
            return positions
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        return positions[scores >= kth - np.float32(_slack(self.dimension))]

    @property
    def nbytes(self) -> int:
        return (
            self.vectors.nbytes
            + self.centroids.nbytes
            + self.order.nbytes
            + self.offsets.nbytes
        )
