"""The inverted index, tf-idf and BM25 against the reference texts, scikit-learn and
bm25s."""

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ragbook.retrieval.contract import Hit
from ragbook.retrieval.bm25 import BM25, lucene_idf, rsj_idf
from ragbook.indexing.chunking import sentence_chunks
from ragbook.corpus.documents import load_corpus
from ragbook.indexing.index import InvertedIndex
from ragbook.corpus.labels import load_questions
from ragbook.retrieval.ranking import top_k
from ragbook.indexing.text import Analyzer, analyze
from ragbook.retrieval.tfidf import TfIdf

MARS = [
    "Mars has two small moons, Phobos and Deimos.",
    "Phobos orbits Mars faster than Mars rotates.",
    "Jupiter has dozens of moons, including four large moons.",
    "The red colour of Mars comes from iron oxide dust.",
]
QUERY = "What moons does Mars have?"


def seed_001_tokens(text):
    return "".join(ch if ch.isalnum() else " " for ch in text.lower()).split()


def rounded(hits, places):
    return [(hit.chunk_id, round(hit.score, places)) for hit in hits]


# ---- the reference texts' worked examples --------------------------------------------
def test_seed_001_dock_and_charge():
    chunks = [
        "The dock is in bay four.",
        "Robots dock when the battery is low.",
        "A full charge takes ninety minutes.",
        "Visitors wear vests.",
    ]
    tfidf = TfIdf.from_texts(chunks, analyzer=seed_001_tokens)
    assert rounded(tfidf.search("Where is the dock?", 2), 3) == [(0, 0.619), (1, 0.564)]
    assert rounded(tfidf.search("How long does a full charge take?", 2), 3) == [
        (2, 0.707),
        (0, 0.0),
    ]


def test_seed_000_paris_and_bananas():
    tfidf = TfIdf.from_texts(["Paris is the capital of France", "Bananas are yellow"])
    (best, score), (other, zero) = [
        (h.chunk_id, h.score) for h in tfidf.search("capital of France", 2)
    ]
    assert (best, other, zero) == (0, 1, 0.0) and score > 0


def test_seed_004_bm25_by_hand():
    bm25 = BM25.from_texts(MARS)
    assert bm25.average_length == 26 / 4
    idf = dict(zip(["moons", "mars"], lucene_idf(np.array([2, 3]), 4)))
    assert round(idf["moons"], 4) == 0.6931 and round(idf["mars"], 4) == 0.3567
    assert rounded(bm25.search(QUERY, 4), 4) == [
        (0, 1.0875),
        (2, 0.9663),
        (1, 0.5225),
        (3, 0.3447),
    ]
    parts = bm25.explain(QUERY, 0)
    assert round(parts["moons"], 4) == 0.7180 and round(parts["mars"], 4) == 0.3695
    assert math.isclose(sum(parts.values()), bm25.scores(QUERY)[0], rel_tol=1e-6)


def test_seed_004_classic_idf_goes_negative_and_misranks():
    weights = rsj_idf(np.array([2, 3]), 4)
    assert round(float(weights[0]), 4) == 0.0 and round(float(weights[1]), 4) == -0.8473
    classic = BM25.from_texts(MARS, idf=rsj_idf)
    assert (
        classic.search(QUERY, 1)[0].chunk_id == 2
    )  # the Jupiter chunk, which never mentions Mars


def test_seed_004_tfidf_cosines():
    tfidf = TfIdf.from_texts(MARS)
    assert rounded(tfidf.search(QUERY, 4), 4) == [
        (0, 0.4704),
        (2, 0.4479),
        (1, 0.3505),
        (3, 0.1587),
    ]
    assert round(tfidf.idf[tfidf.index.vocabulary["mars"]], 4) == 1.2231  # ln(5/4) + 1


# ---- agreement with the libraries people use -----------------------------------------
DOCS = load_corpus()
CHUNKS = sentence_chunks(DOCS, 100)
TEXTS = [c.indexed_text for c in CHUNKS]
QUESTIONS = [q.text for q in load_questions(DOCS)]


@pytest.mark.parametrize("sublinear", [False, True])
def test_tfidf_agrees_with_scikit_learn_on_the_corpus(sublinear):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import linear_kernel

    vectorizer = TfidfVectorizer(analyzer=analyze, sublinear_tf=sublinear)
    matrix = vectorizer.fit_transform(TEXTS)
    expected = linear_kernel(vectorizer.transform(QUESTIONS), matrix)
    ours = TfIdf.from_texts(TEXTS, sublinear=sublinear)
    got = np.array([ours.scores(q) for q in QUESTIONS])
    assert np.max(np.abs(got - expected)) < 1e-12


def test_bm25_agrees_with_bm25s_lucene():
    import bm25s

    tokens = [analyze(t) for t in TEXTS]
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    reference.index(tokens, show_progress=False)
    ours = BM25.from_tokens(tokens)
    for question in QUESTIONS:
        terms = list(
            dict.fromkeys(analyze(question))
        )  # distinct terms, as in the formula
        known = [t for t in terms if t in ours.vocabulary]
        if not known:
            continue
        expected = reference.get_scores(known) * (
            1.5 + 1
        )  # bm25s leaves out the constant k1 + 1
        np.testing.assert_allclose(
            ours.scores(question), expected, rtol=2e-6, atol=2e-6
        )


