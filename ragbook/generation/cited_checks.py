"""The checks the cited reader (:mod:`ragbook.generation.cited`) runs on its model's
answer.

Each takes the answer's words, or the rendered answer, and the sentences or sources it
rests on:

- :func:`unsupported_numbers`: the answer's numbers that no evidence sentence holds;
- :func:`without_designations`: the answer's words less the numbers of the names the
  question gives ("Voyager 2"), which are names, not figures;
- :func:`says_not_stated`: words that say the sources do not state the answer, where
  the grammar asked for "none";
- :func:`missing_names`: names of the question that no source of the evidence holds;
- :func:`unnamed`: names of the question that an evidence sentence does not name;
- :func:`overlap` and :func:`anchor`: how much of the answer a sentence says, and the
  sentence that says most of it, when the model named a worse one;
- :func:`supported`: whether the rendered answer passes the grounding checks
  (:mod:`ragbook.generation.verification`);
- :func:`period_mismatch`: a year given for a day, or a day for a year;
- :func:`spelled_as_evidence`: the answer's small numbers in the words its evidence
  spells them with ("2" as "two"), so that those checks find them.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import NUMBER_WORDS, SPELLED_NUMBER, caret_powers
from .cited_prompt import MAX_CHARS, Sentence
from .generators import is_refusal
from .prompts import Prompt
from .siblings import OPENERS
from ..indexing.text import analyze
from .verification import check_answer

__all__ = [
    "FRAMES",
    "unsupported_numbers",
    "without_designations",
    "says_not_stated",
    "missing_names",
    "unnamed",
    "overlap",
    "anchor",
    "supported",
    "cut",
    "uncut",
    "half_range",
    "spelled_as_evidence",
    "grouped_as_evidence",
    "period_mismatch",
]


def cut(words: str) -> bool:
    """Whether the answer's words reach the grammar's length limit
    (:data:`~ragbook.generation.cited_prompt.MAX_CHARS`): cut there, they may stop
    mid-claim ("... while the polar"), so the sentence they come from says it whole."""
    return len(words.strip()) >= MAX_CHARS


def uncut(words: str) -> str:
    """The answer's words without the word the length limit cut (:func:`cut`): "...
    farthest at aphelion, about 24.9." ends in a cut "249.2", a number no sentence
    holds; the words before it are the model's."""
    return re.sub(r"\S+\s*$", "", words) if cut(words) else words


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


# the body that orbits and distances are measured from, not a subject of the
# question: "what it takes in from the Sun" (Earth, which questions also name as a
# frame, "never faces Earth", names too many launches and returns to be left out)
FRAMES = ("Sun",)
# a name: a capitalised word that does not open the question ("Titan", "Galle")
_NAME = re.compile(r"(?<!^)\b[A-Z][a-z]+")


def missing_names(
    prompt: Prompt, evidence: list[Sentence], exempt: tuple[str, ...] = ()
) -> list[str]:
    """The names of the question (capitalised words but its first, less those in
    ``exempt``) that no source of the evidence holds, in its label or its text, nor
    any other source of the prompt from the same section (the same label): an answer
    about Saturn to a question about Titan. A section's chunks share its subject: the
    sentence after the one that names BepiColombo still speaks of it. A person is
    named by the surname alone: "Challis proposed Oceanus" names James Challis."""
    labels = {prompt.sources[s.source - 1].label for s in evidence}
    held = " ".join(
        f"{source.label} {source.text}"
        for source in prompt.sources
        if source.label in labels
    )
    question = prompt.question
    names = dict.fromkeys(
        n for n in _NAME.findall(question) if n not in exempt + FRAMES
    )
    return [
        name
        for name in names
        if not re.search(_as_written(name), held)
        and not _by_surname(name, question, held)
    ]


def _by_surname(name: str, question: str, held: str) -> bool:
    """Whether ``name`` is a given name whose surname follows it in the question and
    stands alone in ``held``, with no capitalised word before it: "James" in "James
    Challis" and "Challis proposed"; not "Hellas" in "Hellas Planitia", which no text
    writes as "Planitia" alone."""
    follows = re.search(rf"\b{re.escape(name)}\s+([A-Z][a-z]+)\b", question)
    if follows is None:
        return False
    return any(
        not re.search(r"\b[A-Z][\w'’-]*\s+$", held[: m.start()])
        for m in re.finditer(rf"\b{follows.group(1)}\b", held)
    )


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


