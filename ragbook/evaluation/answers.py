"""Is an answer in any words correct? An answer scored against its key (chapters 12 and
14).

A question's key (:mod:`ragbook.corpus.keys`) lists its accepted answers in groups: an
answer is correct when, after :func:`~ragbook.corpus.keys.normalize_answer`, it
contains one form of every group as a contiguous run of words.

Four measures of one answer against its key:

- :func:`exact_match` and :func:`token_f1`, as in SQuAD, against the best reference
  (a reference is one form from each group, joined);
- :func:`contains_answer`, the rule above;
- :func:`correct`: for an answerable question, contains an accepted answer and is not a
  refusal; for an unanswerable one, is a refusal;
- :func:`correct_and_grounded`: correct, and every claim passes the grounding checks of
  :mod:`ragbook.generation.verification`
  (:func:`~ragbook.generation.verification.check_answer`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from .. import validate
from ..corpus.keys import as_key, normalize_answer, references
from ..generation.generators import is_refusal
from ..generation.verification import SUPPORT_THRESHOLD, check_answer

__all__ = [
    "exact_match",
    "token_f1",
    "chosen_option",
    "contains_answer",
    "correct",
    "correct_and_grounded",
    "AnswerScore",
    "score_answer",
]


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
    key = as_key(key)
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
    :func:`~ragbook.generation.verification.check_claim` against the prompt's
    sources."""
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
    """Score ``answer`` to ``question`` (a :class:`~ragbook.corpus.labels.Question` with
    its key) given the sources its prompt held. An unanswerable question has no key: its
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
