"""Retrieval metrics against hand arithmetic, ir-measures (trec_eval), and their
invariants; bootstrap."""

import math

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from ir_measures import P, R, RR, nDCG

from ragbook.indexing.chunking import Chunk
from ragbook.corpus.trec import read_trec_run
from ragbook.corpus.labels import Evidence, Question, Span
from ragbook.evaluation.intervals import (
    PairedComparison,
    bootstrap_interval,
    paired_bootstrap,
)
from ragbook.evaluation.measures import (
    dcg_at_k,
    mean_reciprocal_rank,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    recall_of_documents_at_k,
    reciprocal_rank,
)
from ragbook.evaluation.metrics import evaluate_retrieval

GOLD = 0  # the one gold chunk of the seed questions
GOLD_RANKS = (
    1,
    2,
    1,
    5,
    None,
)  # rank of the gold passage for five questions; None = not retrieved


def ranking_with_gold_at(rank, length=10):
    """Chunks 1.. as distractors, with chunk GOLD inserted at ``rank`` (or left out for
    None)."""
    distractors = list(range(1, length + 1))
    if rank is None:
        return distractors[:length]
    return distractors[: rank - 1] + [GOLD] + distractors[rank - 1 : length - 1]


# ---- reference numbers ---------------------------------------------------------------
def test_seed_ranks_give_recall_and_mrr():
    rankings = [ranking_with_gold_at(rank) for rank in GOLD_RANKS]
    pieces = [{GOLD}]
    assert [r.index(GOLD) + 1 if GOLD in r else None for r in rankings] == list(
        GOLD_RANKS
    )
    for k, expected in [
        (1, 2 / 5),
        (3, 3 / 5),
        (5, 4 / 5),
    ]:  # ranks <= 1: two; <= 3: three; <= 5: four
        assert np.mean([recall_at_k(r, pieces, k) for r in rankings]) == pytest.approx(
            expected
        )
    assert mean_reciprocal_rank(rankings, [{GOLD}] * 5) == pytest.approx(
        (1 + 1 / 2 + 1 + 1 / 5 + 0) / 5
    )
    assert mean_reciprocal_rank(rankings, [{GOLD}] * 5) == pytest.approx(0.54)


def test_three_relevant_two_in_top_five():
    ranking = [10, 1, 11, 2, 12, 3]  # relevant 1 and 2 in the top five, 3 at rank six
    relevant = {1, 2, 3}
    assert recall_of_documents_at_k(ranking, relevant, 5) == pytest.approx(2 / 3)
    assert precision_at_k(ranking, relevant, 5) == pytest.approx(2 / 5)


def test_precision_divides_by_k_even_for_a_short_ranking():
    assert precision_at_k([1, 2], {1, 2}, 5) == pytest.approx(2 / 5)  # trec_eval's P@5
    assert precision_at_k([1, 2], set(), 5) == 0.0


def test_evidence_recall_counts_pieces_not_chunks():
    # two facts; the first stated in chunks 1 and 2, the second in chunk 7
    pieces = [{1, 2}, {7}]
    assert recall_at_k([1, 2, 3], pieces, 3) == pytest.approx(1 / 2)
    assert recall_at_k([3, 7, 2], pieces, 3) == 1.0
    assert recall_at_k([3, 7, 2], pieces, 1) == 0.0
    assert recall_at_k([1, 2], [{1}, set()], 2) == pytest.approx(
        1 / 2
    )  # a cut piece is not found


def test_reciprocal_rank():
    assert reciprocal_rank([4, 5, 6], {6}) == pytest.approx(1 / 3)
    assert reciprocal_rank([4, 5, 6], {9}) == 0.0
    assert reciprocal_rank([], {9}) == 0.0


def test_ideal_dcg_with_graded_gains():
    gains = {1: 2, 2: 1}  # d1 = 2, d2 = 1
    ideal = 2 + 1 / math.log2(3)  # 2/log2(2) + 1/log2(3); rank 3 holds nothing
    assert dcg_at_k([1, 2], gains, 3) == pytest.approx(ideal)
    assert dcg_at_k([1, 2, 7], gains, 3) == pytest.approx(2.6309, abs=5e-5)
    assert ndcg_at_k([1, 2, 7], gains, 3) == pytest.approx(1.0)
    assert ndcg_at_k([2, 1], gains, 3) == pytest.approx((1 + 2 / math.log2(3)) / ideal)


