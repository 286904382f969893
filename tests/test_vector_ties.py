"""Equal vectors tie by id in every search path: batch, one query at a time, with a
filter, and IVF.

Expected ids come from the rule (score descending, ties by id ascending): groups of
identical vectors are ranked by their cosine with the query, computed here in float64
from the distinct vectors, and within a group the ids ascend. The float32 products of a
batched matrix product and of a matrix-vector product differ in the last bits, so
without a rule-abiding rescoring identical rows could come back out of order.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ragbook.retrieval.ivf import IVFIndex
from ragbook.retrieval.vectors import ExactIndex


def expected_ids(
    base: np.ndarray, group_of: np.ndarray, query: np.ndarray, k: int, allowed=None
) -> list[int]:
    """The rule applied by hand: rank groups by float64 cosine, ids ascending within a
    group."""
    unit = base / np.linalg.norm(base, axis=1, keepdims=True)
    cosine = unit @ (query / np.linalg.norm(query))
    ids = (
        np.arange(group_of.size)
        if allowed is None
        else np.array(sorted(set(allowed)), dtype=np.int64)
    )
    order = sorted(ids.tolist(), key=lambda i: (-cosine[group_of[i]], i))
    return order[:k]


def repeated(
    groups: int, copies: int, dimension: int, seed: int, interleave: bool = False
):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((groups, dimension))
    group_of = (
        np.tile(np.arange(groups), copies)
        if interleave
        else np.repeat(np.arange(groups), copies)
    )
    return base, group_of, base[group_of], rng


def test_the_reported_case_batch_and_one_at_a_time_agree_and_follow_ids():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 16))
    x = np.repeat(base, 6, axis=0)
    queries = rng.standard_normal((8, 16))
    index = ExactIndex(x)
    batch = index.search_batch(queries, 3)
    for row, query in enumerate(queries):
        want = expected_ids(base, np.repeat(np.arange(3), 6), query, 3)
        assert batch.ids[row].tolist() == want
        one = index.search_one(query, 3)
        assert [i for i, _ in one] == want
        assert [s for _, s in one] == batch.scores[
            row
        ].tolist()  # identical scores, bit for bit
        assert len(set(batch.scores[row].tolist())) == 1  # one group: one score


@pytest.mark.parametrize("k", [1, 5, 6, 7, 8, 13, 18, 30])
def test_k_cutting_through_a_group_keeps_the_lowest_ids(k):
    base, group_of, x, rng = repeated(3, 6, 16, seed=1)
    queries = rng.standard_normal((8, 16))
    index = ExactIndex(x)
    batch = index.search_batch(queries, k)
    for row, query in enumerate(queries):
        want = expected_ids(base, group_of, query, k)
        assert batch.ranking(row) == index.search_one(query, k)
        assert [i for i, _ in batch.ranking(row)] == want
        if k > x.shape[0]:
            assert batch.ids[row, x.shape[0] :].tolist() == [-1] * (k - x.shape[0])


@pytest.mark.parametrize("k", [3, 10, 40, 600])
def test_interleaved_duplicates_in_a_large_index(k):
    # 100 distinct vectors, 40 copies each, copy j of vector g at row j * 100 + g: the
    # copies of a vector lie far apart in the row, and k = 3, 10, 40 and 600 cut
    # through a run of copies at different places
    base, group_of, x, rng = repeated(100, 40, 32, seed=2, interleave=True)
    queries = rng.standard_normal((12, 32))
    index = ExactIndex(x)
    batch = index.search_batch(queries, k)
    for row, query in enumerate(queries):
        want = expected_ids(base, group_of, query, k)
        assert batch.ids[row].tolist() == want
        assert index.search_one(query, k) == batch.ranking(row)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 20), data=st.data())
def test_allowed_filters_rank_the_allowed_duplicates_by_id(seed, k, data):
    base, group_of, x, rng = repeated(4, 5, 8, seed=seed)
    allowed = data.draw(st.sets(st.integers(0, x.shape[0] - 1), max_size=x.shape[0]))
    query = rng.standard_normal(8)
    index = ExactIndex(x)
    got = index.search_one(query, k, allowed=allowed)
    assert [i for i, _ in got] == expected_ids(base, group_of, query, k, allowed)
    unfiltered = dict(index.search_one(query, x.shape[0]))
    assert all(
        unfiltered[i] == s for i, s in got
    )  # a filter changes which chunks compete, not their scores


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), batch=st.integers(1, 9), k=st.integers(1, 12))
def test_a_query_gets_the_same_answer_alone_or_in_any_batch(seed, batch, k):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((300, 24)).astype(np.float32)
    x[150:160] = x[7]  # a few duplicates among ordinary vectors
    queries = rng.standard_normal((batch, 24))
    index = ExactIndex(x)
    whole = index.search_batch(queries, k)
    for row in range(batch):
        alone = index.search_batch(queries[row : row + 1], k)
        assert alone.ids[0].tolist() == whole.ids[row].tolist()
        assert alone.scores[0].tolist() == whole.scores[row].tolist()
        assert index.search_one(queries[row], k) == whole.ranking(row)
        scores = whole.scores[row][whole.ids[row] >= 0]
        ids = whole.ids[row][whole.ids[row] >= 0]
        assert all(
            s1 > s2 or (s1 == s2 and i1 < i2)
            for s1, s2, i1, i2 in zip(scores, scores[1:], ids, ids[1:])
        )


@pytest.mark.parametrize("k", [2, 7, 25])
def test_ivf_ties_by_id_and_scanning_every_list_gives_the_exact_answer(k):
    base, group_of, x, rng = repeated(5, 9, 12, seed=3, interleave=True)
    queries = rng.standard_normal((10, 12))
    ivf = IVFIndex(x, 4, seed=1)
    exact = ExactIndex(x)
    everything = ivf.search_batch(queries, k, probes=4)
    want = exact.search_batch(queries, k)
    assert everything.ids.tolist() == want.ids.tolist()
    assert everything.scores.tolist() == want.scores.tolist()
    for row, query in enumerate(queries):
        assert everything.ids[row].tolist()[: min(k, x.shape[0])] == expected_ids(
            base, group_of, query, k
        )
    # one query at a time (the lists read as one block of rows when they all are)
    for row, query in enumerate(queries):
        alone = ivf.search_batch(query, k, probes=4)
        assert alone.ids[0].tolist()[: min(k, x.shape[0])] == expected_ids(
            base, group_of, query, k
        )
        assert alone.scores[0].tolist() == want.scores[row].tolist()
    # with one probe, identical vectors share a list (k-means puts equal points
    # together): still by id
    one = ivf.search_batch(queries, k, probes=1)
    for row in range(queries.shape[0]):
        ranked = one.ranking(row)
        for (i1, s1), (i2, s2) in zip(ranked, ranked[1:]):
            assert s1 > s2 or (s1 == s2 and i1 < i2)


def test_a_batch_cut_into_parts_gives_each_query_its_answer_alone():
    # 130 queries: as many parts as the CPU has threads (at least 32 queries each)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((500, 16)).astype(np.float32)
    x[300:310] = x[5]
    queries = rng.standard_normal((130, 16))
    queries[77] = x[5]
    index = ExactIndex(x)
    whole = index.search_batch(queries, 12)
    for row in (0, 64, 65, 77, 129):
        alone = index.search_batch(queries[row], 12)
        assert alone.ids[0].tolist() == whole.ids[row].tolist()
        assert alone.scores[0].tolist() == whole.scores[row].tolist()
    assert whole.ids[77, :11].tolist() == [5, *range(300, 310)]
