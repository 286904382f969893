"""Exact top-k over an inverted index without scoring every posting: MaxScore
(chapter 5).

A query term t can add at most its *upper bound* U_t, the largest contribution any of
its postings holds. Once k chunks have been found, the k-th best score so far is a
threshold theta that a new chunk must beat. Sort the query terms by bound, smallest
first, and add the bounds up: U_1, U_1 + U_2, ... The longest prefix whose sum does
not exceed theta holds the *non-essential* terms: a chunk that contains only those
cannot score above theta, so no chunk is found through their postings. The other,
*essential*, terms are walked chunk by chunk in id order (document at a time); for
each chunk met there, the non-essential terms are looked up (a jump forward in their
postings) from the largest bound down, and the chunk is dropped as soon as its
partial score plus the bounds still to look up cannot beat theta (Turtle and Flood,
1995). As theta rises, more terms become non-essential, and their postings are jumped
over instead of read.

The result is exact. A chunk met later ties with an earlier one only to lose (ties
go to the lower id, and chunks come in id order), so "cannot beat" means "at most
theta". The bounds are added in float64 and widened by (m + 1) float32 rounding units
of an m-term query before the comparison, which covers the rounding of the float32
sum the score is; a chunk that survives is scored by adding its terms' float32
contributions in query order, the same sum, in the same order, as exhaustive scoring.

The loop is compiled by Numba on first use (and cached on disk), like the package's
vector search kernels; :func:`maxscore_steps` is the same algorithm in plain Python,
step by step, for reading and tracing. :func:`top_k_batch` ranks a batch of queries in
one compiled call, each by MaxScore or by scoring every posting, as
:func:`prune_pays` chooses from k and the lengths of the query's postings lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit

__all__ = [
    "Step",
    "maxscore",
    "maxscore_steps",
    "prune_pays",
    "slack",
    "top_k_batch",
]


@njit(cache=True, nogil=True)
def slack(m: int) -> float:
    """The factor a sum of upper bounds is widened by before it is compared with a
    float32 score of an ``m``-term query: 1 + (m + 1) 2^-23."""
    return 1.0 + (m + 1) * 2.0**-23


@njit(cache=True, nogil=True)
def _worse(score_a, id_a, score_b, id_b):
    """True when (score_a, id_a) ranks below (score_b, id_b): a lower score, or the
    same score and a higher id."""
    return score_a < score_b or (score_a == score_b and id_a > id_b)


@njit(cache=True, nogil=True)
def _sift_down(heap_ids, heap_scores, size, place):
    """Restore the heap below ``place``: every entry ranks at or below its
    children, so the root is the worst entry kept."""
    while True:
        child = 2 * place + 1
        if child >= size:
            return
        if child + 1 < size and _worse(
            heap_scores[child + 1],
            heap_ids[child + 1],
            heap_scores[child],
            heap_ids[child],
        ):
            child += 1
        if not _worse(
            heap_scores[child], heap_ids[child], heap_scores[place], heap_ids[place]
        ):
            return
        _swap(heap_ids, heap_scores, place, child)
        place = child


@njit(cache=True, nogil=True)
def _swap(heap_ids, heap_scores, a, b):
    """Exchange two entries of a heap."""
    heap_ids[a], heap_ids[b] = heap_ids[b], heap_ids[a]
    heap_scores[a], heap_scores[b] = heap_scores[b], heap_scores[a]


@njit(cache=True, nogil=True)
def _push(heap_ids, heap_scores, size, doc, score):
    """Add an entry to a heap that has room; returns the new size."""
    place = size
    heap_ids[place], heap_scores[place] = doc, score
    while place > 0:
        parent = (place - 1) // 2
        if not _worse(
            heap_scores[place], heap_ids[place], heap_scores[parent], heap_ids[parent]
        ):
            break
        _swap(heap_ids, heap_scores, place, parent)
        place = parent
    return size + 1


@njit(cache=True, nogil=True)
def _next_geq(doc_ids, position, end, target):
    """The first position in [position, end) whose chunk id is at least ``target``
    (``end`` if none): a galloping search, doubling the step, then bisection."""
    if position >= end or doc_ids[position] >= target:
        return position
    low, step = position, 1
    while low + step < end and doc_ids[low + step] < target:
        low += step
        step *= 2
    high = min(low + step, end)
    # doc_ids[low] < target, and doc_ids[high] >= target or high == end
    while high - low > 1:
        middle = (low + high) // 2
        if doc_ids[middle] < target:
            low = middle
        else:
            high = middle
    return high


@njit(cache=True, nogil=True)
def maxscore(
    doc_ids,
    weights,
    indptr,
    upper_bounds,
    terms,
    n_chunks,
    allowed,
    k,
    out_ids,
    out_scores,
):
    """The top ``k`` chunks of a query by MaxScore, into ``out_ids`` and
    ``out_scores`` (best first, ties by id); returns (number found, postings read), or
    (-1, 0) when the bounds cannot be used (one is not finite, or their sum is beyond
    float32) and nothing was written.

    ``terms`` are the query's term ids in query order; term t has its postings at
    ``doc_ids[indptr[t]:indptr[t + 1]]`` with contributions ``weights[...]`` (float32,
    every one positive) and the upper bound ``upper_bounds[t]``. ``allowed`` is empty
    (every chunk may be returned) or holds one flag per chunk. Only chunks that
    contain a query term are returned: fewer than ``k`` when fewer match.
    """
    m = terms.shape[0]
    widen = slack(m)
    bounds = np.empty(m, dtype=np.float64)
    starts = np.empty(m, dtype=np.int64)
    ends = np.empty(m, dtype=np.int64)
    for j in range(m):
        bounds[j] = upper_bounds[terms[j]]
        starts[j], ends[j] = indptr[terms[j]], indptr[terms[j] + 1]
    order = np.argsort(bounds, kind="mergesort")  # smallest bound first
    prefix = np.empty(m, dtype=np.float64)  # prefix[i]: bounds of order[0..i]
    total = 0.0
    for i in range(m):
        total += bounds[order[i]]
        prefix[i] = total
    if not np.isfinite(total) or total * widen > np.finfo(np.float32).max:
        return -1, 0
    position = starts.copy()
    # the contribution of term j at the chunk met[j] (the last chunk it was found in)
    found = np.zeros(m, dtype=np.float32)
    met = np.full(m, -1, dtype=np.int64)
    heap_ids = np.empty(k, dtype=np.int64)
    heap_scores = np.empty(k, dtype=np.float32)
    size = 0
    theta = -np.inf
    first_essential = 0  # order[first_essential:] are the essential terms
    filtered = allowed.shape[0] > 0
    postings_read = 0
    current = n_chunks
    for j in range(m):
        if position[j] < ends[j] and doc_ids[position[j]] < current:
            current = doc_ids[position[j]]
    while current < n_chunks and first_essential < m:
        # the essential terms: read the current chunk's postings, find the next chunk
        partial = 0.0
        following = n_chunks
        for i in range(first_essential, m):
            j = order[i]
            p = position[j]
            if p < ends[j] and doc_ids[p] == current:
                found[j], met[j] = weights[p], current
                partial += weights[p]
                postings_read += 1
                p += 1
                position[j] = p
            if p < ends[j] and doc_ids[p] < following:
                following = doc_ids[p]
        alive = not filtered or allowed[current] != 0
        # the non-essential terms, largest bound first, while the chunk can still win
        i = first_essential - 1
        while alive and i >= 0:
            if size == k and (partial + prefix[i]) * widen <= theta:
                alive = False
                break
            j = order[i]
            p = _next_geq(doc_ids, position[j], ends[j], current)
            position[j] = p
            if p < ends[j] and doc_ids[p] == current:
                found[j], met[j] = weights[p], current
                partial += weights[p]
                postings_read += 1
            i -= 1
        if alive and (size < k or partial * widen > theta):
            score = np.float32(0.0)
            for j in range(m):  # query order, float32: as exhaustive scoring adds
                if met[j] == current:
                    score += found[j]
            if size < k:
                size = _push(heap_ids, heap_scores, size, current, score)
            elif _worse(heap_scores[0], heap_ids[0], score, current):
                heap_ids[0], heap_scores[0] = current, score
                _sift_down(heap_ids, heap_scores, size, 0)
            if size == k:
                theta = heap_scores[0]
                while first_essential < m and prefix[first_essential] * widen <= theta:
                    first_essential += 1
        current = following
    # best first: pop the worst entry to the back, one at a time
    for last in range(size - 1, -1, -1):
        out_ids[last], out_scores[last] = heap_ids[0], heap_scores[0]
        heap_ids[0], heap_scores[0] = heap_ids[last], heap_scores[last]
        _sift_down(heap_ids, heap_scores, last, 0)
    return size, postings_read


@njit(cache=True, nogil=True)
def prune_pays(size, postings, longest):
    """Whether MaxScore is expected to beat scoring every posting for a query whose
    terms hold ``postings`` postings, the longest list ``longest``, when the top
    ``size`` are asked for (the automatic choice of :func:`top_k_batch`).

    MaxScore saves only once theta, the size-th best score, rises above the bound of
    the longest list, so that its postings are jumped over; until then it reads every
    posting, with several times a scan's work per chunk (a cursor per term, a heap).
    It is chosen when the longest list holds at least 8,192 postings, at least 256
    times ``size``, and the query has other lists. Measured query by query, both ways,
    on SciFact (5,183 chunks, 300 queries) and the benchmark's Zipf collections
    (100,000 and 1,000,000 chunks) at k = 10, 100 and 1,000: the choice was within 1 %
    of the faster way on each, and it stays within 1 % with the 8,192 anywhere from
    4,096 to 32,768 and the 256 from 128 to 512 (SciFact's lists are too short:
    scoring them is 2.6 to 12 times faster; on a million chunks MaxScore is 8 times
    faster at k = 10 and 2.2 times at k = 1,000).
    """
    return longest >= 8192 and longest >= 256 * size and postings > longest


@njit(cache=True, nogil=True)
def _exhaustive(doc_ids, weights, indptr, terms, filters, scratch, out):
    """Score every posting of ``terms`` into ``scratch``, write the keys (see
    :func:`top_k_batch`) of the best chunks met (allowed ones only) into ``out``,
    unordered, then those of the chunks met by none (:func:`_fill_zeros`), and zero
    ``scratch`` again; returns the postings read.

    Scores are float32 sums in query order, as BM25.scores adds them. A chunk is met
    when its score leaves 0 (every contribution is positive); it is listed without a
    branch."""
    scores, touched = scratch
    allowed = filters[0]
    met, read = 0, 0
    for j in range(terms.shape[0]):
        for p in range(indptr[terms[j]], indptr[terms[j] + 1]):
            d = doc_ids[p]
            touched[met] = d
            score = scores[d]
            met += score == 0
            scores[d] = score + weights[p]
        read += indptr[terms[j] + 1] - indptr[terms[j]]
    bits = scores.view(np.uint32)
    keys = np.empty(met, dtype=np.uint64)
    kept = 0
    for i in range(met):
        d = touched[i]
        keys[kept] = (np.uint64(0xFFFFFFFF - bits[d]) << np.uint64(32)) | np.uint64(d)
        kept += allowed.shape[0] == 0 or allowed[d] != 0
    found = _smallest(keys[:kept], out)
    _fill_zeros(found, filters[1], scores, out)
    for i in range(met):
        scores[touched[i]] = 0.0
    return read


@njit(cache=True, nogil=True)
def _smallest(keys, out):
    """The smallest of distinct ``keys`` into ``out``, unordered, as many as it holds
    (all of them if fewer); returns how many: a heap for a short ``out``, else a
    partition."""
    size, n = out.shape[0], keys.shape[0]
    if n <= size:
        out[:n] = keys
        return n
    if size > 64:
        out[:] = np.partition(keys, size - 1)[:size]
        return size
    out[:] = keys[:size]  # a heap with the largest key on top
    for place in range(size // 2 - 1, -1, -1):
        _sift_largest_down(out, place)
    for i in range(size, n):
        if keys[i] < out[0]:
            out[0] = keys[i]
            _sift_largest_down(out, 0)
    return size


@njit(cache=True, nogil=True)
def _sift_largest_down(heap, place):
    """Restore a heap whose every entry is at least its children's, below ``place``."""
    size = heap.shape[0]
    while 2 * place + 1 < size:
        child = 2 * place + 1
        if child + 1 < size and heap[child + 1] > heap[child]:
            child += 1
        if heap[place] >= heap[child]:
            return
        heap[place], heap[child] = heap[child], heap[place]
        place = child


