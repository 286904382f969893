"""BM25's top k with MaxScore pruning against exhaustive scoring, to the bit, and
against bm25s, an independent implementation of the same BM25."""

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ragbook.retrieval.bm25 import BM25, rsj_idf
from ragbook.retrieval.pruning import maxscore_steps, prune_pays, slack

VOCABULARY = list("abcdefgh")  # few terms, so that many chunks tie

chunk = st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=12)
corpus = st.lists(chunk, min_size=1, max_size=40).filter(lambda c: any(c))
query = st.lists(st.sampled_from(VOCABULARY + ["zz"]), min_size=1, max_size=6)
parameters = st.fixed_dictionaries(
    {
        "k1": st.sampled_from([0.0, 0.9, 1.2, 1.5, 3.0]),
        "b": st.sampled_from([0.0, 0.4, 0.75, 1.0]),
        "count_repeats": st.booleans(),
    }
)


def allowed_subsets(n):
    return st.one_of(st.none(), st.lists(st.integers(0, n - 1), min_size=0, max_size=n))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), chunks=corpus, terms=query, params=parameters)
def test_pruned_top_k_is_the_exhaustive_top_k_to_the_bit(data, chunks, terms, params):
    model = BM25.from_tokens(chunks, **params)
    k = data.draw(st.integers(1, len(chunks) + 3), label="k")
    allowed = data.draw(allowed_subsets(len(chunks)), label="allowed")
    pruned = model.search(terms, k, allowed)
    exhaustive = model.search(terms, k, allowed, pruning=False)
    # Hit records compare ids, scores (floats, so to the bit) and ranks
    assert pruned == exhaustive
    ids, scores = model.search_arrays(terms, k, allowed)
    ids_x, scores_x = model.search_arrays(terms, k, allowed, pruning=False)
    assert ids.dtype == ids_x.dtype and scores.dtype == scores_x.dtype
    assert np.array_equal(ids, ids_x) and np.array_equal(scores, scores_x)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), chunks=corpus, terms=query)
def test_negative_weights_are_ranked_as_exhaustive_scoring_ranks_them(
    data, chunks, terms
):
    # the classic RSJ weight is negative for a term in more than half the chunks:
    # upper bounds no longer hold, and the search must still agree
    model = BM25.from_tokens(chunks, idf=rsj_idf)
    k = data.draw(st.integers(1, len(chunks) + 1), label="k")
    allowed = data.draw(allowed_subsets(len(chunks)), label="allowed")
    assert model.search(terms, k, allowed) == model.search(
        terms, k, allowed, pruning=False
    )


def zipf_corpus(n_chunks, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 60, size=n_chunks)
    ranks = rng.zipf(1.3, size=int(lengths.sum())) % 3000
    words = [f"w{r}" for r in ranks.tolist()]
    ends = np.cumsum(lengths).tolist()
    return [words[a:b] for a, b in zip([0] + ends[:-1], ends)], rng


def test_pruning_skips_postings_and_keeps_every_hit_on_a_zipf_corpus():
    chunks, rng = zipf_corpus(3000, seed=7)
    model = BM25.from_tokens(chunks)
    read = scanned = 0
    for _ in range(200):
        terms = [f"w{r}" for r in (rng.zipf(1.3, size=rng.integers(1, 8)) % 3000)]
        k = int(rng.choice([1, 5, 10, 100]))
        assert model.search(terms, k) == model.search(terms, k, pruning=False)
        pruned, exhaustive = model.postings_read(terms, k)
        assert pruned <= exhaustive
        read, scanned = read + pruned, scanned + exhaustive
    # the point of pruning: far fewer postings read than the query terms hold
    assert read < 0.5 * scanned


