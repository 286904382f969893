"""Answer keys: is an answer in any words correct? (chapters 12 and 14).

A question's key lists its accepted answers in groups: an answer is correct when, after
:func:`normalize_answer`, it contains one form of every group as a contiguous run of
words. Most keys have one group ("88 days" or "87.969 days"); a question that needs two
facts has two. Normalisation extends SQuAD's (lower case, punctuation and the articles
"a", "an", "the" dropped) with what numbers and units need: thousands separators
removed, number words as digits, one spelling per unit.

Four measures of one answer against its key:

- :func:`exact_match` and :func:`token_f1`, as in SQuAD, against the best reference
  (a reference is one form from each group, joined);
- :func:`contains_answer`, the rule above;
- :func:`correct`: for an answerable question, contains an accepted answer and is not a
  refusal; for an unanswerable one, is a refusal;
- :func:`correct_and_grounded`: correct, and every claim passes the grounding checks of
  :mod:`ragbook.verification` (:func:`~ragbook.verification.check_answer`).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from . import validate
from .generators import is_refusal
from .verification import CITATION, SUPPORT_THRESHOLD, check_answer

__all__ = [
    "normalize_answer",
    "parse_key",
    "references",
    "exact_match",
    "token_f1",
    "chosen_option",
    "contains_answer",
    "correct",
    "correct_and_grounded",
    "AnswerScore",
    "score_answer",
]

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
    text = CITATION.sub(" ", text).lower().replace("\u2212", "-")
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


def _key(key) -> tuple[tuple[str, ...], ...]:
    key = getattr(key, "answers", key)
    if isinstance(key, tuple) and all(isinstance(g, tuple) for g in key):
        return key
    return parse_key(key)


def references(key) -> list[str]:
    """Every reference answer a key allows: one form from each group, joined."""
    return [" ".join(forms) for forms in itertools.product(*_key(key))]


def _contains(words: list[str], form: list[str]) -> bool:
    n = len(form)
    return any(words[i : i + n] == form for i in range(len(words) - n + 1))


def exact_match(answer: str, key) -> bool:
    """The normalised answer equals a normalised reference."""
    words = normalize_answer(answer)
    return any(words == normalize_answer(r) for r in references(key))


def token_f1(answer: str, key) -> float:
    """SQuAD's token F1 against the best reference: 2 p r / (p + r) over the bag of
    normalised words; 0 when the answer has no words."""
    words = normalize_answer(answer)
    best = 0.0
    for reference in references(key):
        gold = normalize_answer(reference)
        common = sum((Counter(words) & Counter(gold)).values())
        if common:
            precision, recall = common / len(words), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def _first_at(words: list[str], form: list[str]) -> int | None:
    n = len(form)
    return next(
        (i for i in range(len(words) - n + 1) if words[i : i + n] == form), None
    )


def chosen_option(answer: str, options: Sequence[str]) -> str | None:
    """Of the options a question names ("which is bigger, Mars or the Moon?"), the one
    the answer names first; None when it names none. "Mars is bigger than the Moon"
    chooses Mars, "the Moon is smaller than Mars" the Moon: a containment test alone
    would accept both, as both name Mars."""
    words = normalize_answer(answer)
    found = [
        (position, number)
        for number, option in enumerate(validate.texts(options, "options"))
        if (position := _first_at(words, normalize_answer(option))) is not None
    ]
    return options[min(found)[1]] if found else None


def contains_answer(answer: str, key, options: Sequence[str] = ()) -> bool:
    """For every group, the answer's words contain one of its forms' words in a row.

    For a question between ``options`` (its accepted answer first), the option the
    answer names first must be accepted (:func:`chosen_option`)."""
    key = _key(key)
    if not key:
        return False
    if options:
        choice = chosen_option(answer, options)
        return choice is not None and any(choice in group for group in key)
    words = normalize_answer(answer)
    return all(
        any(_contains(words, normalize_answer(form)) for form in group) for group in key
    )


def correct(answer: str, question) -> bool:
    """A refusal exactly for an unanswerable question; otherwise an answer that
    contains an accepted answer and is not a refusal."""
    validate.text(answer, "answer")
    if not question.answerable:
        return is_refusal(answer)
    return not is_refusal(answer) and contains_answer(
        answer, question.answers, question.options
    )


def correct_and_grounded(
    answer: str,
    question,
    sources: Sequence[str] | Mapping[int, str],
    support_threshold: float = SUPPORT_THRESHOLD,
) -> bool:
    """:func:`correct`, and (for an answer that is not a refusal) every claim passes
    :func:`~ragbook.verification.check_claim` against the prompt's sources."""
    if not correct(answer, question):
        return False
    return not question.answerable or _claims_pass(answer, sources, support_threshold)


def _claims_pass(answer: str, sources, support_threshold: float) -> bool:
    checks = check_answer(answer, sources, support_threshold)
    return bool(checks) and all(c.supported for c in checks)


@dataclass(frozen=True)
class AnswerScore:
    """Every measure of one answer."""

    question_id: str
    refused: bool
    exact_match: bool
    f1: float
    contains: bool
    correct: bool
    grounded: bool  # correct and every claim passes the checks


def score_answer(
    answer: str,
    question,
    sources: Sequence[str] | Mapping[int, str],
    support_threshold: float = SUPPORT_THRESHOLD,
) -> AnswerScore:
    """Score ``answer`` to ``question`` (a :class:`~ragbook.labels.Question` with its
    key) given the sources its prompt held. An unanswerable question has no key: its
    exact match, F1 and containment are those of a refusal, which is the right
    answer."""
    refused = is_refusal(validate.text(answer, "answer"))
    if question.answerable:
        em = exact_match(answer, question.answers)
        f1 = token_f1(answer, question.answers)
        contains = contains_answer(answer, question.answers, question.options)
    else:
        em = contains = refused
        f1 = float(refused)
    right = (contains and not refused) if question.answerable else refused  # correct()
    return AnswerScore(
        question.id,
        refused,
        em,
        f1,
        contains,
        right,
        right
        and (
            not question.answerable or _claims_pass(answer, sources, support_threshold)
        ),
    )