@njit(cache=True, nogil=True)
def _fill_zeros(found, candidates, scores, out):
    """After the ``found`` chunks that hold a query term (their ``scores`` not 0), the
    keys of the chunks that hold none, score 0, in id order: from ``candidates``
    (sorted ids) or, when it is empty, from every id."""
    place, i = found, 0
    limit = candidates.shape[0] if candidates.shape[0] else scores.shape[0]
    while place < out.shape[0] and i < limit:
        d = candidates[i] if candidates.shape[0] else i
        if scores[d] == 0:
            out[place] = (np.uint64(0xFFFFFFFF) << np.uint64(32)) | np.uint64(d)
            place += 1
        i += 1


@njit(cache=True, nogil=True)
def top_k_batch(index, terms, starts, modes, filters, first, last, scratch, out, read):
    """The top k of queries ``first`` to ``last - 1`` of a batch, each by MaxScore or
    by scoring every posting, as keys into rows of ``out``, unordered: the best chunks,
    then those without a query term (score 0) in id order. A key is (~bits << 32) | id
    for a score whose float32 bits are ``bits``: a float32 of at least 0 orders as its
    bits, so keys ascending are scores descending, then ids ascending.

    ``index`` is (doc_ids, weights, indptr, upper_bounds) as for :func:`maxscore`;
    query q's term ids are ``terms[starts[q]:starts[q + 1]]``, every contribution of
    theirs positive. ``modes[q]`` is 0 (the choice of :func:`prune_pays`), 1
    (MaxScore), 2 (every posting) or 3 (left out). ``filters`` is (flags, ids): both
    empty, or one flag per chunk and the allowed ids in order. ``scratch`` is (float32
    scores, int32 ids), one entry per chunk (and one more id), the scores zero on entry
    and on return. ``read[q]`` gets the postings read, or stays as it was (-1) for a
    row left out or whose bounds add up beyond float32 (the row is then left for the
    caller).
    """
    doc_ids, weights, indptr, upper_bounds = index
    scores = scratch[0]
    size = out.shape[1]
    found_ids = np.empty(size, dtype=np.int64)
    found_scores = np.empty(size, dtype=np.float32)
    for q in range(first, last):
        if modes[q] > 2:  # left for the caller
            continue
        query = terms[starts[q] : starts[q + 1]]
        postings, longest, total = 0, 0, 0.0
        for t in query:
            postings += indptr[t + 1] - indptr[t]
            longest = max(longest, indptr[t + 1] - indptr[t])
            total += upper_bounds[t]
        widened = total * slack(query.shape[0])
        if not np.isfinite(widened) or widened > np.finfo(np.float32).max:
            continue
        prune = modes[q] == 1 or (modes[q] == 0 and prune_pays(size, postings, longest))
        if not prune or query.shape[0] == 0:
            read[q] = _exhaustive(
                doc_ids, weights, indptr, query, filters, scratch, out[q]
            )
            continue
        found, read[q] = maxscore(
            doc_ids,
            weights,
            indptr,
            upper_bounds,
            query,
            scores.shape[0],
            filters[0],
            size,
            found_ids,
            found_scores,
        )
        bits = found_scores.view(np.uint32)
        for i in range(found):  # marked by a score of 1 for a moment
            high = np.uint64(0xFFFFFFFF - bits[i]) << np.uint64(32)
            out[q, i] = high | np.uint64(found_ids[i])
            scores[found_ids[i]] = 1.0
        _fill_zeros(found, filters[1], scores, out[q])
        for i in range(found):
            scores[found_ids[i]] = 0.0


