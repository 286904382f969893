"""Bad input, everywhere, the same way: property tests over random bad arguments.

The rule (ragbook/validate.py): a value of the wrong type raises TypeError, a value of
the right type outside what is allowed raises ValueError, and the message names the
argument and what is allowed. Queries: None or a non-text raises TypeError; an empty
str, a str of whitespace or an empty sequence of terms raises ValueError ("query is
empty"). A non-empty query whose terms are all stopwords is refused by the sparse
retrievers as before ("no terms after analysis"); one whose terms are all unknown is a
query, and every chunk scores 0 (a ranking in id order).
"""

import functools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ragbook.retrieval.bm25 import BM25, lucene_idf, rsj_idf
from ragbook.indexing.chunking import (
    chunk_count,
    cut_probability,
    sentence_chunks,
    word_windows,
)
from ragbook.evaluation.composition import end_to_end_accuracy, evidence_rate_needed
from ragbook.retrieval.dense import DenseRetriever
from ragbook.corpus.documents import load_corpus
from ragbook.retrieval.fusion import (
    HybridRetriever,
    normalized_score_fusion,
    reciprocal_rank_fusion,
    rerank,
    score_sum_fusion,
)
from ragbook.generation.generators import ScriptedGenerator, TrigramModel
from ragbook.indexing.index import InvertedIndex
from ragbook.retrieval.lsa import LSA
from ragbook.evaluation.intervals import bootstrap_interval
from ragbook.evaluation.measures import ndcg_at_k, precision_at_k, recall_at_k
from ragbook.system.access import User
from ragbook.corpus.orgdocs import load_org_corpus
from ragbook.system.store import DocumentStore
from ragbook.system.rag import RAGPipeline
from ragbook.generation.prompts import build_prompt, evidence_budget, word_estimate
from ragbook.retrieval.ranking import top_k
from ragbook.generation.sampling import softmax
from ragbook.indexing.text import STOPWORDS, Analyzer
from ragbook.retrieval.tfidf import TfIdf, smoothed_idf
from ragbook.retrieval.ivf import IVFIndex, ivf_cost, optimal_lists, spherical_kmeans
from ragbook.retrieval.vectors import ExactIndex, cosine, unit_rows

TEXTS = [
    "Mars has two small moons, Phobos and Deimos.",
    "Phobos orbits Mars faster than Mars rotates.",
    "Jupiter has dozens of moons, including four large moons.",
    "The red colour of Mars comes from iron oxide dust.",
]
QUERY = "What moons does Mars have?"

BM = BM25.from_texts(TEXTS)
TF = TfIdf.from_texts(TEXTS)
LSA_DENSE = DenseRetriever(LSA(TEXTS, 2), TEXTS)
HYBRID = HybridRetriever([BM, TF], depth=4)
RNG = np.random.default_rng(0)
VECTORS = RNG.standard_normal((40, 8))
EXACT = ExactIndex(VECTORS)
IVF = IVFIndex(VECTORS, 4)
USER = User("agent", ["public", "staff"])


@functools.lru_cache(maxsize=1)
def store() -> DocumentStore:
    latest = {d.id: d for d in load_org_corpus()}
    result = DocumentStore()
    result.add(list(latest.values()))
    return result


@functools.lru_cache(maxsize=1)
def minilm_dense() -> DenseRetriever:
    from ragbook.retrieval.embedder import load_minilm

    return DenseRetriever(load_minilm(), TEXTS)


def _rerank_search(query, k=10, allowed=None):
    return rerank(query, BM.search(query, 4), lambda q, ids: np.ones(len(ids)), k)


def _store_search(query, k=10, allowed=None):
    return store().search_for(USER, query, k)


