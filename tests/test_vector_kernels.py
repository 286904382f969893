"""The compiled loops of vector search (ragbook.retrieval.vector_kernels), each against
an independent computation: math.fsum for scores, Python's sorted for top lists, NumPy's
norm for unit rows, a brute-force ranking for the inverted-file scan."""

import math

import numpy as np
import pytest

from ragbook.retrieval.vector_kernels import (
    block_scores,
    dot,
    proposals,
    ivf_scan,
    ivf_scan_parallel,
    offer,
    select_rows,
    unit_rows_into,
)
from ragbook.retrieval.ivf import IVFIndex
from ragbook.retrieval.vectors import dot_slack


def exact_score(q, v):
    """The score rounded once from the exact dot product (fsum of exact products)."""
    return np.float32(math.fsum(float(a) * float(b) for a, b in zip(q, v)))


def unit32(rng, n, r):
    x = rng.normal(size=(n, r))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_dot_is_the_correctly_rounded_dot_product():
    rng = np.random.default_rng(0)
    for r in (1, 2, 7, 64, 128, 384):
        q, x = unit32(rng, 1, r)[0], unit32(rng, 200, r)
        assert [dot(q, v) for v in x] == [exact_score(q, v) for v in x]


def test_block_scores_agree_with_dot_to_the_bit():
    rng = np.random.default_rng(1)
    r, n = 48, 300
    q, x = unit32(rng, 1, r)[0], unit32(rng, n, r)
    a, b = 37, 251  # vectors a to b - 1, stored coordinate by coordinate
    blocks = np.concatenate([x[:a].T.ravel(), x[a:b].T.ravel(), x[b:].T.ravel()])
    sums = np.empty(n)
    block_scores(q, blocks, a, b, sums)
    assert np.array_equal(sums[: b - a].astype(np.float32), [dot(q, v) for v in x[a:b]])


def test_proposals_are_within_the_slack_of_the_exact_scores():
    rng = np.random.default_rng(7)
    for r in (3, 64, 128, 384):
        q, x = unit32(rng, 1, r)[0], unit32(rng, 300, r)
        out = np.empty(300 - 20, np.float32)
        proposals(q, x, 20, 300, out)
        exact = np.array([float(exact_score(q, v)) for v in x[20:]])
        assert np.abs(out - exact).max() <= dot_slack(r) / 2


@pytest.mark.parametrize("k", [1, 3, 10])
def test_offer_keeps_the_top_k_by_score_then_id(k):
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 6, size=200).astype(np.float32)  # many ties
    ids, best = np.full(k, -1), np.full(k, -np.inf, dtype=np.float32)
    filled = 0
    for i in rng.permutation(200):  # any order of arrival
        filled = offer(ids, best, filled, i, scores[i])
    expected = sorted(range(200), key=lambda i: (-scores[i], i))[:k]
    assert filled == k and ids.tolist() == expected
    assert best.tolist() == [scores[i] for i in expected]


def test_offer_with_fewer_candidates_than_places():
    ids, best = np.full(4, -1), np.full(4, -np.inf, dtype=np.float32)
    filled = 0
    for i, s in ((5, 0.5), (2, 0.5), (9, 0.7)):
        filled = offer(ids, best, filled, i, np.float32(s))
    assert filled == 3 and ids.tolist() == [9, 2, 5, -1]


def test_select_rows_recovers_the_exact_top_k_from_perturbed_proposals():
    rng = np.random.default_rng(2)
    r, n, m, k = 32, 400, 20, 7
    x = unit32(rng, n, r)
    x[200:210] = x[100]  # ten copies: ties that only the id can break
    q = unit32(rng, m, r)
    q[0] = x[100]
    slack = dot_slack(r)
    # proposals off by up to a third of the slack either way
    noise = rng.uniform(-slack / 3, slack / 3, size=(m, n))
    proposed = (q.astype(np.float64) @ x.T.astype(np.float64) + noise).astype(
        np.float32
    )
    ids, scores = np.empty((m, k), np.int64), np.empty((m, k), np.float32)
    select_rows(proposed, np.arange(n), np.arange(n), q, x, slack, ids, scores)
    for i in range(m):
        exact = [exact_score(q[i], v) for v in x]
        expected = sorted(range(n), key=lambda j: (-exact[j], j))[:k]
        assert ids[i].tolist() == expected
        assert scores[i].tolist() == [exact[j] for j in expected]
    assert ids[0].tolist() == [100, 200, 201, 202, 203, 204, 205]