@dataclass(frozen=True)
class Step:
    """One chunk met by MaxScore: the essential terms while it was met, the query
    terms found in it (one posting read each), its score (or the bound it was dropped
    at), what became of it, and the threshold theta afterwards (-inf while fewer than
    k chunks are held)."""

    chunk_id: int
    essential: tuple[str, ...]
    found: tuple[str, ...]
    value: float
    outcome: str
    threshold: float


def maxscore_steps(bm25, query: str | Sequence[str], k: int) -> list[Step]:
    """MaxScore on a :class:`~ragbook.retrieval.bm25.BM25` retriever, step by step, in
    plain Python: the same decisions as :func:`maxscore`, written to be read and traced
    on a small index (it is slow: every step looks through whole postings lists).

    The outcome of a step is "enters" (the chunk joins the top k), "scored, too
    low" (it was scored in full and does not beat theta), or "dropped" (its partial
    score plus the bounds still to look up cannot beat theta; ``value`` is that
    bound).
    """
    terms = bm25.term_ids(query)
    names = {i: t for t, i in bm25.vocabulary.items() if i in set(terms)}
    postings = []  # per query term: {chunk id: contribution}
    for i in terms:
        a, b = bm25.indptr[i], bm25.indptr[i + 1]
        postings.append(dict(zip(bm25.doc_ids[a:b].tolist(), bm25.weights[a:b])))
    bounds = [float(bm25.upper_bounds[i]) for i in terms]
    order = sorted(range(len(terms)), key=lambda j: bounds[j])  # smallest first
    prefix = np.cumsum([bounds[j] for j in order]).tolist()
    widen = slack(len(terms))
    top: list[tuple[float, int]] = []  # (score, chunk id), best first
    theta, first_essential, current, steps = -np.inf, 0, -1, []
    while first_essential < len(terms):
        essential = order[first_essential:]
        later = [c for j in essential for c in postings[j] if c > current]
        if not later:
            break
        current = min(later)
        found = {j: postings[j][current] for j in essential if current in postings[j]}
        outcome = None
        for i in range(first_essential - 1, -1, -1):  # largest bound first
            partial = sum(float(w) for w in found.values())
            if len(top) == k and (partial + prefix[i]) * widen <= theta:
                outcome, value = "dropped", partial + prefix[i]
                break
            if current in postings[order[i]]:
                found[order[i]] = postings[order[i]][current]
        if outcome is None:
            value = np.float32(0.0)
            for j in range(len(terms)):  # query order, float32, as exhaustive scoring
                value += found.get(j, np.float32(0.0))
            value = float(value)
            if len(top) < k or (value, -current) > (top[-1][0], -top[-1][1]):
                top = sorted(top + [(value, current)], key=lambda e: (-e[0], e[1]))
                top, outcome = top[:k], "enters"
            else:
                outcome = "scored, too low"
            if len(top) == k:
                theta = top[-1][0]
                while (
                    first_essential < len(terms)
                    and prefix[first_essential] * widen <= theta
                ):
                    first_essential += 1
        steps.append(
            Step(
                current,
                tuple(names[terms[j]] for j in essential),
                tuple(names[terms[j]] for j in sorted(found)),
                value,
                outcome,
                theta,
            )
        )
    return steps