def test_ndcg_divides_by_the_ideal_of_the_collection_not_of_the_retrieved_list():
    gains = {1: 1, 2: 1}  # two relevant chunks, gain 1 each
    ranking = [8, 9, 1]  # one of them retrieved, at rank 3
    ideal = 1 + 1 / math.log2(3)  # both relevant chunks at ranks 1 and 2
    assert ideal == pytest.approx(1.6309, abs=5e-5)
    honest = ndcg_at_k(ranking, gains, 3)
    assert honest == pytest.approx((1 / math.log2(4)) / ideal)
    assert honest == pytest.approx(0.5 / 1.6309, abs=5e-5)
    assert honest == pytest.approx(0.3066, abs=5e-5)
    # The wrong variant: the ideal of the retrieved list alone, here a relevant chunk at
    # rank 1.
    retrieved_gains = sorted((gains.get(c, 0) for c in ranking), reverse=True)
    wrong_ideal = sum(
        g / math.log2(rank + 1) for rank, g in enumerate(retrieved_gains, start=1)
    )
    assert dcg_at_k(ranking, gains, 3) / wrong_ideal == pytest.approx(0.5)


def test_ndcg_is_zero_without_positive_gain_and_missing_gains_are_zero():
    assert ndcg_at_k([1, 2, 3], {}, 3) == 0.0
    assert ndcg_at_k([1, 2, 3], {1: 0, 2: 0}, 3) == 0.0
    assert dcg_at_k([1, 2, 3], {3: 2}, 3) == pytest.approx(2 / math.log2(4))
    assert dcg_at_k([1, 2, 3], {3: 2}, 2) == 0.0


# ---- bad input -----------------------------------------------------------------------
def test_k_must_be_at_least_one():
    for function, relevant in [
        (recall_at_k, [{1}]),
        (precision_at_k, {1}),
        (recall_of_documents_at_k, {1}),
    ]:
        with pytest.raises(
            ValueError, match="k must be a whole number of at least 1, got 0"
        ):
            function([1, 2], relevant, 0)
    with pytest.raises(ValueError, match="at least 1"):
        dcg_at_k([1], {1: 1}, -1)
    with pytest.raises(
        TypeError, match="k must be a whole number of at least 1, got 2.5"
    ):
        ndcg_at_k([1], {1: 1}, 2.5)
    with pytest.raises(
        TypeError, match="k must be a whole number of at least 1, got True"
    ):
        precision_at_k([1], {1}, True)


def test_rankings_must_be_ints_without_repeats():
    with pytest.raises(
        ValueError, match="chunk 2 is repeated in the ranking \\(rank 3\\)"
    ):
        precision_at_k([1, 2, 2], {1}, 3)
    with pytest.raises(ValueError, match="repeated"):
        reciprocal_rank([5, 5], {5})  # even when the answer comes before the repeat
    with pytest.raises(TypeError, match="chunk ids must be ints"):
        recall_at_k([1, "2"], [{1}], 2)
    with pytest.raises(TypeError, match="sequence of chunk ids"):
        precision_at_k("12", {1}, 2)


def test_recall_needs_pieces_and_relevant_chunks():
    with pytest.raises(ValueError, match="unanswerable question has no recall"):
        recall_at_k([1, 2], [], 2)
    with pytest.raises(TypeError, match="use recall_of_documents_at_k"):
        recall_at_k(
            [1, 2], {1, 2}, 2
        )  # a flat set of chunks instead of one set per piece
    with pytest.raises(ValueError, match="relevant is empty"):
        recall_of_documents_at_k([1, 2], set(), 2)


def test_gains_must_be_finite_and_not_negative():
    with pytest.raises(ValueError, match="gain of chunk 3 is -1; gains must be >= 0"):
        ndcg_at_k([1], {3: -1}, 1)
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        dcg_at_k([1], {1: float("nan")}, 1)
    with pytest.raises(TypeError, match="mapping from chunk id to gain"):
        dcg_at_k([1], [1, 2], 1)


def test_mean_reciprocal_rank_needs_matching_nonempty_inputs():
    with pytest.raises(ValueError, match="got 2 rankings but 1 relevant sets"):
        mean_reciprocal_rank([[1], [2]], [{1}])
    with pytest.raises(ValueError, match="at least one question"):
        mean_reciprocal_rank([], [])