def test_unit_rows_into_divides_by_the_length_and_reports_the_first_bad_row():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 16))
    out = np.empty(x.shape, np.float32)
    assert unit_rows_into(x, out) == -1
    expected = x / np.linalg.norm(x, axis=1, keepdims=True)
    assert np.allclose(out, expected, rtol=0, atol=2**-24)
    for bad_row, value in ((7, 0.0), (3, np.nan), (12, np.inf)):
        y = x.copy()
        y[bad_row] = 0.0 if value == 0.0 else y[bad_row]
        y[bad_row, 5] = value if value != 0.0 else 0.0
        assert unit_rows_into(y, np.empty(y.shape, np.float32)) == bad_row


def brute_force(q, x, k):
    exact = [exact_score(q, v) for v in x]
    return sorted(range(len(x)), key=lambda j: (-exact[j], j))[:k]


@pytest.mark.parametrize("scan", [ivf_scan, ivf_scan_parallel])
def test_ivf_scan_of_every_list_is_the_brute_force_ranking(scan):
    rng = np.random.default_rng(4)
    x = unit32(rng, 600, 24)
    x[300:304] = x[17]  # copies that tie
    ivf = IVFIndex(x, lists=12, seed=1)
    q = unit32(rng, 40, 24)
    q[3] = x[17]
    k = 6
    ids, scores = np.empty((40, k), np.int64), np.empty((40, k), np.float32)
    cost = np.empty(40, np.int64)
    scan(
        q,
        ivf.centroid_block,
        ivf.rows,
        ivf.offsets,
        ivf.order,
        12,
        dot_slack(24),
        ids,
        scores,
        cost,
    )
    for i in range(40):
        assert ids[i].tolist() == brute_force(q[i], x, k)
    assert ids[3, :5].tolist() == [17, 300, 301, 302, 303]
    assert (cost == 12 + 600).all()


def test_ivf_scan_probes_the_nearest_lists_and_pads_short_results():
    rng = np.random.default_rng(5)
    x = unit32(rng, 200, 8)
    ivf = IVFIndex(x, lists=10, seed=2)
    q = unit32(rng, 5, 8)
    k = 250  # more than any list holds
    ids, scores = np.empty((5, k), np.int64), np.empty((5, k), np.float32)
    cost = np.empty(5, np.int64)
    ivf_scan(
        q,
        ivf.centroid_block,
        ivf.rows,
        ivf.offsets,
        ivf.order,
        2,
        dot_slack(8),
        ids,
        scores,
        cost,
    )
    for i in range(5):
        # the two lists whose centroids score best (ties to the lower list)
        near = sorted(range(10), key=lambda l: (-dot(q[i], ivf.centroids[l]), l))[:2]
        members = [
            j for l in near for j in ivf.order[ivf.offsets[l] : ivf.offsets[l + 1]]
        ]
        expected = sorted(members, key=lambda j: (-exact_score(q[i], x[j]), j))
        assert ids[i, : len(expected)].tolist() == expected
        assert (ids[i, len(expected) :] == -1).all()
        assert np.isneginf(scores[i, len(expected) :]).all()
        assert cost[i] == 10 + len(members)


def test_the_parallel_scan_matches_the_serial_one_to_the_bit():
    rng = np.random.default_rng(6)
    x = unit32(rng, 3000, 32)
    ivf = IVFIndex(x, lists=40, seed=3)
    q = unit32(rng, 300, 32)
    out = []
    for scan in (ivf_scan, ivf_scan_parallel):
        ids, scores = np.empty((300, 10), np.int64), np.empty((300, 10), np.float32)
        cost = np.empty(300, np.int64)
        scan(
            q,
            ivf.centroid_block,
            ivf.rows,
            ivf.offsets,
            ivf.order,
            5,
            dot_slack(32),
            ids,
            scores,
            cost,
        )
        out.append((ids, scores, cost))
    for serial, parallel in zip(*out):
        assert np.array_equal(serial, parallel)
    # and a batch large enough to be shared among threads equals its queries alone
    batch = ivf.search_batch(q, 10, probes=5)
    for i in (0, 150, 299):
        alone = ivf.search_batch(q[i], 10, probes=5)
        assert np.array_equal(alone.ids[0], batch.ids[i])
        assert np.array_equal(alone.scores[0], batch.scores[i])
