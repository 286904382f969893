"""The checks the cited reader (:mod:`ragbook.generation.cited`) runs on its model's
answer.

Each takes the answer's words, or the rendered answer, and the sentences or sources it
rests on:

- :func:`unsupported_numbers`: the answer's numbers that no evidence sentence holds;
- :func:`says_not_stated`: words that say the sources do not state the answer, where
  the grammar asked for "none";
- :func:`missing_names`: names of the question that no source of the evidence holds;
- :func:`unnamed`: names of the question that an evidence sentence does not name;
- :func:`overlap` and :func:`anchor`: how much of the answer a sentence says, and the
  sentence that says most of it, when the model named a worse one;
- :func:`supported`: whether the rendered answer passes the grounding checks
  (:mod:`ragbook.generation.verification`);
- :func:`spelled_as_evidence`: the answer's small numbers in the words its evidence
  spells them with ("2" as "two"), so that those checks find them.
"""

from __future__ import annotations

import re

from .answer_types import NUMBER_WORDS, SPELLED_NUMBER, caret_powers
from .cited_prompt import MAX_CHARS, Sentence
from .generators import is_refusal
from .prompts import Prompt
from ..indexing.text import analyze
from .verification import check_answer

__all__ = [
    "unsupported_numbers",
    "says_not_stated",
    "missing_names",
    "unnamed",
    "overlap",
    "anchor",
    "supported",
    "cut",
    "half_range",
    "spelled_as_evidence",
    "grouped_as_evidence",
]


def cut(words: str) -> bool:
    """Whether the answer's words reach the grammar's length limit
    (:data:`~ragbook.generation.cited_prompt.MAX_CHARS`): cut there, they may stop
    mid-claim ("... while the polar"), so the sentence they come from says it whole."""
    return len(words.strip()) >= MAX_CHARS


# a range of two figures with its unit: "from about 20 km to about 96 km", "between 10
# and 14 gauss"
_RANGE = re.compile(
    r"\b(?:from|between)\s+(?:about |roughly |some )?(\d[\d,]*(?:\.\d+)?)"
    r"(?:\s*([a-z°%]+))?\s+(?:to|and)\s+(?:about |roughly |some )?"
    r"(\d[\d,]*(?:\.\d+)?)\s*([a-z°%]+)",
    re.I,
)
_FIGURE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*([a-z°%]+)", re.I)
# a question that asks for one end of a range
_ONE_END = re.compile(
    r"\b(?:largest|greatest|maximum|minimum|smallest|highest|lowest|most|least"
    r"|at (?:most|least)|up to|widest|narrowest|closest|farthest|furthest)\b",
    re.I,
)


def half_range(question: str, words: str, evidence: list[Sentence]) -> bool:
    """Whether the answer gives one end of a range that an evidence sentence states,
    in the range's unit ("96 km" where the width "varies from about 20 km to about 96
    km"), to a question that does not ask for one end ("largest", "at most"): half a
    range is another figure, so the sentence says it whole."""
    if _ONE_END.search(question):
        return False
    numbers = {n.replace(",", "") for n in _NUMBER.findall(words)}
    given = {(n.replace(",", ""), unit.lower()) for n, unit in _FIGURE.findall(words)}
    for sentence in evidence:
        for low, low_unit, high, unit in _RANGE.findall(sentence.text):
            ends = {
                (low.replace(",", ""), (low_unit or unit).lower()),
                (high.replace(",", ""), unit.lower()),
            }
            if len({n for n, _ in ends} & numbers) == 1 and ends & given:
                return True
    return False


def supported(answer: str, prompt: Prompt) -> bool:
    """Whether every claim of a rendered ``answer`` passes the grounding checks
    (:func:`ragbook.generation.verification.check_answer`) against the sources of
    ``prompt``."""
    checks = check_answer(answer, [source.text for source in prompt.sources])
    return bool(checks) and all(check.supported for check in checks)


# a name: a capitalised word that does not open the question ("Titan", "Galle")
_NAME = re.compile(r"(?<!^)\b[A-Z][a-z]+")


def missing_names(
    prompt: Prompt, evidence: list[Sentence], exempt: tuple[str, ...] = ()
) -> list[str]:
    """The names of the question (capitalised words but its first, less those in
    ``exempt``) that no source of the evidence holds, in its label or its text, nor
    any other source of the prompt from the same section (the same label): an answer
    about Saturn to a question about Titan. A section's chunks share its subject: the
    sentence after the one that names BepiColombo still speaks of it."""
    labels = {prompt.sources[s.source - 1].label for s in evidence}
    held = " ".join(
        f"{source.label} {source.text}"
        for source in prompt.sources
        if source.label in labels
    )
    names = dict.fromkeys(n for n in _NAME.findall(prompt.question) if n not in exempt)
    return [name for name in names if not re.search(_as_written(name), held)]


def _as_written(name: str) -> str:
    """The pattern of a name in its other forms: "Earths" is found as "Earth's" and
    "Earth" (a plural or a possessive is one name)."""
    if not re.search(r"[^s']s$", name):
        return rf"\b{re.escape(name)}"
    return rf"\b{re.escape(name)}|\b{re.escape(name[:-1])}(?:['’]s)?\b"


# a name as a question writes it: a capitalised or all-capital word but its first
# ("Galle", "MESSENGER"), read without a possessive 's
_QUESTION_NAME = re.compile(r"(?<!^)\b[A-Z][A-Za-z'’-]+")


# a name with a number, as spacecraft and missions are named: "Voyager 1", "Luna 16"
_DESIGNATION = re.compile(r"\b([A-Z][A-Za-z]+)[ -](\d+)(?![\d.,])")


