"""The chapter-14 reader-study helpers on hand-made cases; every expected value is
worked out by hand in the comment beside it."""

import numpy as np
import pytest

from ragbook.evaluation.reader_study import (
    CLOSED_BOOK,
    REWRITE,
    choose,
    closed_book,
    effect,
    evidence_found,
    fused_evidence_found,
    invented,
    markdown_table,
    refusals,
    rewrites,
    threshold_sweep,
    valid_citations,
    with_interval,
)
from ragbook.retrieval.contract import Hit


class Ranked:
    """A retriever returning fixed rankings per query."""

    def __init__(self, rankings):
        self.rankings = rankings

    def search(self, query, k):
        return [Hit(i, 1.0 / r, r) for r, i in enumerate(self.rankings[query][:k], 1)]


class Evaluation:
    """The two methods of AnswerEvaluation the helpers use."""

    def __init__(self, grounded, refused):
        self.measures = {
            "grounded": np.array(grounded, float),
            "refused": np.array(refused, float),
        }

    def values(self, measure):
        return self.measures[measure]

    def mean(self, measure):
        return float(self.measures[measure].mean())


class Chat:
    def __init__(self, reply):
        self.reply, self.asked = reply, []

    def chat(self, messages, max_tokens):
        self.asked.append((messages, max_tokens))
        return type("Reply", (), {"text": self.reply})()


def test_invented_numbers_and_names():
    sources = ["Mars has two moons, Phobos and Deimos.", "A day lasts 24.6 hours."]
    # 24.6 is a source token, 17 is not; Phobos is in a source, Ganymede is not; "Mars"
    # opens the answer, so it is no name; [1] is a citation and ignored
    answer = "Mars has 17 moons [1], with Phobos and Ganymede, days of 24.6 hours."
    assert invented(answer, "How many moons?", sources) == ["17", "Ganymede"]
    # a name the question holds is not invented
    assert invented("It was seen by Galileo.", "Did Galileo see it?", []) == []
    assert invented("Nothing new here.", "q", sources) == []


def test_closed_book_and_rewrites_ask_with_their_instruction():
    model = Chat("about 88 days")
    assert closed_book(model, "How long is a year on Mercury?") == "about 88 days"
    messages, max_tokens = model.asked[0]
    assert (
        messages[0] == {"role": "system", "content": CLOSED_BOOK} and max_tokens == 200
    )
    model = Chat(
        "1. Mercury orbit\n- Mercury year length\n\n* orbital period\n4) extra"
    )
    # list marks "1.", "-", "*" removed, the empty line dropped, the fourth cut
    assert rewrites(model, "q") == [
        "Mercury orbit",
        "Mercury year length",
        "orbital period",
    ]
    assert model.asked[0][0][0]["content"] == REWRITE and model.asked[0][1] == 80


def test_evidence_found_needs_every_piece_in_the_top_k():
    retriever = Ranked({"q": [7, 3, 9, 1, 4, 8]})
    assert evidence_found(retriever, "q", [{3}, {4, 5}], k=5)  # 3 at 2, 4 at 5
    assert not evidence_found(retriever, "q", [{3}, {8}], k=5)  # 8 is sixth
    assert evidence_found(retriever, "q", [{8}], k=6)
    assert evidence_found(retriever, "q", [], k=1)  # no piece: nothing to miss


def test_fused_evidence_found():
    # with c = 60: chunk 1 scores 1/61 + 1/63, chunk 2 1/62 + 1/61, chunk 3 1/63 + 1/62,
    # chunk 4 1/64; the order is 2 (0.03252), 1 (0.03227), 3 (0.03200), 4
    retriever = Ranked({"a": [1, 2, 3, 4], "b": [2, 3, 1]})
    assert fused_evidence_found(retriever, ["a", "b"], [{2}, {1}], k=2)
    assert not fused_evidence_found(retriever, ["a", "b"], [{3}], k=2)
    assert fused_evidence_found(retriever, ["a", "b"], [{3}], k=3)