# every retriever as a search(query, k) function, and whether it takes a sequence of
# terms as a query
SEARCHES = {
    "bm25": (BM.search, True),
    "tfidf": (TF.search, True),
    "lsa": (LSA_DENSE.search, False),
    "minilm": (
        lambda query, k=10, allowed=None: minilm_dense().search(query, k, allowed),
        False,
    ),
    "hybrid": (HYBRID.search, True),
    "rerank": (_rerank_search, True),
    "store": (_store_search, True),
}
NAMES = sorted(SEARCHES)

# ---- random bad values ---------------------------------------------------------------
non_finite = st.sampled_from(
    [math.nan, -math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("-inf")]
)
number_strings = st.one_of(
    st.integers(-1000, 1000).map(str), st.floats(-10, 10, allow_nan=False).map(repr)
)
negative_ints = st.one_of(
    st.integers(max_value=-1), st.integers(-(10**6), -1).map(np.int64)
)
bare_strings = st.text(max_size=30)
empty_sequences = st.sampled_from([[], ()])
blank_strings = st.text(alphabet=" \t\n\r", max_size=6)
not_a_query = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.binary(max_size=4),
    st.booleans(),
)
stopword_texts = st.lists(
    st.sampled_from(sorted(STOPWORDS) + [".", ",", "!", "?", "--"]), max_size=6
).map(" ".join)
FAST = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# ---- queries -------------------------------------------------------------------------
@FAST
@given(name=st.sampled_from(NAMES), query=not_a_query)
def test_a_query_that_is_no_text_is_a_type_error_everywhere(name, query):
    search, _ = SEARCHES[name]
    with pytest.raises(TypeError, match=r"query must be a non-empty str"):
        search(query, 3)


@FAST
@given(name=st.sampled_from(NAMES), query=blank_strings)
def test_an_empty_query_string_is_a_value_error_everywhere(name, query):
    search, _ = SEARCHES[name]
    with pytest.raises(ValueError, match=r"query is empty"):
        search(query, 3)


@FAST
@given(
    name=st.sampled_from([n for n in NAMES if SEARCHES[n][1]]), query=empty_sequences
)
def test_an_empty_sequence_of_terms_is_a_value_error_for_every_term_retriever(
    name, query
):
    search, _ = SEARCHES[name]
    with pytest.raises(ValueError, match=r"query is empty"):
        search(query, 3)


@FAST
@given(
    name=st.sampled_from([n for n in NAMES if not SEARCHES[n][1]]),
    query=st.lists(st.text(min_size=1), max_size=3),
)
def test_dense_retrievers_take_a_str_only(name, query):
    search, _ = SEARCHES[name]
    with pytest.raises(TypeError, match=r"query must be a non-empty str, got"):
        search(query, 3)


@FAST
@given(
    name=st.sampled_from([n for n in NAMES if SEARCHES[n][1]]),
    terms=st.lists(
        st.one_of(st.integers(), st.none(), st.binary(max_size=3)),
        min_size=1,
        max_size=3,
    ),
)
def test_terms_that_are_not_str_are_a_type_error(name, terms):
    search, _ = SEARCHES[name]
    with pytest.raises(TypeError, match=r"query must be .*; term 0 is"):
        search(terms, 3)


@FAST
@given(query=stopword_texts.filter(str.strip))
def test_a_stopword_only_query_is_refused_alike_by_the_sparse_retrievers(query):
    for retriever in (BM, TF):
        with pytest.raises(ValueError, match="no terms after analysis"):
            retriever.search(query, 3)


@FAST
@given(
    terms=st.lists(
        st.sampled_from(["neptune", "triton", "quasar", "zzz"]), min_size=1, max_size=4
    )
)
def test_unknown_terms_score_zero_alike_as_a_string_or_as_terms(terms):
    for retriever in (BM, TF):
        for query in (" ".join(terms), terms):
            hits = retriever.search(query, 4)
            assert [h.chunk_id for h in hits] == [0, 1, 2, 3] and all(
                h.score == 0 for h in hits
            )