def reference_scores(chunks, terms, k1, b):
    """bm25s's scores (method "lucene", the same idf) of every chunk, times k1 + 1 as
    ragbook's scores are (see ragbook.retrieval.bm25), in float64."""
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
    retriever.index(chunks, show_progress=False)
    known = [t for t in dict.fromkeys(terms) if any(t in c for c in chunks)]
    if not known:
        return np.zeros(len(chunks))
    return retriever.get_scores(known).astype(np.float64) * (k1 + 1)


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    chunks=st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12),
        min_size=2,
        max_size=40,
    ),
    terms=query,
    k1=st.sampled_from([0.9, 1.2, 1.5]),
    b=st.sampled_from([0.4, 0.75]),
)
def test_pruned_top_k_is_bm25s_top_k(data, chunks, terms, k1, b):
    model = BM25.from_tokens(chunks, k1=k1, b=b)
    k = data.draw(st.integers(1, len(chunks)), label="k")
    allowed = data.draw(allowed_subsets(len(chunks)), label="allowed")
    expected = reference_scores(chunks, terms, k1, b)
    pool = np.arange(len(chunks)) if allowed is None else np.unique(allowed)
    hits = model.search(terms, k, allowed)
    assert len(hits) == min(k, pool.size)
    ids = [hit.chunk_id for hit in hits]
    assert set(ids) <= set(pool.tolist()) and len(set(ids)) == len(ids)
    # every score is bm25s's (float32 rounding apart), best first
    found = np.array([hit.score for hit in hits])
    assert found == pytest.approx(expected[ids], rel=1e-5, abs=1e-6)
    assert all(a >= b for a, b in zip(found, found[1:]))
    # and no chunk left out scores above the last one kept
    left_out = np.setdiff1d(pool, ids)
    if hits and left_out.size:
        assert expected[left_out].max() <= hits[-1].score * (1 + 1e-5) + 1e-6


def test_pruning_must_be_true_false_or_none():
    model = BM25.from_tokens([["a", "b"], ["b", "c"]])
    for bad in ("no", 1, 0.0):
        with pytest.raises(TypeError, match="pruning must be True, False or None"):
            model.search("b", 1, pruning=bad)
        with pytest.raises(TypeError, match="pruning must be True, False or None"):
            model.search_batch(["b"], 1, pruning=bad)


def test_bad_k_and_allowed_are_refused_with_pruning_as_without():
    model = BM25.from_tokens([["a", "b"], ["b", "c"]])
    for pruning in (True, False, None):
        with pytest.raises(ValueError, match="k"):
            model.search(["b"], 0, pruning=pruning)
        with pytest.raises(ValueError, match="outside the collection"):
            model.search(["b"], 1, allowed=[5], pruning=pruning)


def test_the_widening_covers_float32_rounding_of_the_sum():
    # (m + 1) units of 2^-23 for an m-term query: a float32 sum of m positive
    # values exceeds the exact sum by less than m - 1 units of 2^-24 of it
    assert slack(1) == 1 + 2 * 2.0**-23
    assert slack(5) == 1 + 6 * 2.0**-23


@settings(max_examples=150, deadline=None)
@given(data=st.data(), chunks=corpus, terms=query)
def test_the_traced_maxscore_makes_the_compiled_one_s_decisions(data, chunks, terms):
    model = BM25.from_tokens(chunks)
    if not model.term_ids(terms):
        return  # no query term in the index: nothing to trace
    k = data.draw(st.integers(1, len(chunks)), label="k")
    steps = maxscore_steps(model, terms, k)
    # the chunks that entered and were not pushed out are the top k among the
    # chunks that hold a query term, and they read as many postings
    matching = [hit for hit in model.search(terms, k) if hit.score > 0]
    entered = {s.chunk_id: s.value for s in steps if s.outcome == "enters"}
    assert all(entered[hit.chunk_id] == hit.score for hit in matching)
    kept = sorted(entered.items(), key=lambda e: (-e[1], e[0]))[: len(matching)]
    assert [c for c, _ in kept] == [hit.chunk_id for hit in matching]
    assert sum(len(s.found) for s in steps) == model.postings_read(terms, k)[0]
    # theta never falls, and a dropped chunk's bound does not beat it
    thresholds = [s.threshold for s in steps]
    assert thresholds == sorted(thresholds)
    assert all(
        s.value <= s.threshold * slack(5) for s in steps if s.outcome != "enters"
    )


