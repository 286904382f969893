"""LSA against tf-idf and scikit-learn; fusion against the reference text; reranking and
dense search."""

import math

import numpy as np
import pytest

from ragbook.retrieval.contract import Hit
from ragbook.indexing.chunking import sentence_chunks
from ragbook.retrieval.dense import DenseRetriever
from ragbook.corpus.documents import load_corpus
from ragbook.retrieval.fusion import (
    HybridRetriever,
    normalized_score_fusion,
    reciprocal_rank_fusion,
    rerank,
    score_sum_fusion,
)
from ragbook.retrieval.lsa import LSA

TEXTS = [c.indexed_text for c in sentence_chunks(load_corpus(), 100)]
QUESTIONS = [
    "How long is a year on Venus?",
    "Who discovered Triton?",
    "What moons does Mars have?",
    "How old is Ceres?",
    "Which planet has the strongest winds?",
]


def test_full_rank_lsa_ranks_like_tfidf_over_the_same_terms():
    lsa = LSA(TEXTS, dimensions=LSA(TEXTS, 1).rank)
    chunks = lsa.encode(TEXTS)
    for question in QUESTIONS:
        tfidf_row = lsa._tfidf_rows([lsa.analyzer(question)])[0]
        tfidf_scores = lsa.matrix @ tfidf_row
        lsa_scores = chunks @ lsa.encode([question])[0]
        top_tfidf = np.argsort(-tfidf_scores, kind="stable")[:10]
        top_lsa = np.argsort(-lsa_scores, kind="stable")[:10]
        # x V V^T = x for chunk rows, so cos(qV, xV) = q.x / |qV|: the same ranking as
        # the tf-idf cosine q.x
        projected = np.linalg.norm(tfidf_row @ lsa.components.T)
        np.testing.assert_allclose(lsa_scores * projected, tfidf_scores, atol=1e-5)
        assert np.array_equal(top_tfidf, top_lsa)


def test_agrees_with_truncated_svd():
    from sklearn.decomposition import TruncatedSVD

    lsa = LSA(TEXTS, 32)
    reference = TruncatedSVD(n_components=32, algorithm="arpack", random_state=0).fit(
        lsa.matrix
    )
    assert np.max(np.abs(reference.singular_values_ - lsa.singular_values)) < 1e-10
    ours, theirs = lsa.matrix @ lsa.components.T, reference.transform(lsa.matrix)
    signs = np.sign(np.sum(ours * theirs, axis=0))
    assert np.max(np.abs(ours * signs - theirs)) < 1e-8


def test_eckart_young_error_is_the_tail_of_the_spectrum():
    lsa = LSA(TEXTS, 16)
    x = lsa.matrix
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    best = (u[:, :16] * s[:16]) @ vt[:16]
    assert np.linalg.norm(x - best) ** 2 == pytest.approx(
        np.sum(lsa.all_singular_values[16:] ** 2)
    )
    rng = np.random.default_rng(0)
    for _ in range(3):  # any other rank-16 projection of the rows does worse
        basis, _ = np.linalg.qr(rng.normal(size=(x.shape[1], 16)))
        assert np.linalg.norm(x - x @ basis @ basis.T) > np.linalg.norm(x - best)


def test_lsa_errors_and_nearest_terms():
    lsa = LSA(TEXTS, 16)
    with pytest.raises(ValueError, match="between 1 and the rank"):
        LSA(TEXTS, 10_000)
    with pytest.raises(ValueError, match="shares no term"):
        lsa.encode(["zzzz qqqq"])
    with pytest.raises(ValueError, match="not in the LSA vocabulary"):
        lsa.nearest_terms("zzzz")
    neighbours = lsa.nearest_terms("moons", 5)
    assert len(neighbours) == 5 and all(t != "moons" for t, _ in neighbours)
    assert all(a[1] >= b[1] for a, b in zip(neighbours, neighbours[1:]))


def test_seed_004_fusion_with_c_10():
    bm25 = [1, 3, 2, 4]  # d1, d3, d2, d4
    dense = [2, 1, 4, 3]  # d2, d1, d4, d3
    fused = reciprocal_rank_fusion([bm25, dense], c=10)
    assert [(h.chunk_id, round(h.score, 4)) for h in fused] == [
        (1, 0.1742),
        (2, 0.1678),
        (3, 0.1548),
        (4, 0.1484),
    ]
    assert fused[0].score == pytest.approx(1 / 11 + 1 / 12)


def test_fusion_ties_missing_items_and_errors():
    assert reciprocal_rank_fusion([[5, 3], [3, 5]]) == [
        Hit(3, 1 / 61 + 1 / 62, 1),
        Hit(5, 1 / 61 + 1 / 62, 2),
    ]
    assert reciprocal_rank_fusion([[(7, 9.5), (2, 1.0)], [(2, 0.9)]], c=0) == [
        Hit(2, 1 / 2 + 1, 1),
        Hit(7, 1.0, 2),
    ]
    with pytest.raises(ValueError, match="same chunk twice"):
        reciprocal_rank_fusion([[1, 1]])
    with pytest.raises(ValueError, match="at least one ranking"):
        reciprocal_rank_fusion([])


def test_raw_score_sums_let_the_larger_scale_decide():
    bm25 = [(0, 12.0), (1, 11.0), (2, 3.0)]
    dense = [(2, 0.95), (1, 0.90), (0, 0.10)]
    assert [h.chunk_id for h in score_sum_fusion([bm25, dense])] == [
        0,
        1,
        2,
    ]  # BM25's order, unchanged
    balanced = normalized_score_fusion([bm25, dense], [0.5, 0.5])
    assert [h.chunk_id for h in balanced] == [1, 0, 2]
    assert balanced[0].score == pytest.approx(0.5 * (8 / 9) + 0.5 * (0.8 / 0.85))


def test_rerank_and_hybrid_search():
    lsa = LSA(TEXTS, 64)
    dense = DenseRetriever(lsa, TEXTS)
    first = dense.search("Who discovered Triton?", 20)
    second = rerank(
        "Who discovered Triton?",
        first,
        lambda q, ids: -np.asarray(ids, dtype=float),
        k=5,
    )
    assert [h.chunk_id for h in second] == sorted(h.chunk_id for h in first)[:5]
    from ragbook.retrieval.bm25 import BM25

    hybrid = HybridRetriever([BM25.from_texts(TEXTS), dense], c=60, depth=30)
    hits = hybrid.search("Who discovered Triton?", 5)
    assert len(hits) == 5 and all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    allowed = list(range(0, len(TEXTS), 2))
    assert all(
        h.chunk_id % 2 == 0
        for h in hybrid.search("Who discovered Triton?", 5, allowed=allowed)
    )