# ---- properties ----------------------------------------------------------------------
rankings = st.lists(st.integers(0, 30), unique=True, max_size=20)
relevant_sets = st.frozensets(st.integers(0, 30), max_size=10)
cutoffs = st.integers(1, 25)
gain_maps = st.dictionaries(st.integers(0, 30), st.integers(0, 3), max_size=15)


@settings(max_examples=100, deadline=None)
@given(
    rankings,
    st.lists(relevant_sets, min_size=1, max_size=4),
    relevant_sets,
    gain_maps,
    cutoffs,
)
def test_metrics_lie_between_zero_and_one(ranking, pieces, relevant, gains, k):
    values = [
        recall_at_k(ranking, pieces, k),
        precision_at_k(ranking, relevant, k),
        reciprocal_rank(ranking, relevant),
        ndcg_at_k(ranking, gains, k),
    ]
    if relevant:
        values.append(recall_of_documents_at_k(ranking, relevant, k))
    assert all(0 <= v <= 1 for v in values)


@settings(max_examples=100, deadline=None)
@given(
    gain_maps.filter(lambda g: any(v > 0 for v in g.values())),
    st.lists(st.integers(31, 60), unique=True),
    cutoffs,
)
def test_ndcg_is_one_for_the_ideal_ranking(gains, unjudged_tail, k):
    ideal = (
        sorted((c for c in gains if gains[c] > 0), key=lambda c: -gains[c])
        + unjudged_tail
    )
    assert ndcg_at_k(ideal, gains, k) == pytest.approx(1.0)


@settings(max_examples=100, deadline=None)
@given(rankings, st.lists(relevant_sets, min_size=1, max_size=4))
def test_recall_never_falls_as_k_grows(ranking, pieces):
    values = [recall_at_k(ranking, pieces, k) for k in range(1, 25)]
    assert all(a <= b for a, b in zip(values, values[1:]))


# ---- agreement with ir-measures (pytrec_eval, i.e. trec_eval) ------------------------
def random_runs_and_judgements(seed=7, queries=50, documents=30):
    rng = np.random.default_rng(seed)
    rankings, gains = {}, {}
    for q in range(queries):
        judged = rng.choice(
            documents, size=rng.integers(1, documents + 1), replace=False
        )
        graded = {int(d): int(rng.integers(0, 4)) for d in judged}
        graded[int(judged[0])] = int(
            rng.integers(1, 4)
        )  # at least one relevant document, so R@k is defined
        length = int(rng.integers(1, documents + 1))
        rankings[f"q{q}"] = [int(d) for d in rng.permutation(documents)[:length]]
        gains[f"q{q}"] = graded
    return rankings, gains


def test_agreement_with_ir_measures():
    rankings, gains = random_runs_and_judgements()
    qrels = {q: {str(d): g for d, g in graded.items()} for q, graded in gains.items()}
    # trec_eval ignores the rank column and reorders a run by score descending, then
    # docid descending. Strictly decreasing scores (n - rank) keep our order, and the
    # docids are the chunk ids as strings.
    run = {
        q: {str(d): float(len(r) - rank) for rank, d in enumerate(r)}
        for q, r in rankings.items()
    }
    ks = (1, 3, 5, 10, 20)
    measures = [RR] + [m @ k for k in ks for m in (nDCG, R, P)]
    theirs = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc(measures, qrels, run)
    }
    assert len(theirs) == 50 * len(measures)
    for q, ranking in rankings.items():
        relevant = {
            d for d, g in gains[q].items() if g >= 1
        }  # trec_eval's default relevance level
        assert reciprocal_rank(ranking, relevant) == pytest.approx(
            theirs[(q, "RR")], abs=1e-9
        )
        for k in ks:
            assert ndcg_at_k(ranking, gains[q], k) == pytest.approx(
                theirs[(q, f"nDCG@{k}")], abs=1e-9
            )
            assert recall_of_documents_at_k(ranking, relevant, k) == pytest.approx(
                theirs[(q, f"R@{k}")], abs=1e-9
            )
            assert precision_at_k(ranking, relevant, k) == pytest.approx(
                theirs[(q, f"P@{k}")], abs=1e-9
            )


# ---- bootstrap -----------------------------------------------------------------------
VALUES = [1, 0, 1, 1, 0.5, 0, 1, 0.25, 1, 0, 1, 1]