def test_the_trace_of_a_small_index_by_hand():
    # three chunks of two terms, b = 0: a and b are in two chunks each, so every
    # posting of either is worth the same w (one occurrence, the same idf), and both
    # bounds are w. Equal bounds keep the query's order, so a counts as the smaller.
    # With k = 1, chunk 0 (a and b) enters first and theta becomes its score, 2w;
    # a's bound w does not beat 2w, so a becomes non-essential and chunk 1, which
    # holds only a, is never met; chunk 2 is met through b's postings, a is looked
    # up there (absent), and its score w is too low.
    model = BM25.from_tokens([["a", "b"], ["a", "c"], ["b", "c"]], b=0.0)
    steps = maxscore_steps(model, ["a", "b"], 1)
    assert [(s.chunk_id, s.outcome) for s in steps] == [
        (0, "enters"),
        (2, "scored, too low"),
    ]
    assert steps[0].essential == ("a", "b") and steps[1].essential == ("b",)
    assert steps[0].found == ("a", "b") and steps[1].found == ("b",)
    assert steps[1].value * 2 == steps[0].value == steps[1].threshold


def test_term_offsets_are_int32_and_count_each_term_s_chunks():
    chunks = [["mars", "moon", "mars"], ["moon", "ring"], ["ring", "dust", "ice"]]
    bm25 = BM25.from_tokens(chunks + [["mars", "ice"]])
    by_id = sorted(bm25.vocabulary, key=bm25.vocabulary.get)
    frequencies = [sum(term in c for c in chunks + [["mars", "ice"]]) for term in by_id]
    assert bm25.indptr.dtype == np.int32
    assert bm25.indptr.tolist() == [0, *np.cumsum(frequencies).tolist()]
    postings, terms = sum(frequencies), len(by_id)
    # doc ids (int32) and weights (float32) per posting; offsets and bounds per term
    assert bm25.nbytes == 4 * postings + 4 * postings + 4 * (terms + 1) + 4 * terms


# ---- the batch: one compiled call, each query by MaxScore or by every posting -------
def by_hand(model, terms, k, allowed):
    """The exhaustive top k, ranked here: every chunk's float32 score from
    BM25.scores (checked against bm25s above), ordered by score descending, then id,
    among the allowed chunks."""
    scores = model.scores(terms)
    pool = range(model.n_chunks) if allowed is None else sorted(set(allowed))
    ranked = sorted(pool, key=lambda d: (-float(scores[d]), d))[:k]
    return np.array(ranked, dtype=np.int64), scores[ranked].astype(np.float32)


def assert_batch_is_by_hand(model, queries, k, allowed, pruning):
    ids, scores = model.search_batch(queries, k, allowed, pruning)
    pool = model.n_chunks if allowed is None else len(set(allowed))
    assert ids.shape == scores.shape == (len(queries), min(k, pool))
    assert ids.dtype == np.int64 and scores.dtype == np.float32
    for row, terms in enumerate(queries):
        expected_ids, expected_scores = by_hand(model, terms, k, allowed)
        assert np.array_equal(ids[row], expected_ids), (terms, k, allowed)
        # to the bit: the same float32 sums, in the same order
        assert np.array_equal(
            scores[row].view(np.uint32), expected_scores.view(np.uint32)
        )


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    chunks=corpus,
    queries=st.lists(query, min_size=1, max_size=8),
    params=parameters,
)
def test_the_batch_is_the_exhaustive_top_k_to_the_bit(data, chunks, queries, params):
    model = BM25.from_tokens(chunks, **params)
    k = data.draw(st.integers(1, len(chunks) + 3), label="k")
    allowed = data.draw(allowed_subsets(len(chunks)), label="allowed")
    for pruning in (None, True, False):
        assert_batch_is_by_hand(model, queries, k, allowed, pruning)
    # one query at a time, the same rows
    ids, scores = model.search_batch(queries, k, allowed)
    for row, terms in enumerate(queries):
        one = model.search_arrays(terms, k, allowed)
        assert np.array_equal(one[0], ids[row]) and np.array_equal(one[1], scores[row])


