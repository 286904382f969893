"""One cited answer followed from question to verdict (ragbook.evaluation.trace), with
the stand-in model of test_cited.py whose reply is set by hand, over a corpus of two
short articles; every expected step is read off the articles by hand."""

from __future__ import annotations

import pytest

from ragbook.corpus.documents import parse_markdown
from ragbook.corpus.keys import parse_key
from ragbook.corpus.labels import Evidence, Question, Span
from ragbook.evaluation.trace import trace_answer
from ragbook.generation.cited import CitedReader
from ragbook.system.rag import RAGPipeline

from test_cited import StandIn

VENUS = (
    "# Venus\n\n## Orbit\n\nThe planet travels around the Sun once every 224.7 Earth "
    "days. It rotates backwards.\n"
)
MARS = "# Mars\n\n## Moons\n\nMars has two small moons. They are Phobos and Deimos.\n"


def system(reply):
    pipeline = RAGPipeline(
        chunker="sentences",
        words=100,
        retriever="bm25",
        k=2,
        generator=CitedReader(StandIn(reply), closed_book=False),
    )
    pipeline.index([parse_markdown(VENUS, "venus"), parse_markdown(MARS, "mars")])
    return pipeline


def year_on_venus():
    start = VENUS.index("The planet")
    end = VENUS.index("days.") + len("days")
    span = Span("venus", start, end, VENUS[start:end])
    return Question(
        "q",
        "How long is a year on Venus?",
        "224.7 Earth days",
        "lexical",
        (Evidence((span,)),),
        parse_key(["224.7 days", "224.7 Earth days"]),
    )


def test_a_moved_citation_is_traced_to_a_correct_and_supported_answer():
    # the model names the sentence about rotation; the orbit sentence holds 224.7
    traced = system(" 224.7 Earth days\nEvidence: [1.2]")
    trace = trace_answer(traced, year_on_venus())
    assert trace.action == "moved"
    assert trace.named == ("1.2",) and trace.evidence == ("1.1",)
    assert trace.answer == "224.7 Earth days [1]."
    assert trace.retrieved[0].startswith("[1] Venus, Orbit")
    assert [s.id for s in trace.shown[:2]] == ["1.1", "1.2"]
    assert len(trace.checks) == 1 and trace.checks[0].cited == (1,)
    assert trace.supported and trace.correct
    text = trace.render()
    assert "moved the citation" in text and "(named 1.2, cites 1.1)" in text
    assert "correct and supported" in text
    assert all(len(line) <= 88 for line in text.split("\n"))


def test_a_refusal_is_traced_with_its_reason_and_the_keys_verdict():
    # a figure in no sentence of the sources: the number check refuses
    traced = system(" 225 days\nEvidence: [1.1]")
    trace = trace_answer(traced, year_on_venus())
    assert trace.action == "refused" and "number" in trace.why
    assert not trace.supported and trace.correct is False
    assert trace.checks == ()
    steps = dict(trace.steps())
    assert steps["reader"].startswith("refused: ") and steps["key"] == "not correct"
    assert "check 1" not in steps


def test_a_question_without_a_key_has_no_verdict_of_the_key():
    trace = trace_answer(
        system(" Phobos\nEvidence: [1.2]"), "What moons does Mars have?"
    )
    assert trace.correct is None and "key" not in dict(trace.steps())
    assert trace.action == "kept" and trace.answer == "Phobos [1]."


def test_only_a_cited_reader_can_be_traced():
    plain = RAGPipeline(chunker="sentences", words=100, retriever="bm25", k=2)
    plain.index([parse_markdown(VENUS, "venus")])
    with pytest.raises(TypeError, match="CitedReader"):
        trace_answer(plain, "How long is a year on Venus?")