def test_repeated_query_terms_count_like_bm25s_when_asked():
    import bm25s

    tokens = [analyze(t) for t in TEXTS[:80]]
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    reference.index(tokens, show_progress=False)
    query = ["moons", "moons", "saturn"]
    counted = BM25.from_tokens(tokens, count_repeats=True).scores(query)
    np.testing.assert_allclose(
        counted, 2.5 * reference.get_scores(query), rtol=2e-6, atol=2e-6
    )
    distinct = BM25.from_tokens(tokens).scores(query)
    np.testing.assert_allclose(
        distinct, 2.5 * reference.get_scores(["moons", "saturn"]), rtol=2e-6, atol=2e-6
    )


# ---- the index -----------------------------------------------------------------------
# a collection needs at least one term in some chunk (one with none is refused, see
# test_validation.py)
token_lists = st.lists(
    st.lists(st.sampled_from(list("abcdefgh")), max_size=12), min_size=1, max_size=15
).filter(lambda lists: any(lists))


@settings(max_examples=150, deadline=None)
@given(token_lists)
def test_postings_match_a_brute_force_count(lists):
    index = InvertedIndex(lists)
    assert index.n_chunks == len(lists) and list(index.lengths) == [
        len(t) for t in lists
    ]
    for term in set(t for tokens in lists for t in tokens) | {"zzz"}:
        ids, counts = index.postings(term)
        expected = [
            (d, Counter(tokens)[term])
            for d, tokens in enumerate(lists)
            if term in tokens
        ]
        assert list(zip(ids.tolist(), counts.tolist())) == expected
    assert int(index.document_frequency.sum()) == sum(len(set(t)) for t in lists)


def test_index_is_built_from_chunks_only():
    tfidf = TfIdf.from_texts(["Paris is the capital of France", "Bananas are yellow"])
    before = dict(tfidf.index.vocabulary), tfidf.idf.copy()
    tfidf.search("capital of Germany and Italy", 2)
    assert tfidf.index.vocabulary == before[0] and np.array_equal(tfidf.idf, before[1])


# ---- ranking rules -------------------------------------------------------------------
def test_ties_are_broken_by_chunk_id_and_zero_scores_follow():
    bm25 = BM25.from_texts(["moons", "mars", "moons", "dust"])
    assert [h.chunk_id for h in bm25.search("moons", 4)] == [0, 2, 1, 3]
    assert top_k(np.array([1.0, 3.0, 3.0, 1.0, 3.0]), 2) == [
        Hit(1, 3.0, 1),
        Hit(2, 3.0, 2),
    ]


def test_k_larger_than_the_collection_returns_everything_and_k_below_1_is_refused():
    bm25 = BM25.from_texts(MARS)
    assert len(bm25.search(QUERY, 100)) == 4
    for bad in (0, -1):
        with pytest.raises(ValueError, match="k must be a whole number of at least 1"):
            bm25.search(QUERY, bad)
    for bad in (2.5, True, "3"):
        with pytest.raises(TypeError, match="k must be a whole number of at least 1"):
            bm25.search(QUERY, bad)


def test_empty_queries_are_refused_and_unknown_terms_match_nothing():
    bm25 = BM25.from_texts(MARS)
    tfidf = TfIdf.from_texts(MARS)
    for retriever in (bm25, tfidf):
        with pytest.raises(ValueError, match="no terms after analysis"):
            retriever.search("What is the?", 3)
        hits = retriever.search("Neptune Triton", 3)
        assert [h.chunk_id for h in hits] == [0, 1, 2] and all(
            h.score == 0 for h in hits
        )


def test_allowed_chunks_are_filtered_before_ranking():
    bm25 = BM25.from_texts(MARS)
    # the global top 2 is chunks 0 and 2; with only 1 and 3 allowed, both must still
    # come back
    assert [h.chunk_id for h in bm25.search(QUERY, 2, allowed=[3, 1])] == [1, 3]
    assert bm25.search(QUERY, 2, allowed=[]) == []
    with pytest.raises(ValueError, match="outside the collection"):
        bm25.search(QUERY, 2, allowed=[7])


def test_bad_parameters_and_collections():
    with pytest.raises(ValueError, match="empty collection"):
        InvertedIndex([])
    with pytest.raises(TypeError, match="lists of terms"):
        InvertedIndex(["a string"])
    with pytest.raises(
        ValueError, match=r"b must be a finite number in \[0, 1\], got 1.5"
    ):
        BM25.from_texts(MARS, b=1.5)
    with pytest.raises(ValueError, match="k1 must be"):
        BM25.from_texts(MARS, k1=-1)


def test_stemming_merges_word_forms():
    stemmed = BM25.from_texts(MARS, analyzer=Analyzer(stemmer="english"))
    assert (
        stemmed.search("a moon orbiting", 1)[0].chunk_id == 1
    )  # "orbits" and "orbiting" share a stem
    assert analyze("moon") != analyze("moons") and Analyzer(stemmer="english")(
        "moons"
    ) == ["moon"]
    with pytest.raises(ValueError, match="unknown stemmer"):
        Analyzer(stemmer="klingon")
