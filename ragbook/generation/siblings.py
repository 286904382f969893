"""What a figure is said of (chapter 15): the names of the clause a sentence states a
figure in, and whether they name a sibling of the thing a question asks about.

A sentence often gives a figure of a neighbour: "Chang'e 5 returned about 1.7 kg of
samples ..., and in June 2024 Chang'e 6 brought back ..." answers nothing about
Chang'e 6's haul. :func:`said_of_another` reads the names of the figure's clause and
returns the sibling it is said of. The rules read capitalised words, so a neighbour
named by a common noun ("the crust" for "the mantle") passes.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import caret_powers

__all__ = ["OPENERS", "said_of_another"]

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# capitalised words that open a sentence without naming anything, and months
OPENERS = set(
    "the a an it its in on at by of for from with after before during this that these "
    "those there he she they his her their some most all both each one along among "
    "between beyond near since until when while where although because as like such "
    "about around roughly nearly almost approximately over under only just up to "
    "january february march april may june july august september october november "
    "december".split()
)

# where a clause begins, for the name a figure is said of: a semicolon or a colon, or
# a comma before "and", "but", "while" or "whereas" ("..., and beyond its edge rises
# Olympus Mons, ... about 22 km")
_CLAUSE = re.compile(r"[;:]|,\s+(?:and|but|while|whereas)\s")
# a name as a run of capitalised words, with the number of a designation: "Olympus
# Mons", "Le Verrier", "Chang'e 5", "Venera 7"
_RUN = re.compile(
    r"\b[A-Z][\w'’-]*[a-z](?:\s+[A-Z][\w'’-]*[a-z])*(?:[ -]\d+(?!\d|[.,]\d))?"
)
# words beside a name that say nothing of its kind
_PLAIN = set(
    "the a an it its in on at by of for from with to and or but is are was were has "
    "have had does do did how what which who when whose s this that".split()
)


def _beside(text: str, start: int, end: int) -> set[str]:
    """The lowercased words just before and just after ``text[start:end]``, but plain
    ones, and the last word of a name of several: "ring" for "the Adams ring",
    "crater" for "the crater Tycho", "mons" for "Olympus Mons"; and the noun of an
    apposition: "gap" for "the Cassini Division, a gap ..."."""
    before = re.findall(r"[\w'’-]+", text[:start])[-1:]
    after = re.findall(r"[\w'’-]+", text[end:])[:1]
    after += re.findall(r"^,\s+(?:a|an|the)\s+([a-z][\w'’-]*)", text[end:])
    last = text[start:end].split()[-1:] if " " in text[start:end].strip() else []
    words = {w.lower() for w in before + after + last if not w[0].isdigit()}
    return words - _PLAIN


def _names(text: str, skip_first: bool = False) -> list[tuple[str, set[str]]]:
    """The names of ``text`` (runs of capitalised words, split after a possessive,
    without the openers and months of :data:`OPENERS`), each with its kind: the
    words beside it (:func:`_beside`) and, for a designation, its base ("#Venera"
    for "Venera 7")."""
    found = []
    for run in _RUN.finditer(text):
        if skip_first and run.start() == 0:
            continue
        start = run.start()
        for piece in re.split(r"(?<=['’]s)\s+", run.group()):
            end = start + len(piece)
            words = piece.split()
            while words and words[0].lower() in OPENERS:
                start += len(words[0]) + 1
                words = words[1:]
            name = re.sub(r"['’]s$", "", " ".join(words))
            if name and not name[0].isdigit():
                base = re.sub(r"[ -]\d+$", "", name)
                kind = _beside(text, start, start + len(name))
                found.append((name, kind | ({f"#{base}"} if base != name else set())))
            start = end + 1
    return found


def said_of_another(
    question: str,
    words: str,
    sentence: str,
    exempt: tuple[str, ...] = (),
    context: str = "",
) -> str | None:
    """The name of a sibling of the thing the question asks about, when ``sentence``
    says the answer's figure of that sibling; else None.

    The figure is said of the names of its clause before it: "Chang'e 5 returned
    about 1.7 kg ..., and in June 2024 Chang'e 6 brought back ..." says 1.7 kg of
    Chang'e 5; "...; the Le Verrier ring, at about 53,200 km; the Lassell ring ..."
    says 53,200 km of the Le Verrier ring. A sibling is a name of the same kind as a
    name of the question that the clause leaves out: the same designation with another
    number (Venera 7 for Venera 9), or a name with the same word beside it (the Le
    Verrier *ring* for the Lassell *ring*, Olympus *Mons* for Arsia *Mons*), or a
    name that the ``context`` lists with it ("the twin rovers, Spirit and
    Opportunity": Opportunity for Spirit). A clause that names nothing else says the
    figure of the name that opens the sentence before (``context`` holds the
    sources, one to a line), when the sentence names none of the question's names
    but the ``exempt`` ones. The ``exempt`` names (the articles' subjects) are
    never missing. A clause that names nothing after a sentence that opens with no
    name ("It is about 939 km in diameter"), or names a thing of another kind (a
    helicopter's mass for a rover's), passes: the rule cannot tell what it is said
    of."""
    question, words = validate.text(question, "question"), validate.text(words, "words")
    sentence, context = (
        validate.text(sentence, "sentence"),
        validate.text(context, "context"),
    )
    exempt = validate.texts(exempt, "exempt")
    numbers = [n.replace(",", "") for n in _NUMBER.findall(caret_powers(words))]
    if not numbers or re.search(rf"[A-Za-z][ -]{re.escape(numbers[0])}\b", words):
        return None  # no figure, or a designation's number ("Luna 16")
    sentence = caret_powers(sentence)
    at = next(
        (
            m.start()
            for m in _NUMBER.finditer(sentence)
            if m.group().replace(",", "") == numbers[0]
        ),
        None,
    )
    if at is None:
        return None
    starts = [m.end() for m in _CLAUSE.finditer(sentence[:at])]
    clause = sentence[starts[-1] if starts else 0 : at]
    exempt = {e.lower() for e in exempt}
    asked = {name for name, _ in _names(question, skip_first=True)}
    kinds = {  # the question's names the clause leaves out, with their kinds
        name: kind
        for name, kind in _names(question, skip_first=True)
        if re.sub(r"[ -]\d+$", "", name).lower() not in exempt
        and not re.search(rf"\b{re.escape(name)}\b".replace(r"\ ", "[ -]"), clause)
    }
    listed = {other for name in kinds for other in _listed_with(name, context)}
    named = [n for n, _ in _names(clause) if n.lower() not in exempt]
    absent = [n for n in kinds if not re.search(rf"\b{re.escape(n)}\b", sentence)]
    if not named and kinds and len(absent) == len(kinds):  # "it is ...": the
        # subject of the sentence before, when it is none of the question's names
        subject = _subject_before(sentence, context)
        if subject and subject.lower() not in exempt and subject not in asked:
            return subject
    for name, mine in _names(clause):
        if name.lower() in exempt or name in asked:
            continue
        if any(mine & kind for kind in kinds.values()) or name in listed:
            return name
    return None


def _subject_before(sentence: str, context: str) -> str | None:
    """The name that opens the sentence before ``sentence`` in ``context`` (sources
    one to a line), or None: "Titan" for "With a diameter of about 5,150 km, it is
    ..." after "Titan is by far the largest of Saturn's moons."."""
    at = context.find(sentence)
    before = context[:at].rsplit("\n", 1)[-1].strip() if at > 0 else ""
    previous = re.split(r"(?<=[.!?])\s+(?=[A-Z])", before)[-1] if before else ""
    names = _names(previous)
    if not names or not previous.startswith(names[0][0]):
        return None
    # a name is capitalised inside a sentence too; "No", "Much" only open one
    inside = rf"[\w,;:]\s+{re.escape(names[0][0])}\b"
    return names[0][0] if re.search(inside, context) else None


_LISTED = r"[A-Z][\w'’-]*[a-z](?:[ -]\d+)?"


def _listed_with(name: str, text: str) -> set[str]:
    """The names ``text`` joins to ``name`` by "and" or "or": "Opportunity" for
    "Spirit" in "Spirit and Opportunity"."""
    n = re.escape(name)
    pattern = rf"\b{n},? (?:and|or) ({_LISTED})\b|\b({_LISTED}),? (?:and|or) {n}\b"
    return {a or b for a, b in re.findall(pattern, text)}