def without_designations(words: str, question: str) -> str:
    """The answer's words with the number of each designation that the question names
    dropped: "Voyager 2 passed about 81,500 km above the cloud tops" reads as "Voyager
    passed ...", so that the sentence stating 81,500 km need not also say "Voyager 2".
    The question's name is a name, not a figure to find; a designation the question
    does not name ("Mariner 10" for a question about Mariner 2) keeps its number."""
    for name, number in set(_DESIGNATION.findall(validate.text(question, "question"))):
        words = re.sub(rf"\b({re.escape(name)})[ -]{number}(?![\d.,]\d)", r"\1", words)
    return words


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
    (``4,333`` and ``4333`` count as the same number, as do ``10.0`` and ``10``; a
    sentence's ``two`` holds 2: numbers up to twenty spelled out; "a thousand" holds
    1000, "a dozen" 12; the exponent of ``10²⁰`` is the number 20). The number of a
    designation ("Ariane 5") is held only by a sentence that gives the same
    designation: it is part of a name, and a sentence with a 5 in it does not name the
    rocket."""
    texts = " ".join(s.text for s in evidence)
    designations = [
        m for m in _DESIGNATION.finditer(words) if m[1].lower() not in OPENERS
    ]
    not_given = [
        f"{m[1]} {m[2]}"
        for m in designations
        if not re.search(rf"\b{re.escape(m[1])}[ -]{m[2]}(?!\d)", texts)
    ]
    for m in reversed(designations):  # a designation's number is not a figure
        words = words[: m.start(2)] + words[m.end(2) :]
    held = {_plain(n) for s in evidence for n in _NUMBER.findall(caret_powers(s.text))}
    held |= {
        str(NUMBER_WORDS[w.lower()])
        for s in evidence
        for w in SPELLED_NUMBER.findall(s.text)
    }
    held |= {str(_ROUND[w.lower()]) for s in evidence for w in _A_ROUND.findall(s.text)}
    found = _NUMBER.findall(caret_powers(words))
    return [n for n in found if _plain(n) not in held] + not_given


def _plain(number: str) -> str:
    """A number as its value is written: no thousands commas, no zeros after the
    decimal point that add nothing ("10.0" is 10, "4,333" is 4333)."""
    number = number.replace(",", "")
    return re.sub(r"\.0+$|(\.\d*?)0+$", r"\1", number) if "." in number else number


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


# a question that asks how long a day (a turn on the axis) or a year or an orbit lasts
# ("go once around the planet" is said of moons and of cloud bands: neither)
_ASKS = {
    "a day": r"\b(?:a|the|its|one|solar|sidereal) day\b|\brotat\w*|\bspin\w*"
    r"|\bturns? (?:once )?(?:on|about|around) its axis",
    "an orbit": r"\b(?:a|the|its|one) year\b|\borbit\w*|\baround the sun\b",
}
# what a sentence says a period of: "Earth days" is a unit, not a day
_SAYS = {
    "a day": r"rotat\w*|\bspin\w*|\baxis\b|\b(?:solar|sidereal) day|\bnoon\b"
    r"|\bsunrise|\bday (?:on|lasts|is)\b|\blength of (?:a|the|its) day",
    "an orbit": r"\borbit\w*|\baround the sun\b|\brevolution"
    r"|\b(?:a|its|one|\w+ian) year\b|\byear on\b",
}


def period_mismatch(question: str, words: str, evidence: list[str]) -> str | None:
    """Why the answer's figure is the wrong period: the question asks how long a day
    lasts (a turn on the axis) and the evidence sentences speak of an orbit and not
    of a day ("One trip around the Sun takes about 4.6 Earth years" for "How long is
    a day on Ceres?"), or the other way round. None when the question asks neither,
    or both, or a sentence speaks of what it asks."""
    question = validate.text(question, "question")
    asked = [p for p, pattern in _ASKS.items() if re.search(pattern, question, re.I)]
    if len(asked) != 1 or not re.match(
        r"how long|what is the \w+ period", question, re.I
    ):
        return None
    other = "an orbit" if asked[0] == "a day" else "a day"
    said = " ".join(validate.texts(evidence, "evidence"))
    if re.search(_SAYS[asked[0]], said, re.I) or not re.search(
        _SAYS[other], said, re.I
    ):
        return None
    return f"the figure is the period of {other}; the question asks for {asked[0]}"
