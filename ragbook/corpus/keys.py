"""Answer keys: the accepted answers of a labelled question, and the normal form in
which answers are compared (chapter 12).

A question's key lists its accepted answers in groups: an answer is correct when, after
:func:`normalize_answer`, it contains one form of every group as a contiguous run of
words (:mod:`ragbook.evaluation.answers`). Most keys have one group ("88 days" or
"87.969 days"); a question that needs two facts has two. Normalisation extends SQuAD's
(lower case, punctuation and the articles "a", "an", "the" dropped) with what numbers
and units need: thousands separators removed, number words as digits, one spelling per
unit.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Sequence

from .. import validate

__all__ = ["normalize_answer", "parse_key", "as_key", "references"]

# One spelling per unit, applied to lower-cased text in this order (per second before
# kilometres; "Earth days" are days).
_UNITS = [
    (
        r"\bkilomet(?:er|re)s?\s+(?:per|an|a)\s+second\b|\bkm\s*/\s*s\b|\bkm\s+per\s+second\b",
        " km/s ",
    ),
    (r"\bkilomet(?:er|re)s?\b", " km "),
    (r"°\s*c\b|\bdegrees?\s+celsius\b|\bdegrees?\s+c\b|\bcelsius\b", " degc "),
    (r"°\s*f\b|\bdegrees?\s+fahrenheit\b|\bfahrenheit\b", " degf "),
    (r"°", " degrees "),  # an angle
    (r"\bminus\s+(?=\d)", " -"),
    (r"\bkelvins?\b", " k "),
    (r"%|\bper\s*cent\b", " percent "),
    (r"\bastronomical\s+units?\b", " au "),
    (r"\bearth\s+(days?|years?|hours?)\b", r" \1 "),
]
_UNITS = [(re.compile(pattern), repl) for pattern, repl in _UNITS]
_SINGULAR = {
    "days": "day",
    "hours": "hour",
    "years": "year",
    "minutes": "minute",
    "seconds": "second",
    "moons": "moon",
    "rings": "ring",
    "degrees": "degree",
}
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_TENS = {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_NUMBER_WORDS = {word: value for value, word in enumerate(_ONES)} | _TENS
_ARTICLES = {"a", "an", "the"}
_CITATION = re.compile(r"\[\d+\]")  # a citation marker [n]: not part of the answer
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# a number (a minus only where no word or number precedes it: "5-10" is two numbers),
# or a word; everything else is punctuation
_TOKEN = re.compile(r"(?:(?<![\w.])-)?\d+(?:[.:]\d+)*|[^\W_]+")


def normalize_answer(text: str) -> list[str]:
    """The words an answer is compared by.

    >>> normalize_answer("About 4,879 kilometres [1].")
    ['about', '4879', 'km']
    >>> normalize_answer("Eighty-eight Earth days")
    ['88', 'day']
    """
    text = unicodedata.normalize("NFKC", validate.text(text, "text"))
    text = _CITATION.sub(" ", text).lower().replace("\u2212", "-")
    while _THOUSANDS.search(text):
        text = _THOUSANDS.sub("", text)
    for pattern, repl in _UNITS:
        text = pattern.sub(repl, text)
    words: list[str] = []
    tens = False  # the last word was a tens word: "forty two" is 42
    for token in _TOKEN.findall(text):
        if token in _ARTICLES:
            continue
        token = _SINGULAR.get(token, token)
        value = _NUMBER_WORDS.get(token)
        if value is None:
            words.append(token)
        elif tens and 0 < value < 10:
            words[-1] = str(int(words[-1]) + value)
        else:
            words.append(str(value))
        tens = value is not None and value >= 20 and value % 10 == 0
    return words


def parse_key(answers) -> tuple[tuple[str, ...], ...]:
    """A key from its JSON form: a list of accepted forms (one group), or a list of
    lists (every group needed, any form of each)."""
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise TypeError(
            "answers must be a list of accepted forms or a list of lists of them, got "
            f"{type(answers).__name__}"
        )
    if not answers:
        return ()
    grouped = all(not isinstance(a, str) for a in answers)
    if not grouped and not all(isinstance(a, str) for a in answers):
        raise ValueError(
            "answers mixes forms and lists of forms; use a flat list of strings or a "
            "list of lists"
        )
    groups = answers if grouped else [answers]
    key = []
    for number, group in enumerate(groups, start=1):
        forms = tuple(validate.texts(group, f"answer group {number}"))
        if not forms:
            raise ValueError(f"answer group {number} is empty")
        for form in forms:
            if not normalize_answer(form):
                raise ValueError(f"accepted answer {form!r} has no words")
        key.append(forms)
    return tuple(key)


def as_key(key) -> tuple[tuple[str, ...], ...]:
    """A parsed key: a question's ``answers``, a parsed key as it is, or a key's JSON
    form (see :func:`parse_key`)."""
    key = getattr(key, "answers", key)
    if isinstance(key, tuple) and all(isinstance(g, tuple) for g in key):
        return key
    return parse_key(key)


def references(key) -> list[str]:
    """Every reference answer a key allows: one form from each group, joined."""
    return [" ".join(forms) for forms in itertools.product(*as_key(key))]