@settings(max_examples=50, deadline=None)
@given(data=st.data(), chunks=corpus, queries=st.lists(query, min_size=1, max_size=5))
def test_the_batch_ranks_negative_weights_as_exhaustive_scoring(data, chunks, queries):
    # rsj_idf is negative for a term in more than half the chunks: those queries are
    # ranked outside the compiled loop, the others inside, in one batch
    model = BM25.from_tokens(chunks, idf=rsj_idf)
    k = data.draw(st.integers(1, len(chunks) + 1), label="k")
    allowed = data.draw(allowed_subsets(len(chunks)), label="allowed")
    assert_batch_is_by_hand(model, queries, k, allowed, None)


def test_the_batch_on_ties_long_batches_and_edge_cases():
    # twenty copies of three chunks: every score ties nineteen times; 70 queries are
    # cut into parts for the threads
    chunks = [["a", "b"], ["b", "c", "c"], ["d"]] * 20
    model = BM25.from_tokens(chunks)
    queries = [["a"], ["b", "c"], ["c", "b", "zz"], ["zz"], ["d", "a", "b"]] * 14
    for k in (1, 5, 19, 20, 21, 59, 60, 61, 1000):
        for allowed in (None, [], [59, 3, 3, 0], list(range(0, 60, 7))):
            for pruning in (None, True, False):
                assert_batch_is_by_hand(model, queries, k, allowed, pruning)
    ids, scores = model.search_batch([], 5)
    assert ids.shape == scores.shape == (0, 5)
    # a query without a known term: every chunk at 0, in id order
    ids, scores = model.search_batch([["zz"]], 3)
    assert ids.tolist() == [[0, 1, 2]] and scores.tolist() == [[0.0, 0.0, 0.0]]


def test_bounds_beyond_float32_leave_the_compiled_loop_with_the_same_hits():
    # with b = 0 and one occurrence in a chunk of one term, a contribution is the idf
    # (f (k1 + 1) / (f + k1) = 1): two of 2e38 add up beyond float32's largest number
    # (3.4e38), so the bounds cannot be compared; no chunk holds both terms, so every
    # score is finite
    def huge(n, N):
        return np.full(np.shape(n), 2e38)

    model = BM25.from_tokens([["a"], ["b"], ["c"]], idf=huge, b=0.0)
    assert model.upper_bounds[:2].astype(np.float64).sum() > np.finfo(np.float32).max
    for pruning in (None, True, False):
        assert_batch_is_by_hand(model, [["a", "b"], ["c"]], 2, None, pruning)


def test_bad_batches_are_refused_with_what_is_allowed():
    model = BM25.from_tokens([["a", "b"], ["b", "c"]])
    for bad in ("a b", ["a"][0], None, 3):
        with pytest.raises(TypeError, match="queries must be a sequence"):
            model.search_batch(bad)
    with pytest.raises(ValueError, match="query is empty: it must be a non-empty str"):
        model.search_batch([["a"], []])
    with pytest.raises(TypeError, match="query must be a non-empty str"):
        model.search_batch([["a"], 7])
    with pytest.raises(ValueError, match="k must be a whole number of at least 1"):
        model.search_batch([["a"]], 0)
    with pytest.raises(ValueError, match="outside the collection"):
        model.search_batch([["a"]], 1, allowed=[2])


def test_the_automatic_choice_by_hand():
    # MaxScore is chosen only where the longest postings list is long (8,192), k a
    # small share of it (1/256), and there are other lists to skip in
    assert prune_pays(10, 9000, 8192)
    assert prune_pays(32, 9000, 8192) and not prune_pays(33, 9000, 8192)
    assert not prune_pays(10, 9000, 8191)  # too short: scanning it is cheaper
    assert not prune_pays(10, 8192, 8192)  # one list: nothing to skip
    model = BM25.from_tokens([["a", "b"]] * 9000 + [["c"]])
    assert model.prunes(["a", "c"], 10) and not model.prunes(["a", "c"], 1000)
    assert not model.prunes(["c", "zz"], 10) and not model.prunes(["zz"], 10)