def unnamed(
    prompt: Prompt, sentence: Sentence, exempt: tuple[str, ...] = ()
) -> list[str]:
    """The names of the prompt's question (less those in ``exempt``) that ``sentence``
    and its source's label do not name: "MESSENGER" for "How much did the MESSENGER
    spacecraft weigh at launch?" and a sentence about a person's 70 kg, or "Venera 9"
    for a sentence about Venera 7 (a name with a number is one name). The sentence
    may still be about it ("It rose ..."), so an unnamed name is a reason to look
    again, not to refuse."""
    question = prompt.question.strip()
    found = _QUESTION_NAME.findall(question)
    names = dict.fromkeys(re.sub(r"['’]s$", "", n) for n in found)
    held = f"{prompt.sources[sentence.source - 1].label} {sentence.text}"
    missing = [
        name
        for name in names
        if name not in exempt and not re.search(_as_written(name), held)
    ]
    # a name with a number is one name: Venera 7 is not Venera 9
    return missing + [
        f"{name} {number}"
        for name, number in _DESIGNATION.findall(question)
        if name not in missing
        and not re.search(rf"\b{re.escape(name)}[ -]{number}(?!\d)", held)
    ]


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# a round number in words: "about a thousand impact craters" holds 1000
_ROUND = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 10**6}
_A_ROUND = re.compile(r"\b(?:a|one) (dozen|hundred|thousand|million)\b", re.I)
# a refusal in words where the grammar asked for "none": "is not directly stated in
# the sources", "not mentioned", "the sources do not say"
_NOT_STATED = re.compile(
    r"\bnot\b(?:\s+\w+){0,2}?\s+(?:stated|mentioned|given|provided|specified)\b", re.I
)


def says_not_stated(words: str) -> bool:
    """True when the answer's words say that the sources do not state the answer
    (:func:`~ragbook.generation.generators.is_refusal`, or "... is not stated ...")."""
    return is_refusal(words) or _NOT_STATED.search(words) is not None


def unsupported_numbers(words: str, evidence: list[Sentence]) -> list[str]:
    """The numbers of the answer's words that none of its evidence sentences holds
    (``4,333`` and ``4333`` count as the same number, and a sentence's ``two`` holds
    2: numbers up to twenty spelled out; "a thousand" holds 1000, "a dozen" 12; the
    exponent of ``10²⁰`` is the number 20)."""
    held = {
        n.replace(",", "")
        for s in evidence
        for n in _NUMBER.findall(caret_powers(s.text))
    }
    held |= {
        str(NUMBER_WORDS[w.lower()])
        for s in evidence
        for w in SPELLED_NUMBER.findall(s.text)
    }
    held |= {str(_ROUND[w.lower()]) for s in evidence for w in _A_ROUND.findall(s.text)}
    found = _NUMBER.findall(caret_powers(words))
    return [n for n in found if n.replace(",", "") not in held]


def overlap(words: str, sentence: Sentence) -> float:
    """The share of the answer's analysed terms
    (:func:`~ragbook.indexing.text.analyze`) that the sentence holds."""
    terms = analyze(words)
    held = set(analyze(sentence.text))
    return sum(t in held for t in terms) / len(terms) if terms else 0.0


def anchor(
    words: str, named: list[Sentence], citable: list[Sentence], numbers: bool = True
) -> list[Sentence]:
    """The evidence of an answer: the sentences the model named, unless a sentence it
    may cite says more of what the answer says; then that sentence.

    A sentence ranks by whether it holds every number of the answer (with
    ``numbers``), then by :func:`overlap`. The named sentences keep their place when
    the best of them ranks as high as any; a small model's ids often miss the
    sentence its words come from, and its words are the better pointer."""

    def rank(sentence: Sentence) -> tuple:
        holds = not numbers or not unsupported_numbers(words, [sentence])
        return (holds, overlap(words, sentence))

    best = max(citable, key=rank)  # the first among equals
    if named and max(rank(s) for s in named) >= rank(best):
        return list(named)
    return [best]


def spelled_as_evidence(words: str, evidence: list[Sentence]) -> str:
    """The answer's words with each whole number up to twenty that no evidence
    sentence writes in digits, but one spells out, written as that sentence spells it:
    "2" for "Two small, irregular moons" becomes "Two". The number check
    (:func:`unsupported_numbers`) reads number words; the grounding checks look for
    the answer's words in the sources and would not find "2" there."""
    digits = {n.replace(",", "") for s in evidence for n in _NUMBER.findall(s.text)}
    spelled = {
        NUMBER_WORDS[w.lower()]: w.lower()
        for s in evidence
        for w in SPELLED_NUMBER.findall(s.text)
    }

    def word(match: re.Match) -> str:
        number = match.group()
        if number in digits or int(number) not in spelled:
            return number
        text = spelled[int(number)]
        return text.capitalize() if match.start() == 0 else text

    return re.sub(r"(?<![\d.,])\d{1,2}(?![\d.,]\d|\d)", word, words)


def grouped_as_evidence(words: str, sentences: list[Sentence]) -> str:
    """The answer's words with a number whose groups of thousands a space has split
    ("34, 800 km") joined as one of ``sentences`` writes it ("34,800 km"); a list of
    numbers ("12, 345") that no sentence writes joined stays as it is."""
    held = {n for s in sentences for n in _NUMBER.findall(s.text)}

    def join(match: re.Match) -> str:
        joined = f"{match.group(1)},{match.group(2)}"
        return joined if joined in held else match.group()

    return re.sub(r"(?<![\d.,])(\d{1,3}), (\d{3}(?:,\d{3})*)(?![\d,]\d)", join, words)
