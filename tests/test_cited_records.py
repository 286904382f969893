"""Every structured reply the book recorded for the cited reader
(ragbook.generation.cited), read as the reader reads it: the reply parses under the
grammar's form (ragbook.generation.cited_prompt), one claim or two, and the answer it
renders carries, in every claim, citations of sources that its prompt holds. The claims
and citations are found by the grounding checks (ragbook.generation.verification), not
by the reader's own rendering."""

import re

import pytest

from ragbook import llm
from ragbook.generation.cited_prompt import (
    OPENING,
    Sentence,
    parse_claims,
    render_answer,
)
from ragbook.generation.verification import check_answer

_SENTENCE = re.compile(r"^\[(\d+)\.(\d+)\] (.*)$", re.M)


def cited_replies():
    for entry in llm.book_records("qwen2.5-1.5b").entries():
        request = entry["request"]
        if request["kind"] == "structured" and request["opening"] == OPENING:
            yield request, entry["result"]


REPLIES = list(cited_replies())


def test_the_book_holds_the_cited_readers_replies():
    # dev, test and held-out questions and chapter 11's examples
    assert len(REPLIES) >= 350


@pytest.mark.parametrize("number", range(len(REPLIES)))
def test_every_recorded_answer_cites_in_every_claim_a_source_of_its_prompt(number):
    request, result = REPLIES[number]
    user = request["messages"][-1]["content"]
    sentences = [
        Sentence(f"{s}.{n}", int(s), text) for s, n, text in _SENTENCE.findall(user)
    ]
    held = {s.source for s in sentences}
    assert held, "the prompt numbers no sentence"
    if result["finish_reason"] == "length":
        return  # cut short: the reader refuses, nothing is claimed
    assert result["finish_reason"] == "stop", result["text"]
    # one claim, or two for a question in two parts
    for words, evidence in parse_claims(result["text"], sentences):
        if words.strip(" .").lower() in ("", "none"):
            continue  # a refusal: nothing is claimed
        checks = check_answer(render_answer(words, evidence), {n: "" for n in held})
        assert checks
        for check in checks:
            assert check.cited, check.claim
            assert set(check.cited) <= held and not check.missing_sources, check.claim
