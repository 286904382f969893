"""The compiled loops of vector search (explained in the vector-kernel appendix):
scoring, keeping the top k, and the scan of an inverted-file index.

Each function is plain Python over NumPy arrays, compiled to machine code by Numba on
first use (and cached on disk), so that a search costs one call from Python rather
than one NumPy call per step.

Every score a search returns is computed the same way, "the one way": the float32
coordinates multiplied in float64, where the product of two float32 numbers is exact,
the products added in coordinate order, and the sum rounded once to float32. A score
therefore depends only on the two vectors (not on a batch, a block or a CPU's vector
width), so equal vectors get equal scores and tie by id. Faster float32 sums (a matrix
product, :func:`proposals`) only propose which vectors to score that way.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "unit_rows_into",
    "dot",
    "offer",
    "select_rows",
    "ivf_scan",
    "ivf_scan_parallel",
    "block_scores",
    "proposals",
]


@njit(cache=True, nogil=True)
def unit_rows_into(x, out):
    """out[i] = x[i] / |x[i]|: the length from float64 squares added in coordinate
    order, the division in float64, the result rounded to ``out``'s type.

    Returns -1, or the first row whose length is zero or not finite (a nan or inf entry,
    or entries too large to square), which is then left unwritten.
    """
    for i in range(x.shape[0]):
        total = 0.0
        for j in range(x.shape[1]):
            total += np.float64(x[i, j]) * np.float64(x[i, j])
        length = np.sqrt(total)
        if length == 0.0 or not np.isfinite(length):
            return i
        for j in range(x.shape[1]):
            out[i, j] = np.float64(x[i, j]) / length
    return -1


@njit(cache=True, nogil=True)
def dot(q, v):
    """q.v for two float32 vectors: float64 products, added in coordinate order,
    rounded to float32."""
    total = 0.0
    for j in range(q.shape[0]):
        total += np.float64(q[j]) * np.float64(v[j])
    return np.float32(total)


@njit(cache=True, nogil=True)
def offer(best_ids, best_scores, filled, i, score):
    """Offer candidate ``i`` with ``score`` to a top list kept sorted (score descending,
    then id ascending) in ``best_ids`` and ``best_scores``, of which the first
    ``filled`` places are in use. Returns the new number of places in use.

    A full list takes the candidate only if it beats the last entry; it then slides
    down past every entry it beats, one place at a time, as in insertion sort. A call
    costs tens of nanoseconds (the arrays are passed with their reference counts), so
    the loops below call it only while the list has room or for a candidate that
    reaches its last entry.
    """
    k = best_ids.shape[0]
    if filled == k:
        last = best_scores[k - 1]
        if score < last or (score == last and i > best_ids[k - 1]):
            return filled
        place = k - 1
    else:
        place = filled
        filled += 1
    while place > 0 and (
        best_scores[place - 1] < score
        or (best_scores[place - 1] == score and best_ids[place - 1] > i)
    ):
        best_scores[place] = best_scores[place - 1]
        best_ids[place] = best_ids[place - 1]
        place -= 1
    best_scores[place] = score
    best_ids[place] = i
    return filled


@njit(cache=True, nogil=True)
def select_rows(proposed, positions, ids, queries, vectors, slack, out_ids, out_scores):
    """The top k of each row of ``proposed``, rescored the one way (see :func:`dot`),
    into ``out_ids`` and ``out_scores`` (k columns).

    ``proposed`` holds float32 scores that may disagree with the rescoring by up to
    ``slack``. Column c of row i is query i against row ``positions[c]`` of
    ``vectors``, whose id is ``ids[positions[c]]``. Places left empty get id -1 and
    score -inf.
    """
    for i in range(proposed.shape[0]):
        _select_row(
            proposed[i],
            positions,
            ids,
            queries[i],
            vectors,
            slack,
            out_ids[i],
            out_scores[i],
        )


@njit(cache=True, nogil=True)
def _select_row(row, positions, ids, q, vectors, slack, top_ids, top):
    """One row. A first pass finds the k-th best proposed score; every entry within
    ``slack`` of it may belong to the true top k, and only those are scored again,
    four at a time (:func:`_dot4`), and offered to the top list."""
    k = top.shape[0]
    # the k-th best proposed score: the best k scores seen so far, kept sorted in
    # ``top`` (scores alone, so no call to offer: ties need no order here). A score
    # that beats the k-th goes in without a branch per place: place p keeps its score,
    # takes the newcomer, or takes the score above it, whichever lies between.
    top[:] = -np.inf
    kth = top[k - 1]
    for c in range(row.shape[0]):
        score = row[c]
        if score > kth:
            for p in range(k - 1, 0, -1):
                top[p] = max(top[p], min(top[p - 1], score))
            top[0] = max(top[0], score)
            kth = top[k - 1]
    limit = np.float64(kth) - slack  # -inf while fewer than k entries
    top_ids[:] = -1
    top[:] = -np.inf
    filled, c = 0, 0
    picked = np.empty(4, np.int64)
    while c < row.shape[0]:
        count = 0  # the rows of the next (up to) four candidates
        while c < row.shape[0] and count < 4:
            if row[c] >= limit:
                picked[count] = positions[c]
                count += 1
            c += 1
        if count == 0:
            break
        last = count - 1  # a group short of four repeats its last candidate
        scores = _dot4(
            q,
            vectors[picked[0]],
            vectors[picked[min(1, last)]],
            vectors[picked[min(2, last)]],
            vectors[picked[min(3, last)]],
        )
        for t in range(count):
            if filled < k or scores[t] >= top[k - 1]:
                filled = offer(top_ids, top, filled, ids[picked[t]], scores[t])


@njit(cache=True, nogil=True)
def _dot4(q, a, b, c, d):
    """:func:`dot` of ``q`` with four vectors at once: four sums, each adding its
    products in coordinate order as :func:`dot` does, so the results are dot's to the
    bit, while the CPU overlaps the four chains of additions."""
    sa = sb = sc = sd = 0.0
    for j in range(q.shape[0]):
        qj = np.float64(q[j])
        sa += qj * np.float64(a[j])
        sb += qj * np.float64(b[j])
        sc += qj * np.float64(c[j])
        sd += qj * np.float64(d[j])
    return np.float32(sa), np.float32(sb), np.float32(sc), np.float32(sd)


_SHARES = 64  # the parts a batch is cut into, for the threads to take in turn


@njit(cache=True, nogil=True)
def ivf_scan(
    queries,
    centroid_block,
    rows,
    offsets,
    ids,
    probes,
    slack,
    out_ids,
    out_scores,
    cost,
):
    """Inverted-file search of each query (row) of ``queries``.

    The vectors are stored list by list: list l is rows offsets[l] to offsets[l + 1] -
    1 of ``rows``, and the vector in row t has id ``ids[t]``. The L centroids are one
    r x L block, coordinate by coordinate (``centroid_block``, see
    :func:`block_scores`). Query i's top k go into ``out_ids[i]`` and
    ``out_scores[i]`` and the dot products it cost into ``cost[i]``; ``slack`` bounds
    how far a float32 sum can be from the one way
    (:func:`ragbook.retrieval.vectors.dot_slack`).
    """
    m = queries.shape[0]
    for share in range(min(m, _SHARES)):
        _scan_share(
            queries,
            centroid_block,
            rows,
            offsets,
            ids,
            probes,
            slack,
            out_ids,
            out_scores,
            cost,
            share,
            min(m, _SHARES),
        )


@njit(cache=True, nogil=True, parallel=True)
def ivf_scan_parallel(
    queries,
    centroid_block,
    rows,
    offsets,
    ids,
    probes,
    slack,
    out_ids,
    out_scores,
    cost,
):
    """:func:`ivf_scan`, with the shares of the batch taken by the CPU's threads (the
    queries are independent)."""
    m = queries.shape[0]
    for share in prange(min(m, _SHARES)):
        _scan_share(
            queries,
            centroid_block,
            rows,
            offsets,
            ids,
            probes,
            slack,
            out_ids,
            out_scores,
            cost,
            share,
            min(m, _SHARES),
        )


@njit(cache=True, nogil=True)
def _scan_share(
    queries,
    centroid_block,
    rows,
    offsets,
    ids,
    probes,
    slack,
    out_ids,
    out_scores,
    cost,
    share,
    shares,
):
    """The queries of one share of ``shares`` (a consecutive run of rows), with their
    own scratch arrays."""
    m, lists = queries.shape[0], offsets.shape[0] - 1
    longest = 0
    for l in range(lists):
        longest = max(longest, offsets[l + 1] - offsets[l])
    room = min(rows.shape[0], probes * longest)  # the most vectors p lists can hold
    sums = np.empty(lists, np.float64)
    proposed = np.empty(room, np.float32)
    positions = np.empty(room, np.int64)
    nearest = np.empty(probes, np.int64)
    nearest_scores = np.empty(probes, np.float32)
    for i in range(share * m // shares, (share + 1) * m // shares):
        cost[i] = _ivf_query(
            queries[i],
            centroid_block,
            rows,
            offsets,
            ids,
            slack,
            out_ids[i],
            out_scores[i],
            sums,
            proposed,
            positions,
            nearest,
            nearest_scores,
        )


@njit(cache=True, nogil=True)
def _ivf_query(
    q,
    centroid_block,
    rows,
    offsets,
    ids,
    slack,
    top_ids,
    top,
    sums,
    proposed,
    positions,
    nearest,
    nearest_scores,
):
    """One query: scored against all L centroids (the one way), its best lists (as
    many as ``nearest`` holds; ties to the lower list) scanned, and the top k of their
    vectors put in ``top_ids`` and ``top`` (places left empty get id -1 and score
    -inf). Returns the dot products it cost.

    The scan takes the two steps of exact search: fast float32 scores propose
    (:func:`proposals`), and :func:`_select_row` scores the vectors within the slack
    of the k-th proposal again, the one way, and ranks them.
    """
    lists, probes = offsets.shape[0] - 1, nearest.shape[0]
    block_scores(q, centroid_block, 0, lists, sums)
    found = 0
    for l in range(lists):
        score = np.float32(sums[l])
        if found < probes or score >= nearest_scores[probes - 1]:
            found = offer(nearest, nearest_scores, found, l, score)
    count = 0
    for p in range(probes):
        a, b = offsets[nearest[p]], offsets[nearest[p] + 1]
        proposals(q, rows, a, b, proposed[count:])
        for t in range(b - a):
            positions[count + t] = a + t
        count += b - a
    _select_row(proposed[:count], positions[:count], ids, q, rows, slack, top_ids, top)
    return lists + count


@njit(cache=True, nogil=True, fastmath={"contract", "reassoc"})
def proposals(q, rows, a, b, out):
    """out[t] ~ q . rows[a + t], for t < b - a: float32 products and sums, added in
    whatever order the compiler finds fastest (several partial sums at once, fused
    multiply-adds), as a matrix product does. The fast pass: its sums can differ from
    :func:`dot`'s in the last bits, by at most the slack, so they only propose."""
    for t in range(b - a):
        v = rows[a + t]
        total = np.float32(0.0)
        for j in range(q.shape[0]):
            total += q[j] * v[j]
        out[t] = total


@njit(cache=True, nogil=True)
def block_scores(q, blocks, a, b, sums):
    """sums[t] = q . (vector a + t), for t < b - a, in float64, from the r x (b - a)
    block of ``blocks`` that holds vectors a to b - 1 coordinate by coordinate.

    The loop goes coordinate by coordinate, each step adding one product to every
    vector's sum: the inner loop reads consecutive memory and the CPU does several
    vectors at once, while each vector's sum still adds its products in coordinate
    order, as :func:`dot` does (a float64 product of float32 numbers is exact, so the
    two agree to the bit).
    """
    r, size = q.shape[0], b - a
    block = blocks[r * a : r * b].reshape(r, size)
    sums[:size] = 0.0
    for j in range(r):
        qj = np.float64(q[j])
        coordinate = block[j]
        for t in range(size):
            sums[t] += qj * coordinate[t]