def test_bootstrap_is_deterministic_given_the_seed_and_contains_the_mean():
    first = bootstrap_interval(VALUES)
    assert bootstrap_interval(VALUES) == first
    assert bootstrap_interval(VALUES, seed=1) != first
    low, high = first
    assert low < np.mean(VALUES) < high
    assert 0 <= low and high <= 1
    narrow = bootstrap_interval(VALUES, confidence=0.5)
    assert low <= narrow[0] <= narrow[1] <= high
    assert bootstrap_interval([0.3] * 5) == pytest.approx((0.3, 0.3))
    median_low, median_high = bootstrap_interval(VALUES, statistic=np.median)
    assert median_low <= np.median(VALUES) <= median_high


def test_bootstrap_bad_input():
    with pytest.raises(ValueError, match="empty"):
        bootstrap_interval([])
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        bootstrap_interval(VALUES, confidence=95)
    with pytest.raises(
        ValueError, match="resamples must be a whole number of at least 1"
    ):
        bootstrap_interval(VALUES, resamples=0)
    with pytest.raises(ValueError, match="finite"):
        bootstrap_interval([0.5, float("nan")])
    with pytest.raises(ValueError, match="flat sequence"):
        bootstrap_interval([[1, 2], [3, 4]])


def test_paired_bootstrap_on_a_hand_example():
    a = [1, 0.5, 0, 1, 1]
    b = [
        0,
        0.5,
        1,
        0.5,
        1,
    ]  # a better on questions 1 and 4, worse on 3, tied on 2 and 5
    result = paired_bootstrap(a, b)
    assert isinstance(result, PairedComparison)
    assert (result.a_better, result.a_worse, result.tied) == (2, 1, 2)
    assert result.mean_difference == pytest.approx((1 + 0 - 1 + 0.5 + 0) / 5)
    assert result.interval == bootstrap_interval(
        np.subtract(a, b)
    )  # same seed, same resamples
    assert result.interval[0] <= result.mean_difference <= result.interval[1]
    assert 0 < result.share_a_greater < 1
    assert paired_bootstrap(a, b) == result
    dominated = paired_bootstrap([1, 1, 0.5], [0, 0.5, 0])
    assert dominated.share_a_greater == 1.0 and dominated.interval[0] > 0
    with pytest.raises(ValueError, match="values_a has 2 questions but values_b has 3"):
        paired_bootstrap([1, 0], [1, 0, 1])


# ---- evaluation loop -----------------------------------------------------------------
def window(i):
    return Chunk(i, "d", 0, 10 * i, 10 * i + 10, "x" * 10)


CHUNKS = [window(i) for i in range(12)]


def span_in(i):
    return Span("d", 10 * i + 2, 10 * i + 6, "xxxx")


def question(qid, *pieces):
    evidence = tuple(Evidence(tuple(span_in(i) for i in piece)) for piece in pieces)
    return Question(
        qid,
        f"text of {qid}",
        "answer",
        "lexical" if evidence else "unanswerable",
        evidence,
    )


def seed_setup():
    """Five one-piece questions, gold chunk at ranks (1, 2, 1, 5, none), one two-piece
    and one unanswerable."""
    questions = [question(f"s{n}", [GOLD]) for n in range(5)]
    answers = {
        f"text of s{n}": ranking_with_gold_at(rank) for n, rank in enumerate(GOLD_RANKS)
    }
    questions.append(question("two", [3], [11]))  # needs chunks 3 and 11; finds 3 only
    answers["text of two"] = [3, 4, 5]
    questions.append(question("none"))
    calls = []

    def search(text, k):
        calls.append((text, k))
        return [(c, float(100 - rank)) for rank, c in enumerate(answers[text][:k])]

    return questions, search, calls


def test_evaluate_retrieval_meets_the_seed_numbers():
    questions, search, calls = seed_setup()
    report = evaluate_retrieval(questions[:5] + questions[6:], search, CHUNKS)
    assert report.skipped == 1 and report.question_ids == ("s0", "s1", "s2", "s3", "s4")
    assert len(calls) == 5 and all(k == 10 for _, k in calls)
    assert report.mean("recall@1") == pytest.approx(0.4)
    assert report.mean("recall@3") == pytest.approx(0.6)
    assert report.mean("recall@5") == pytest.approx(0.8)
    assert report.mean("recall@10") == pytest.approx(0.8)
    assert report.mean("rr") == pytest.approx(0.54)
    one = 1 / math.log2(2)
    expected_ndcg = [
        one,
        1 / math.log2(3),
        one,
        1 / math.log2(6),
        0,
    ]  # ideal DCG is 1: one relevant chunk
    assert report.per_question("ndcg@10") == pytest.approx(expected_ndcg)
    low, high = report.interval("rr")
    assert low <= 0.54 <= high
    table = report.table()
    assert (
        "recall@5" in table
        and "0.540" in table
        and "5 answerable questions, 1 unanswerable skipped" in table
    )
    with pytest.raises(
        ValueError, match="unknown metric 'mrr'; this report has recall@1"
    ):
        report.mean("mrr")
    with pytest.raises(ValueError):
        report.values["rr"][0] = 0.0  # read-only


