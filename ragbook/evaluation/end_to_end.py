"""Whole answers measured (chapters 14 and 15): every answer scored by its key, and
end-to-end accuracy split into the retriever's recall r and the reader's accuracy with
(a) and without (b) the evidence in the prompt, the decomposition of
:mod:`ragbook.evaluation.composition`: accuracy = r a + (1 - r) b.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .. import validate
from ..generation.answer import Answer
from .answers import AnswerScore, score_answer
from ..corpus.labels import Question, contains_span
from ..generation.verification import CITATION


__all__ = [
    "AnswerEvaluation",
    "CRITERIA",
    "MEASURES",
    "evaluate_answers",
    "quotes_evidence",
]


def _plain(text: str) -> str:
    return " ".join(CITATION.sub(" ", text).split()).rstrip(" .!?")


def quotes_evidence(answer: str, question: Question) -> bool:
    """Whether the answer quotes labelled evidence: its text (citations removed)
    contains a span of every piece, or is contained in one (an extractive answer quotes
    a sentence that holds or lies in a span)."""
    plain = _plain(validate.text(answer, "answer"))
    if not plain or not question.answerable:
        return False
    for piece in question.evidence:
        if not any(
            _plain(span.text) in plain or plain in _plain(span.text)
            for span in piece.spans
        ):
            return False
    return True


CRITERIA = ("grounded", "correct", "quotes")
MEASURES = ("exact_match", "f1", "contains", "correct", "grounded", "refused")


@dataclass(frozen=True)
class AnswerEvaluation:
    """End-to-end accuracy and its parts: r (evidence in the prompt), a (accuracy given
    it), b (without); and every measure of :mod:`ragbook.evaluation.answers` per
    question.

    ``criterion`` is what "correct" means in the decomposition: ``"grounded"`` (the
    answer contains an accepted answer and every claim passes the checks),
    ``"correct"`` (contains an accepted answer), or ``"quotes"`` (the rule of the first
    edition: quotes the labelled evidence and passes the checks). A refusal is correct
    exactly for an unanswerable question under every criterion."""

    questions: int
    r: float
    a: float
    b: float
    accuracy: float
    answered: int
    refused_unanswerable: int
    unanswerable: int
    outcomes: tuple[
        tuple[str, bool, bool], ...
    ]  # (question id, evidence in prompt, correct)
    criterion: str = "grounded"
    scores: tuple[AnswerScore, ...] = ()
    results: tuple[Answer, ...] = ()

    @property
    def composed(self) -> float:
        """r a + (1 - r) b, which equals the measured accuracy by the law of total
        probability."""
        return self.r * self.a + (1 - self.r) * self.b

    def values(self, measure: str) -> np.ndarray:
        """One value per question of a measure of :data:`MEASURES` (1.0 or 0.0, or
        the F1), in question order: what a bootstrap resamples."""
        if measure not in MEASURES:
            raise ValueError(
                f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}"
            )
        if not self.scores:
            raise ValueError("this evaluation holds no per-question scores")
        field = "f1" if measure == "f1" else measure
        return np.array([float(getattr(s, field)) for s in self.scores])

    def mean(self, measure: str) -> float:
        return float(self.values(measure).mean())


def evaluate_answers(
    questions: Sequence[Question],
    answer: Callable[[str], Answer],
    criterion: str = "grounded",
) -> AnswerEvaluation:
    """Answer every question, score each answer
    (:func:`ragbook.evaluation.answers.score_answer`) and decompose the accuracy under
    ``criterion`` (see :class:`AnswerEvaluation`).

    The evidence is *in the prompt* when every piece has a span inside some chunk of the
    prompt. The keyed criteria need every answerable question to have a key.
    """
    questions = validate.sequence(questions, "questions", "Question objects")
    if criterion not in CRITERIA:
        raise ValueError(
            f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}"
        )
    if not questions:
        raise ValueError("no questions to evaluate")
    keyless = [q.id for q in questions if q.answerable and not q.answers]
    if keyless and criterion != "quotes":
        raise ValueError(
            f"{len(keyless)} answerable questions have no answer key (first: "
            f"{keyless[0]}); use criterion='quotes' or add their accepted answers"
        )
    outcomes, scores, results = [], [], []
    answered = refused = unanswerable = 0
    for question in questions:
        result = answer(question.text)
        results.append(result)
        answered += not result.abstained
        sources = [s.text for s in result.prompt.sources]
        score = (
            score_answer(result.answer, question, sources)
            if question.answers or not question.answerable
            else None
        )
        if question.answerable:
            prompt_chunks = [r.chunk for r in result.retrieved]
            in_prompt = all(
                any(contains_span(c, s) for c in prompt_chunks for s in piece.spans)
                for piece in question.evidence
            )
            if criterion == "quotes":
                correct = result.supported and quotes_evidence(result.answer, question)
            else:
                correct = getattr(score, criterion)
        else:
            unanswerable += 1
            in_prompt = False
            correct = result.abstained
            refused += correct
        outcomes.append((question.id, in_prompt, bool(correct)))
        if score is not None:
            scores.append(score)
    hit = [c for _, r, c in outcomes if r]
    miss = [c for _, r, c in outcomes if not r]
    r = len(hit) / len(outcomes)
    a = float(np.mean(hit)) if hit else 0.0
    b = float(np.mean(miss)) if miss else 0.0
    accuracy = float(np.mean([c for _, _, c in outcomes]))
    return AnswerEvaluation(
        len(outcomes),
        r,
        a,
        b,
        accuracy,
        answered,
        refused,
        unanswerable,
        tuple(outcomes),
        criterion,
        tuple(scores) if len(scores) == len(outcomes) else (),
        tuple(results),
    )
