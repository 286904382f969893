"""Sources that disagree (chapter 14).

A corpus can state one fact twice with different figures: an old fact sheet beside the
article, a correction planted after the true sentence. A reader that cites one of
them is well grounded and may still be wrong, and nothing tells the user that another
source says otherwise. :func:`disagreeing` finds, among the sentences of a prompt,
those that state the answer's kind of figure (:mod:`ragbook.generation.answer_types`)
about the same thing with another value; the cited reader then says that the sources
disagree and cites both sides.

"The same thing" is read from words, as a person skimming would: the sentence names
the question's subject (in its text or its source's label), and one of its clauses
holds a figure of the kind the question asks for beside every word of the question
that says what is asked about ("moons" in "How many moons does Mars have?"). Two figures agree when they differ by less than 2 % (``88`` and ``87.969``
days). A sentence that restates the evidence's own figures is no disagreement. The
rule misses a disagreement worded differently from the question ("satellites" for
"moons"), and can take two figures of different things described in the same words
for one.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import NUMBER_WORDS, SPELLED_NUMBER, QUANTITIES, expected_kinds
from .cited_prompt import Sentence, numbered_sentences
from .prompts import Prompt
from ..indexing.text import analyze

__all__ = ["DISAGREE", "TOLERANCE", "figures", "attribute_terms", "disagreeing"]

DISAGREE = "The sources disagree:"  # how an answer says so, before the other side
TOLERANCE = 0.02  # two figures within 2 % of each other agree

_YEAR = re.compile(r"\b(1[0-9]{3}|2[0-9]{3})\b")
_FIGURE = re.compile(r"(?<![\w.])[-−]?(\d[\d,]*(?:\.\d+)?)(?!\.\d)|" + SPELLED_NUMBER.pattern, re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def _value(text: str) -> float:
    """The value of a figure as matched: ``"-173"``, ``"6.4 billion years"``,
    ``"two hours"``."""
    text = text.strip().lower()
    sign = -1.0 if text[:1] in "-−" else 1.0
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    number = (
        float(digits.group().replace(",", ""))
        if digits
        else float(NUMBER_WORDS[SPELLED_NUMBER.search(text).group().lower()])
    )
    scale = re.search(r"thousand|million|billion|trillion", text)
    return sign * number * (_SCALE[scale.group()] if scale else 1.0)


def figures(text: str, kind: str) -> list[float]:
    """The figures of ``kind`` in ``text``: a length, duration, mass, temperature or
    speed with its unit (the number as written, scale words applied: ``6.4 billion
    years`` is 6.4e9), a year for a date, and for a count every number or number word
    that is not a year and has no unit."""
    text = validate.text(text, "text")
    if kind in QUANTITIES:
        return [_value(m.group()) for m in QUANTITIES[kind].finditer(text)]
    if kind == "date":
        return [float(y) for y in _YEAR.findall(text)]
    if kind == "count":
        rest = text
        for pattern in QUANTITIES.values():
            rest = pattern.sub(" ", rest)
        rest = _YEAR.sub(" ", rest)
        return [_value(m.group()) for m in _FIGURE.finditer(rest)]
    return []


def _without_figures(text: str, kind: str) -> str:
    """The text with its figures of ``kind``, units and all, taken out."""
    if kind in QUANTITIES:
        return QUANTITIES[kind].sub(" ", text)
    return _FIGURE.sub(" ", _YEAR.sub(" ", text))


def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b))


def _stem(term: str) -> str:
    return term[:-1] if term.endswith("s") and len(term) > 3 else term


def _terms(text: str) -> set[str]:
    return {_stem(t) for t in analyze(text)}


# the words of "how long", "how many" ...: they ask, they are not what is asked about
_ASKING = set(
    "long many much big large far old high deep wide fast hot cold warm tall thick "
    "heavy massive across number far".split()
)
_ASKING_STEMS = {_stem(word) for word in _ASKING}
_CLAUSE = re.compile(r"[,;:()]|\band\b|\bwhile\b|\bwhich\b")


def attribute_terms(question: str, names: list[str]) -> set[str]:
    """The terms of the question that say what is asked about ("moons" in "How many
    moons does Mars have?"): its analysed terms less the names and the words of
    asking ("many", "long")."""
    named = {_stem(t) for n in names for t in analyze(n)}
    return {
        term
        for term in map(_stem, analyze(question))
        if term not in named and term not in _ASKING_STEMS and not term.isdigit()
    }


def disagreeing(
    question: str,
    words: str,
    evidence: list[Sentence],
    prompt: Prompt,
    subjects: tuple[str, ...] = (),
) -> list[Sentence]:
    """The sentences of ``prompt``'s sources that give another figure than the answer's
    ``words`` for what ``question`` asks: a figure of the kind the question asks for
    (:func:`~ragbook.generation.answer_types.expected_kinds`), none of whose figures
    agrees with the answer's or the evidence's, in a clause (a stretch between commas,
    colons or "and") holding every :func:`attribute_terms` of the question outside
    its figures and their units, in a
    sentence that names the question's subject (one of ``subjects`` it names, or its
    other capitalised words) in its text or its source's label."""
    question = validate.text(question, "question")
    kinds = [k for k in expected_kinds(question) if k not in ("name", "yes/no")]
    if not evidence or not kinds:
        return []
    named = [s for s in subjects if re.search(rf"\b{re.escape(s)}\b", question, re.I)]
    if not named:
        named = re.findall(r"(?<!^)\b[A-Z][a-z]+", question.strip())
    asked = attribute_terms(question, named)
    if not asked:
        return []  # nothing to tell one figure's subject from another's
    cited = {s.id for s in evidence}
    found = []
    for kind in kinds:
        answer = figures(words, kind)
        if not answer:
            continue
        known = answer + [v for s in evidence for v in figures(s.text, kind)]
        for sentence in numbered_sentences(prompt):
            if sentence.id in cited or sentence in found:
                continue
            label = prompt.sources[sentence.source - 1].label
            about = f"{label} {sentence.text}"
            if named and not any(re.search(rf"\b{re.escape(n)}", about) for n in named):
                continue
            for clause in _CLAUSE.split(sentence.text):
                values = figures(clause, kind)
                # the words around the figure, not its unit: "687 Earth days" is no
                # figure for "How long is a day?"
                around = _without_figures(clause, kind)
                if (
                    values
                    and not asked - _terms(around)
                    and not any(_agree(v, k) for v in values for k in known)
                ):
                    found.append(sentence)
                    break
    return found
