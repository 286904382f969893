"""Relevance from evidence spans, by character range, for any chunking."""

import pytest

from ragbook.indexing.chunking import Chunk
from ragbook.corpus.documents import parse_markdown
from ragbook.corpus.labels import (
    contains_span,
    is_cut,
    locate_span,
    parse_questions,
    relevant_chunks,
)

DOC = parse_markdown(
    "# Mars\n\nMars has two moons. They are Phobos and Deimos. Phobos is closer.",
    "mars",
)
DOCS = {"mars": DOC}


def chunk(i, start, end, doc="mars"):
    return Chunk(i, doc, 0, start, end, DOC.text[start:end])


def test_locate_span_finds_the_unique_occurrence():
    span = locate_span(DOCS, "mars", "Phobos and Deimos")
    assert DOC.text[span.start : span.end] == "Phobos and Deimos" and span.words == 3
    with pytest.raises(ValueError, match="not found"):
        locate_span(DOCS, "mars", "Ganymede")
    with pytest.raises(ValueError, match="more than once"):
        locate_span(DOCS, "mars", "Phobos")
    with pytest.raises(ValueError, match="not in the corpus"):
        locate_span(DOCS, "venus", "Phobos")


def test_a_chunk_is_relevant_only_when_it_holds_a_span_whole():
    span = locate_span(DOCS, "mars", "They are Phobos and Deimos.")
    whole = chunk(0, span.start - 1, span.end)
    exact = chunk(1, span.start, span.end)
    cut_left = chunk(2, span.start + 1, span.end + 5)
    cut_right = chunk(3, span.start - 5, span.end - 1)
    elsewhere = chunk(4, span.start, span.end, doc="venus")
    assert [
        contains_span(c, span) for c in (whole, exact, cut_left, cut_right, elsewhere)
    ] == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_relevant_chunks_per_piece_and_alternatives():
    records = [
        {
            "id": "q1",
            "question": "What moons does Mars have?",
            "answer": "Phobos and Deimos",
            "style": "lexical",
            "evidence": [
                [
                    {"doc": "mars", "text": "They are Phobos and Deimos."},
                    {"doc": "mars", "text": "Mars has two moons."},
                ]
            ],
        }
    ]
    (question,) = parse_questions(records, [DOC])
    first, second = question.evidence[0].spans
    chunks = [
        chunk(0, first.start, first.end + 3),
        chunk(1, second.start, second.end),
        chunk(2, 0, 5),
    ]
    assert relevant_chunks(question, chunks) == [frozenset({0, 1})]
    assert not is_cut(question.evidence[0], chunks)
    assert is_cut(question.evidence[0], [chunks[2]])


def test_bad_question_records_are_refused():
    good = {
        "id": "q",
        "question": "?",
        "answer": "",
        "style": "unanswerable",
        "evidence": [],
    }
    with pytest.raises(ValueError, match="used twice"):
        parse_questions([good, good], [DOC])
    with pytest.raises(ValueError, match="lacks answer"):
        parse_questions([{k: v for k, v in good.items() if k != "answer"}], [DOC])
    with pytest.raises(ValueError, match="style must be one of"):
        parse_questions([dict(good, style="other")], [DOC])
    with pytest.raises(ValueError, match="exactly the unanswerable"):
        parse_questions([dict(good, style="lexical")], [DOC])
    with pytest.raises(ValueError, match="no span"):
        parse_questions([dict(good, style="lexical", evidence=[[]])], [DOC])
