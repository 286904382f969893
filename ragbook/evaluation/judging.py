"""A language model as judge of answers, and how far to trust it (chapter 15).

The judge is asked whether an answer says the same as the answer key; its verdicts are
compared with the deterministic key of :mod:`ragbook.evaluation.answers` on the same
answers: raw agreement, and Cohen's kappa,

    kappa = (p_o - p_e) / (1 - p_e),

where p_o is the share of answers on which the two agree and p_e the agreement two
independent raters with the same rates of "correct" would reach by chance,
p_e = p_1 q_1 + (1 - p_1)(1 - q_1). A judge is a measurement, so it is measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .. import validate

__all__ = ["JUDGE_INSTRUCTION", "judge_messages", "LLMJudge", "Agreement", "agreement"]

JUDGE_INSTRUCTION = (
    "You grade answers to questions. You are given a question, the reference answer "
    "and a candidate answer. Reply Yes if the candidate answer gives the same answer "
    "as the reference (other words, units or roundings are fine), and No if it gives "
    "a different answer, no answer, or says the answer is not known. Reply with one "
    "word: Yes or No."
)
_VERDICT = re.compile(r"^\W*(yes|no)\b", re.I)


def judge_messages(question: str, reference: str, answer: str) -> list[dict[str, str]]:
    """The chat messages that ask for one verdict."""
    question, reference, answer = (
        validate.text(question, "question"),
        validate.text(reference, "reference"),
        validate.text(answer, "answer"),
    )
    return [
        {"role": "system", "content": JUDGE_INSTRUCTION},
        {
            "role": "user",
            "content": (
                f"Question: {question}\nReference answer: {reference}\n"
                f"Candidate answer: {answer}\n\nDoes the candidate give the same "
                "answer as the reference? Yes or No."
            ),
        },
    ]


class LLMJudge:
    """``judge(question, answer)`` -> True (Yes), False (No), or None when the reply
    is neither; ``question`` is a :class:`~ragbook.corpus.labels.Question` whose short
    ``answer`` is the reference. Refusals and unanswerable questions are not the
    judge's business: the key decides those."""

    def __init__(self, model, max_tokens: int = 3):
        if not hasattr(model, "chat"):
            raise TypeError(
                f"model must be a LocalModel (with chat), got {type(model).__name__}"
            )
        self.model = model
        self.max_tokens = validate.k(max_tokens, "max_tokens")

    def __call__(self, question, answer: str) -> bool | None:
        if not question.answerable:
            raise ValueError(
                f"question {question.id!r} is unanswerable: a refusal is its answer, "
                "and needs no judge"
            )
        reply = self.model.chat(
            judge_messages(question.text, question.answer, answer), self.max_tokens
        ).text
        found = _VERDICT.match(reply)
        return None if found is None else found.group(1).lower() == "yes"


@dataclass(frozen=True)
class Agreement:
    """Two raters' verdicts on the same items."""

    items: int
    both_yes: int
    both_no: int
    only_first: int  # the first says yes, the second no
    only_second: int

    @property
    def observed(self) -> float:
        return (self.both_yes + self.both_no) / self.items

    @property
    def chance(self) -> float:
        first = (self.both_yes + self.only_first) / self.items
        second = (self.both_yes + self.only_second) / self.items
        return first * second + (1 - first) * (1 - second)

    @property
    def kappa(self) -> float:
        """Cohen's kappa; 1.0 when both raters give one and the same verdict
        throughout (chance agreement 1)."""
        if self.chance == 1:
            return 1.0
        return (self.observed - self.chance) / (1 - self.chance)


def agreement(first: Sequence[bool], second: Sequence[bool]) -> Agreement:
    """Cross-tabulate two raters' yes/no verdicts on the same items."""
    first, second = (
        validate.sequence(first, "first", "verdicts (bools)"),
        validate.sequence(second, "second", "verdicts (bools)"),
    )
    if len(first) != len(second):
        raise ValueError(
            f"first has {len(first)} verdicts but second {len(second)}; agreement "
            "needs the same items"
        )
    if not first:
        raise ValueError("no verdicts to compare")
    for name, verdicts in (("first", first), ("second", second)):
        for position, verdict in enumerate(verdicts):
            if not isinstance(verdict, bool):
                raise TypeError(
                    f"{name} must hold True or False, got {verdict!r} at position "
                    f"{position} (leave out the items a rater could not judge)"
                )
    pairs = list(zip(first, second))
    return Agreement(
        len(pairs),
        pairs.count((True, True)),
        pairs.count((False, False)),
        pairs.count((True, False)),
        pairs.count((False, True)),
    )