def test_refusals_count_by_answerability():
    e = Evaluation([0, 0, 1, 1], [1, 1, 0, 1])
    # answerable: questions 0 and 2 (refused 1 of them); unanswerable 1 and 3 (both)
    assert refusals(e, [True, False, True, False]) == (1, 2)
    with pytest.raises(ValueError):
        refusals(e, [True, False])


def test_effect_and_verdict():
    # every question one better: the difference is 1 in every resample
    gain = effect([1, 1, 1, 1], [0, 0, 0, 0])
    assert (gain.difference, gain.low, gain.high, gain.verdict) == (1, 1, 1, "gain")
    loss = effect([0, 0, 0], [1, 1, 1])
    assert loss.verdict == "loss" and str(loss) == "-1.000 [-1.000, -1.000]"
    # one better, one worse, two tied: mean 0, resamples on both sides of zero
    mixed = effect([1, 0, 1, 0], [0, 1, 1, 0])
    assert mixed.difference == 0 and mixed.low < 0 < mixed.high
    assert mixed.verdict == "within the noise"


def test_choose_by_the_rule():
    answerable = [True, True, False, False]
    evaluations = {
        "a": Evaluation([1, 0, 1, 0], [0, 0, 1, 0]),  # 0.5, refuses 1 unanswerable
        "b": Evaluation([1, 0, 1, 1], [0, 1, 1, 1]),  # 0.75, refuses 2
        "c": Evaluation([1, 1, 0, 1], [0, 0, 0, 1]),  # 0.75, refuses 1
    }
    assert choose(evaluations, answerable) == "b"  # tie at 0.75: b refuses more
    assert choose(evaluations, answerable, lambda n: n != "b") == "c"
    with pytest.raises(ValueError):
        choose(evaluations, answerable, lambda n: False)


def test_threshold_sweep():
    scores = [0.9, 0.2, np.nan, 0.5]
    answered = [True, True, False, True]
    if_answered = [True, False, False, True]
    if_refused = [False, True, True, False]  # question 1 and 2 are unanswerable
    answerable = [True, False, False, True]
    at_none, at_03, at_06 = threshold_sweep(
        scores, answered, if_answered, if_refused, answerable, [-np.inf, 0.3, 0.6]
    )
    # no threshold: 0 right, 1 wrong answer, 2 refused right, 3 right -> 3 of 4
    assert at_none.share == 0.75 and (
        at_none.refused_answerable,
        at_none.refused_unanswerable,
    ) == (0, 1)
    # 0.3 also refuses question 1 (0.2), which is unanswerable: all four right
    assert at_03.share == 1.0 and at_03.refused_unanswerable == 2
    # 0.6 also refuses question 3 (0.5), answerable: 3 of 4, one answerable refused
    assert at_06.share == 0.75 and at_06.refused_answerable == 1
    assert list(at_06.refused) == [False, True, True, True]
    with pytest.raises(ValueError):
        threshold_sweep([1.0], answered, if_answered, if_refused, answerable, [0])


def test_markdown_table():
    table = markdown_table(["reader", "share"], [["a|b", 0.5], ["c", 2]])
    assert table.data == "| reader | share |\n|---|---|\n| a\\|b | 0.500 |\n| c | 2 |"
    with pytest.raises(ValueError):
        markdown_table(["one"], [[1, 2]])


def test_valid_citations():
    sources = ["Mars has two moons.", "Venus has no moon."]
    answers = [
        ("Mars has two moons [1].", sources),  # cites a source of the prompt: valid
        ("Venus has no moon [3].", sources),  # cites a third source: invalid
        ("Mars has two moons.", sources),  # cites nothing: invalid
        ("The sources do not contain the answer.", sources),  # a refusal: no claim
    ]
    assert valid_citations(answers) == pytest.approx(1 / 3)
    assert valid_citations(answers[:1]) == 1.0
    with pytest.raises(ValueError):
        valid_citations(answers[3:])


def test_with_interval():
    # constant values: every resample has mean 1, so the interval is [1, 1]
    assert with_interval([1, 1, 1]) == "1.000 [1.000, 1.000]"
    text = with_interval([0, 1, 0, 1])
    low, high = (float(x) for x in text[7:-1].split(", "))
    assert text.startswith("0.500 [") and 0 <= low < 0.5 < high <= 1
