"""Questions in two parts, and comparisons (chapter 15).

"Which takes longer to go around the Sun, Jupiter or Saturn?" needs two facts, one
about each planet, and "How hot and how cold does Mercury get?" two figures. A reader
that may write one short claim names one of them, or neither. :func:`two_parts`
recognises such questions by their form: two options after a comma ("..., A or B?"),
two questions joined by "and" ("how hot and how cold", "..., and when?"), or one
relation asked of two subjects ("on the Moon and on Mars"). :func:`options` reads the
two options of a comparison, :func:`comparison` whether it asks for the larger or the
smaller, and :func:`order_claims` puts first the claim whose figure wins, so that the
answer names the chosen option first; the comparison is made on the cited figures,
not left to the model.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import NUMBER_WORDS
from .cited_checks import unsupported_numbers

__all__ = [
    "two_parts",
    "options",
    "comparison",
    "quantity",
    "order_claims",
    "lead_with_option",
    "first_option",
    "split_claims",
]

_NAME = r"(?:the )?[A-Z][\w'’-]*(?: [A-Z0-9][\w'’-]*)*"
_BEFORE = r"(?:on |in |at |of |for |that of |those of )?"  # "..., that of Venus or ..."
_OPTIONS = re.compile(
    rf",\s*(?:[a-z]+ )*?{_BEFORE}({_NAME})\s+or\s+{_BEFORE}({_NAME})"
    r"\s*\?\s*$"
)
_TWO = [
    re.compile(p, re.I)
    for p in (
        r"\bhow \w+ and how \w+\b",
        r",? and (?:when|where|who|how \w+|what|which|(?:in|on|at|by) (?:what|which))\b"
        r"[^,]*\?\s*$",
        r"\bwhen and (?:where|how|why|by whom)\b|\bwho and when\b",
    )
] + [
    re.compile(
        r"(?<!between )\b(?:on|of|for|in|at|to|around|by) (?:the )?[A-Z][\w'’-]+"
        r" and (?:on|of|for|in"
        r"|at|to|around|by) (?:the )?[A-Z][\w'’-]+"
    ),
    re.compile(  # not a way ("towards Venus and Mercury") or a span between two
        r"(?<!between )(?<!between the )(?<!towards )(?<!toward )(?<!past )"
        r"\b[A-Z][\w'’-]+ and (?:the )?[A-Z][\w'’-]+\b(?! [A-Z])"
    ),
]

_MORE = (
    "longer larger bigger more faster hotter warmer higher farther further heavier "
    "greater deeper taller wider thicker later older stronger brighter"
).split()
_LESS = (
    "shorter smaller fewer less slower colder cooler lower closer nearer lighter "
    "earlier first sooner younger thinner narrower weaker"
).split()


def two_parts(question: str) -> bool:
    """Whether the question asks for two things: a choice between two named options
    (``"..., Jupiter or Saturn?"``), two questions joined by "and", or one question
    about two named subjects joined by "and"."""
    question = validate.text(question, "question").strip()
    if options(question):
        return True
    return any(p.search(question) for p in _TWO[:3]) or any(
        p.search(_after_first_word(question)) for p in _TWO[3:]
    )


def _after_first_word(question: str) -> str:
    # the first word of a question is capitalised whatever it is
    return question.split(" ", 1)[1] if " " in question else ""


def options(question: str) -> tuple[str, str] | tuple[()]:
    """The two options of a question that ends ``"..., A or B?"``, without a leading
    "the" (``("Jupiter", "Saturn")``), or ``()``."""
    match = _OPTIONS.search(validate.text(question, "question").strip())
    if match is None:
        return ()
    return tuple(m.removeprefix("the ") for m in match.groups())


def comparison(question: str) -> str | None:
    """``"max"`` when the question asks which has more of something (longer, larger,
    later ...), ``"min"`` when it asks which has less (shorter, smaller, first ...),
    None when it names neither, or names no two options."""
    question = validate.text(question, "question")
    if not options(question):
        return None
    words = re.findall(r"[a-z]+", question.lower())
    if {"bright", "brighter", "brightly", "shine", "magnitude"} & set(words):
        return None  # brighter is a smaller magnitude: the figures do not say which
    for word in words:
        if word in _MORE:
            return "max"
        if word in _LESS:
            return "min"
    return None


# a figure and the unit that follows it; durations and lengths in one unit each
_FIGURE = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?|" + "|".join(NUMBER_WORDS) + r")"
    r"(?:\s+(thousand|million|billion))?\s*([a-z°/]+(?:/[a-z]+)?)?",
    re.I,
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_TO = {  # a unit word: (the dimension, the factor to its base unit)
    "km": ("length", 1.0),
    "kilometres": ("length", 1.0),
    "kilometers": ("length", 1.0),
    "m": ("length", 1e-3),
    "metres": ("length", 1e-3),
    "meters": ("length", 1e-3),
    "au": ("length", 1.496e8),
    "seconds": ("time", 1 / 86400),
    "minutes": ("time", 1 / 1440),
    "hours": ("time", 1 / 24),
    "h": ("time", 1 / 24),
    "days": ("time", 1.0),
    "day": ("time", 1.0),
    "earth": ("time", None),
    "years": ("time", 365.25),
    "year": ("time", 365.25),
    "kg": ("mass", 1.0),
    "tonnes": ("mass", 1e3),
    "km/s": ("speed", 1.0),
    "m/s": ("speed", 1e-3),
}


def quantity(words: str) -> tuple[str, float] | None:
    """The first figure of an answer's words as (dimension, value in the dimension's
    base unit): ``"29.45 Earth years"`` is ``("time", 10756.6)`` (days), ``"4,000 km"``
    ``("length", 4000.0)``; a year (``1781``) is ``("year", 1781.0)``; a figure with
    another unit has that word as its dimension (``("percent", 38.0)``), one without a
    unit ``("", value)``. None when the words hold no figure."""
    match = _FIGURE.search(validate.text(words, "words"))
    if match is None:
        return None
    number, scale, unit = match.groups()
    value = (
        float(NUMBER_WORDS[number.lower()])
        if number.lower() in NUMBER_WORDS
        else float(number.replace(",", ""))
    )
    value *= _SCALE.get((scale or "").lower(), 1.0)
    unit = (unit or "").lower()
    if unit == "earth":  # "Earth days", "Earth years": the unit is the next word
        rest = words[match.end() :].split()
        unit = re.sub(r"[^a-z/°]", "", rest[0].lower()) if rest else ""
    if unit in _TO and _TO[unit][1] is not None:
        dimension, factor = _TO[unit]
        return dimension, value * factor
    if re.fullmatch(r"1[0-9]{3}|2[0-9]{3}", number) and not scale:
        return "year", value
    return unit, value  # a unit of its own ("percent"), or none


def order_claims(question: str, claims: list):
    """The claims of a two-part answer (each a sequence whose first item is the claim's
    words), the one whose figure wins the question's comparison first: for
    ``"Which takes longer ..., Jupiter or Saturn?"`` the claim with the longer time.
    Unchanged when the question compares nothing, or the two figures are not of one
    dimension (an orbit in years against one in days is compared in days)."""
    direction = comparison(question)
    if direction is None or len(claims) != 2:
        return list(claims)
    figures = [quantity(claim[0]) for claim in claims]
    if None in figures or figures[0][0] != figures[1][0]:
        return list(claims)
    first, second = figures[0][1], figures[1][1]
    swap = second > first if direction == "max" else second < first
    return [claims[1], claims[0]] if swap else list(claims)


def lead_with_option(question: str, words: str, label: str) -> str:
    """A claim's words, led by the option of the question (``"..., Jupiter or
    Saturn?"``) that the ``label`` of its evidence's source names, when the words name
    neither option: ``"Saturn: 29.45 Earth years"``. Unchanged otherwise."""
    choices = options(question)

    def names(text: str) -> list[str]:
        return [c for c in choices if re.search(rf"\b{re.escape(c)}\b", text, re.I)]

    if not choices or names(words):
        return words
    about = names(label)
    return f"{about[0]}: {words}" if len(about) == 1 else words


def first_option(question: str, text: str) -> str | None:
    """The option of the question (``"..., Jupiter or Saturn?"``) that ``text`` names
    first, or None when it names neither, or the question has no options."""
    found = [
        (match.start(), choice)
        for choice in options(question)
        for match in [re.search(rf"\b{re.escape(choice)}\b", text, re.I)]
        if match
    ]
    return min(found)[1] if found else None


# where a claim that states two facts in one line divides: "Mariner 2 flew past Venus
# in 1962, and Mariner 4 flew past Mars in 1965"; "Proteus is 420 km across, while
# Nereid is 35 km across"
_JOINT = re.compile(r";\s+|,\s+(?:and|while|whereas|but)\s+")
_FIGURED = re.compile(r"\d")


def split_claims(claims: list) -> list:
    """The claims of a two-part reply (each a sequence whose first item is the claim's
    words, the second its evidence sentences), with a claim that states both parts
    divided in two: when the reply holds one claim, or repeats it, and its words are
    two clauses that each hold a figure, each clause is a claim of its own, to be
    checked on its own, with the evidence sentences that hold its numbers (all of them
    when none does). Unchanged otherwise."""
    distinct = {claim[0].strip(" .") for claim in claims}
    if len(distinct) != 1 or len(claims) not in (1, 2):
        return list(claims)
    words, evidence = claims[0][0], claims[0][1]
    pieces = _JOINT.split(words.strip().rstrip("."))
    if len(pieces) != 2 or not all(_FIGURED.search(p) for p in pieces):
        return list(claims)
    split = []
    for piece in pieces:
        piece = piece.strip()
        piece = piece[0].upper() + piece[1:]  # "it went into orbit": a claim opens
        held = [s for s in evidence if not unsupported_numbers(piece, [s])]
        split.append((piece, held or list(evidence)))
    return split