# ---- k and other counts --------------------------------------------------------------
@FAST
@given(name=st.sampled_from(NAMES), k=negative_ints)
def test_a_negative_k_is_a_value_error_everywhere(name, k):
    search, _ = SEARCHES[name]
    with pytest.raises(
        ValueError, match=r"k must be a whole number of at least 1, got -\d+"
    ):
        search(QUERY, k)


@FAST
@given(
    name=st.sampled_from(NAMES),
    k=st.one_of(number_strings, non_finite, st.floats(0.5, 5), st.booleans()),
)
def test_a_k_that_is_not_an_int_is_a_type_error_everywhere(name, k):
    search, _ = SEARCHES[name]
    with pytest.raises(
        TypeError, match=r"k must be a whole number of at least 1, got .* of type"
    ):
        search(QUERY, k)


@FAST
@given(k=st.integers(1, 6))
def test_numpy_ints_are_ints(k):
    for name in NAMES:
        search, _ = SEARCHES[name]
        assert search(QUERY, np.int64(k)) == search(QUERY, k)
    assert (
        EXACT.search_batch(VECTORS[:2], np.int32(k)).ids.tolist()
        == EXACT.search_batch(VECTORS[:2], k).ids.tolist()
    )


@FAST
@given(n=st.integers(1, 5000), size=st.integers(1, 500), data=st.data())
def test_chunk_formulas_take_numpy_ints(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    assert chunk_count(np.int64(n), np.int64(size), np.int64(overlap)) == chunk_count(
        n, size, overlap
    )
    span = data.draw(st.integers(1, 600))
    assert cut_probability(
        np.int32(span), np.int32(size), np.int32(overlap)
    ) == cut_probability(span, size, overlap)


@FAST
@given(n=negative_ints)
def test_negative_counts_are_value_errors(n):
    lsa = LSA(TEXTS, 2)
    with pytest.raises(
        ValueError, match=r"n must be a whole number of at least 0, got -\d+"
    ):
        lsa.nearest_terms("mars", n)
    with pytest.raises(
        ValueError, match=r"overlap must be a whole number of at least 0, got -\d+"
    ):
        chunk_count(10, 5, n)
    with pytest.raises(
        ValueError, match=r"seed must be a whole number of at least 0, got -\d+"
    ):
        spherical_kmeans(VECTORS, 2, seed=n)
    with pytest.raises(
        ValueError, match=r"budget must be a whole number of at least 0"
    ):
        store().answer(QUERY, USER, ScriptedGenerator(["x"]), budget=n)


@FAST
@given(value=number_strings)
def test_numbers_given_as_strings_are_type_errors(value):
    cases = [
        (lambda: BM25.from_texts(TEXTS, k1=value), "k1 must be a finite number"),
        (lambda: BM25.from_texts(TEXTS, b=value), "b must be a finite number"),
        (lambda: softmax([1.0, 2.0], value), "temperature must be a finite number"),
        (
            lambda: reciprocal_rank_fusion([[1, 2]], c=value),
            "the fusion constant c must be a finite number",
        ),
        (
            lambda: end_to_end_accuracy(value, 0.5, 0.5),
            r"evidence_rate \(a probability\) must be a finite number",
        ),
        (lambda: LSA(TEXTS, value), "dimensions must be a whole number"),
        (
            lambda: LSA(TEXTS, 2).nearest_terms("mars", value),
            "n must be a whole number",
        ),
        (lambda: chunk_count(value, 200, 50), "n must be a whole number"),
        (
            lambda: word_estimate("two words", value),
            "tokens_per_word must be a finite number",
        ),
        (
            lambda: evidence_budget(value, 0, 0, 0),
            r"context_limit \(in tokens\) must be a whole number",
        ),
        (
            lambda: ivf_cost(1000, value, 1),
            "lists must be numbers|lists must be real numbers",
        ),
        (lambda: optimal_lists(value, 1), "the number of vectors must be"),
        (
            lambda: IVF.search_batch(VECTORS[:1], 3, value),
            "probes must be a whole number",
        ),
        (
            lambda: bootstrap_interval([0.5, 1.0], resamples=value),
            "resamples must be a whole number",
        ),
        (lambda: precision_at_k([1], {1}, value), "k must be a whole number"),
        (lambda: RAGPipeline(k=value), "k must be a whole number"),
        (lambda: lucene_idf(1, value), "N must be a whole number"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=message):
            call()


@FAST
@given(value=st.booleans())
def test_a_bool_is_not_a_number(value):
    for call in (
        lambda: BM25.from_texts(TEXTS, k1=value),
        lambda: softmax([1.0], value),
        lambda: chunk_count(value, 5),
        lambda: ndcg_at_k([1], {1: 1}, value),
        lambda: smoothed_idf(value, 3),
        lambda: LSA(TEXTS, value),
    ):
        with pytest.raises(TypeError):
            call()


# ---- nan and infinity ----------------------------------------------------------------
@FAST
@given(bad=non_finite, position=st.integers(0, 2))
def test_non_finite_vectors_are_refused(bad, position):
    vector = [0.5, 0.25, 1.0]
    vector[position] = bad
    with pytest.raises(ValueError, match=r"a must be finite numbers \(no nan or inf\)"):
        cosine(vector, [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"b must be finite numbers"):
        cosine([1.0, 0.0, 0.0], vector)
    with pytest.raises(ValueError, match=r"vectors must be finite numbers"):
        unit_rows([vector, [1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"vectors must be finite numbers"):
        ExactIndex(np.array([vector]))
    query = np.ones(8)
    query[position] = bad
    for index in (EXACT, IVF):
        with pytest.raises(ValueError, match=r"queries must be finite numbers"):
            index.search_batch(query, 3)
    with pytest.raises(ValueError, match=r"queries must be finite numbers"):
        EXACT.search_one(query, 3)


@FAST
@given(bad=non_finite, position=st.integers(0, 2))
def test_non_finite_scores_are_refused(bad, position):
    ranking = [(0, 3.0), (1, 2.0), (2, 1.0)]
    ranking[position] = (position, bad)
    with pytest.raises(
        ValueError,
        match=rf"the score of chunk {position} in results\[1\] must be a finite number",
    ):
        score_sum_fusion([[(5, 1.0)], ranking])
    with pytest.raises(ValueError, match=r"must be a finite number"):
        normalized_score_fusion([ranking], [1.0])
    scores = np.ones(3)
    scores[position] = bad
    with pytest.raises(
        ValueError,
        match=r"the second-stage scores must be finite numbers .* at position "
        rf"{position}",
    ):
        rerank(QUERY, [0, 1, 2], lambda q, ids: scores)
    with pytest.raises(
        ValueError, match=rf"scores must be finite numbers .* at position {position}"
    ):
        top_k(scores, 2)
    with pytest.raises(ValueError, match=r"logits must be finite numbers"):
        softmax(scores)


@FAST
@given(bad=non_finite)
def test_non_finite_parameters_are_refused(bad):
    cases = [
        (lambda: BM25.from_texts(TEXTS, k1=bad), "k1 must be a finite number"),
        (lambda: BM25.from_texts(TEXTS, b=bad), "b must be a finite number"),
        (lambda: softmax([1.0], bad), "temperature must be a finite number"),
        (lambda: reciprocal_rank_fusion([[1]], c=bad), "c must be a finite number"),
        (lambda: HybridRetriever([BM], c=bad), "c must be a finite number"),
        (
            lambda: normalized_score_fusion([[(1, 1.0)]], [bad]),
            "weights must be finite numbers",
        ),
        (
            lambda: evidence_rate_needed(bad, 0.9, 0.1),
            "target .* must be a finite number",
        ),
        (lambda: word_estimate("a b", bad), "tokens_per_word must be a finite number"),
        (lambda: ivf_cost(bad, 10, 1), "the number of vectors must be a finite number"),
        (lambda: bootstrap_interval([1.0, bad]), "values must be finite numbers"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


# ---- texts: never a bare str, never an empty collection ------------------------------
@FAST
@given(text=bare_strings)
def test_a_bare_string_is_not_a_sequence_of_texts(text):
    cases = [
        lambda: InvertedIndex.from_texts(text),
        lambda: InvertedIndex(text),
        lambda: TfIdf.from_texts(text),
        lambda: BM25.from_texts(text),
        lambda: BM25.from_tokens(text),
        lambda: LSA(text, 1),
        lambda: LSA(TEXTS, 2).encode(text),
        lambda: DenseRetriever(LSA(TEXTS, 2), text),
        lambda: ScriptedGenerator(text),
        lambda: TrigramModel(text),
        lambda: Analyzer(stopwords=text),
        lambda: RAGPipeline().index(text),
        lambda: sentence_chunks(text),
        lambda: build_prompt(QUERY, text),
        lambda: reciprocal_rank_fusion(text),
        lambda: BM.search(QUERY, 3, allowed=text),
    ]
    for call in cases:
        with pytest.raises(TypeError, match="single string"):
            call()


@FAST
@given(texts=st.lists(stopword_texts, min_size=1, max_size=5))
def test_a_collection_with_no_terms_is_refused_when_it_is_built(texts):
    for build in (
        InvertedIndex.from_texts,
        TfIdf.from_texts,
        BM25.from_texts,
        lambda t: LSA(t, 1),
    ):
        with pytest.raises(
            ValueError,
            match=r"chunks are empty after analysis \(only stopwords, punctuation or "
            r"whitespace\)",
        ):
            build(texts)


@FAST
@given(
    texts=st.lists(st.text(alphabet=" .,;!?-\n", max_size=5), min_size=1, max_size=4)
)
def test_a_dense_collection_with_no_word_is_refused_when_it_is_built(texts):
    with pytest.raises(ValueError, match=r"texts are empty \(no word or number"):
        DenseRetriever(LSA(TEXTS, 2), texts)


@FAST
@given(empty=empty_sequences)
def test_no_texts_at_all_is_refused(empty):
    for build in (
        InvertedIndex.from_texts,
        TfIdf.from_texts,
        BM25.from_texts,
        lambda t: LSA(t, 1),
        lambda t: DenseRetriever(LSA(TEXTS, 2), t),
    ):
        with pytest.raises(ValueError, match="empty collection"):
            build(empty)
    with pytest.raises(ValueError, match="no documents"):
        word_windows(empty, 10)


@FAST
@given(value=st.one_of(st.none(), st.integers(), st.floats()))
def test_a_text_collection_of_a_non_sequence_is_a_type_error(value):
    for build in (TfIdf.from_texts, BM25.from_texts, lambda t: LSA(t, 1)):
        with pytest.raises(TypeError, match="texts must be a sequence of str"):
            build(value)


def test_the_minilm_retriever_refuses_what_the_others_refuse():
    dense = minilm_dense()
    with pytest.raises(TypeError, match="query must be a non-empty str, got None"):
        dense.search(None, 3)
    with pytest.raises(ValueError, match="query is empty"):
        dense.search("", 3)
    assert (
        len(dense.search("the of", 2)) == 2
    )  # MiniLM embeds a stopword-only query, as before


def test_recall_and_documents_checks_share_the_rules():
    with pytest.raises(
        TypeError, match="k must be a whole number of at least 1, got '3'"
    ):
        recall_at_k([1], [{1}], "3")
    assert recall_at_k([1], [{1}], np.int64(1)) == 1.0
    with pytest.raises(TypeError, match="piece 1 must hold chunk ids"):
        recall_at_k([1], [{"1"}], 1)
    assert len(load_corpus()) == 10