def test_evaluate_retrieval_per_piece_recall_and_depth():
    questions, search, calls = seed_setup()
    report = evaluate_retrieval(questions, search, CHUNKS, ks=(3, 1), depth=20)
    assert report.ks == (1, 3) and report.metrics == (
        "recall@1",
        "recall@3",
        "rr",
        "ndcg@10",
    )
    assert {k for _, k in calls} == {20}
    assert report.per_question("recall@3")[5] == pytest.approx(
        1 / 2
    )  # one of two facts found
    assert report.per_question("rr")[5] == 1.0


def test_written_run_reads_back_and_agrees_with_ir_measures(tmp_path):
    questions, search, _ = seed_setup()
    report = evaluate_retrieval(questions, search, CHUNKS)
    path = tmp_path / "run.txt"
    report.write_run(path, tag="bm25")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "s0 Q0 0 1 100.0 bm25" and lines[1] == "s0 Q0 1 2 99.0 bm25"
    run = read_trec_run(path)
    assert [d for d, _ in run["s1"]] == [str(c) for c in ranking_with_gold_at(2)]
    assert list(run) == list(report.question_ids)
    qrels = {qid: {str(GOLD): 1} for qid in report.question_ids}
    qrels["two"] = {"3": 1, "11": 1}
    theirs = {
        m.query_id: m.value
        for m in ir_measures.iter_calc(
            [RR], qrels, ir_measures.read_trec_run(str(path))
        )
    }
    assert [theirs[q] for q in report.question_ids] == pytest.approx(
        list(report.per_question("rr")), abs=1e-9
    )


def test_evaluate_retrieval_refuses_bad_input():
    questions, search, _ = seed_setup()
    with pytest.raises(
        ValueError, match="depth \\(5\\) must be at least the largest k \\(10\\)"
    ):
        evaluate_retrieval(questions, search, CHUNKS, depth=5)
    with pytest.raises(
        ValueError, match="k must be a whole number of at least 1, got 0"
    ):
        evaluate_retrieval(questions, search, CHUNKS, ks=(0, 5))
    with pytest.raises(ValueError, match="ks is empty"):
        evaluate_retrieval(questions, search, CHUNKS, ks=())
    with pytest.raises(
        ValueError,
        match="no answerable questions to evaluate \\(1 unanswerable skipped\\)",
    ):
        evaluate_retrieval([questions[-1]], search, CHUNKS)
    with pytest.raises(ValueError, match="used twice"):
        evaluate_retrieval([questions[0], questions[0]], search, CHUNKS)
    with pytest.raises(ValueError, match="chunks\\[1\\] has id 5"):
        evaluate_retrieval(questions, search, [window(0), window(5)])
    bad_searches = {
        "returned 11 results for k = 10": lambda text, k: [(c, -c) for c in range(11)],
        "chunk 2 is repeated": lambda text, k: [(2, 1.0), (2, 0.5)],
        "above the score 1.0 before it": lambda text, k: [(1, 1.0), (2, 3.0)],
        "chunk id 40 is not a position in the 12 chunks": lambda text, k: [(40, 1.0)],
        "expected a hit or a \\(chunk id, score\\) pair": lambda text, k: [3],
        "score must be a finite number": lambda text, k: [(1, float("inf"))],
    }
    for message, bad in bad_searches.items():
        with pytest.raises(ValueError, match=message):
            evaluate_retrieval(questions, bad, CHUNKS)


def test_write_run_refuses_an_empty_ranking(tmp_path):
    questions, _, _ = seed_setup()
    report = evaluate_retrieval(questions, lambda text, k: [], CHUNKS)
    assert report.mean("recall@10") == 0.0 and report.mean("ndcg@10") == 0.0
    with pytest.raises(ValueError, match="the ranking of query 's0' is empty"):
        report.write_run(tmp_path / "run.txt")
