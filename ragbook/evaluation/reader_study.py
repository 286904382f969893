"""Helpers for measuring readers against each other (chapter 15, "A language model as
the reader").

Each helper does one step of a measurement the chapter repeats: ask the model with no
sources (closed book) or for query rewrites; tell whether an answer states numbers or
names its sources lack; tell whether a retriever finds every evidence piece; count
refusals and valid citations; compare two readers question by question with a paired
bootstrap interval and name the verdict; sweep a refusal threshold; choose by the
chapter's fixed rule; and print a small table.

Vocabulary: an answer is *correct* when it contains an accepted answer, a refusal
exactly when the corpus cannot answer; *supported* when every claim passes the
grounding checks; *correct and supported* when both (the measure ``"grounded"`` of
:mod:`ragbook.evaluation.end_to_end`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..generation.generators import is_refusal
from ..generation.verification import CITATION, check_answer, numbers_in
from ..indexing.text import tokenize
from ..retrieval.fusion import reciprocal_rank_fusion
from .intervals import bootstrap_interval, paired_bootstrap

__all__ = [
    "CLOSED_BOOK",
    "REWRITE",
    "closed_book",
    "invented",
    "rewrites",
    "evidence_found",
    "fused_evidence_found",
    "refusals",
    "Effect",
    "effect",
    "choose",
    "SweepStep",
    "threshold_sweep",
    "markdown_table",
    "valid_citations",
    "with_interval",
]

CLOSED_BOOK = "Answer the question in one or two sentences."
REWRITE = (
    "Rewrite the user's question as three different search queries that an "
    "encyclopedia article answering it would match. Write one query per line, "
    "nothing else."
)
# a capitalised word or run of them, not at the start of the text or of a sentence
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_LIST_MARK = re.compile(r"^\s*(\d+[.)]|[-*])\s*")


def _ask(model, instruction: str, question: str, max_tokens: int) -> str:
    messages = [
        {"role": "system", "content": instruction},
        {"role": "user", "content": question},
    ]
    return model.chat(messages, max_tokens=max_tokens).text


def closed_book(model, question: str) -> str:
    """The model's answer with no sources: one or two sentences."""
    return _ask(model, CLOSED_BOOK, question, 200)


def rewrites(model, question: str) -> list[str]:
    """Up to three search queries the model writes for ``question``, list marks
    removed."""
    text = _ask(model, REWRITE, question, 80)
    lines = [_LIST_MARK.sub("", line).strip() for line in text.splitlines()]
    return [line for line in lines if line][:3]


def invented(answer: str, question: str, sources: Sequence[str]) -> list[str]:
    """The numbers and names of ``answer`` found in no source and not in the question.

    A number counts when it is no token of any source; a name (a capitalised word or
    run of them, not opening a sentence) when it is in neither the sources' text nor
    the question. Citation marks are ignored. A sign of a hallucination, not a proof: a
    true fact from elsewhere counts too."""
    plain = CITATION.sub(" ", answer)
    source_tokens = {t for s in sources for t in tokenize(s)}
    source_text = " ".join(sources)
    numbers = [n for n in numbers_in(plain) if n not in source_tokens]
    names = [
        n for n in _NAME.findall(plain) if n not in source_text and n not in question
    ]
    return numbers + names


def evidence_found(retriever, query: str, pieces: Sequence[set], k: int = 5) -> bool:
    """Whether every evidence piece (a set of chunk ids, any of which holds it) has a
    chunk among the top ``k`` that ``retriever`` returns for ``query``."""
    top = {hit.chunk_id for hit in retriever.search(query, k)}
    return all(set(piece) & top for piece in pieces)


def fused_evidence_found(
    retriever,
    queries: Sequence[str],
    pieces: Sequence[set],
    k: int = 5,
    depth: int = 20,
) -> bool:
    """:func:`evidence_found` for the reciprocal rank fusion of the top ``depth`` of
    every query."""
    rankings = [retriever.search(query, depth) for query in queries]
    top = {hit.chunk_id for hit in reciprocal_rank_fusion(rankings, k=k)}
    return all(set(piece) & top for piece in pieces)


def refusals(evaluation, answerable: Sequence[bool]) -> tuple[int, int]:
    """(answerable questions refused, unanswerable questions refused)."""
    refused = np.asarray(evaluation.values("refused"), dtype=bool)
    answerable = np.asarray(answerable, dtype=bool)
    if refused.shape != answerable.shape:
        raise ValueError("one answerable flag per question is needed")
    return int(refused[answerable].sum()), int(refused[~answerable].sum())


@dataclass(frozen=True)
class Effect:
    """mean(a) - mean(b) over the same questions, its 95 % paired bootstrap interval,
    and the verdict: "gain" or "loss" when the interval excludes zero, else "within the
    noise"."""

    difference: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        if self.low > 0:
            return "gain"
        if self.high < 0:
            return "loss"
        return "within the noise"

    def __str__(self) -> str:
        return f"{self.difference:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def effect(a: Sequence[float], b: Sequence[float]) -> Effect:
    """The paired effect of a against b, by the paired bootstrap of
    :func:`ragbook.evaluation.intervals.paired_bootstrap`."""
    pair = paired_bootstrap(np.asarray(a, float), np.asarray(b, float))
    return Effect(pair.mean_difference, *pair.interval)


def choose(
    evaluations: Mapping[str, object],
    answerable: Sequence[bool],
    allowed: Callable[[str], bool] = lambda name: True,
) -> str:
    """The rule fixed before any candidate is scored: the most correct and supported;
    among equals, the one that refuses more unanswerable questions; among those, the
    first listed."""
    names = [name for name in evaluations if allowed(name)]
    if not names:
        raise ValueError("no candidate to choose from")

    def key(name):
        e = evaluations[name]
        return (-round(e.mean("grounded"), 9), -refusals(e, answerable)[1])

    return min(names, key=key)


@dataclass(frozen=True)
class SweepStep:
    """One threshold of :func:`threshold_sweep`: the per-question outcome (1 correct
    and supported, else 0) and refusal, and the refusal counts."""

    threshold: float
    right: np.ndarray
    refused: np.ndarray
    refused_answerable: int
    refused_unanswerable: int

    @property
    def share(self) -> float:
        return float(self.right.mean())


def threshold_sweep(
    scores: Sequence[float],
    answered: Sequence[bool],
    right_if_answered: Sequence[bool],
    right_if_refused: Sequence[bool],
    answerable: Sequence[bool],
    thresholds: Sequence[float],
) -> list[SweepStep]:
    """Refuse, besides the refusals already made, every answer whose score is below the
    threshold, and score each question by whichever of its two outcomes applies."""
    scores = np.asarray(scores, float)
    answered = np.asarray(answered, bool)
    if_answered = np.asarray(right_if_answered, bool)
    if_refused = np.asarray(right_if_refused, bool)
    answerable = np.asarray(answerable, bool)
    shapes = {a.shape for a in (scores, answered, if_answered, if_refused, answerable)}
    if len(shapes) != 1:
        raise ValueError("one score, flag and outcome per question is needed")
    steps = []
    for t in thresholds:
        with np.errstate(invalid="ignore"):
            kept = answered & (scores >= t)
        right = np.where(kept, if_answered, if_refused).astype(float)
        refused = ~kept
        steps.append(
            SweepStep(
                float(t),
                right,
                refused,
                int(refused[answerable].sum()),
                int(refused[~answerable].sum()),
            )
        )
    return steps


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]):
    """A small table for a notebook: a Markdown pipe table, displayed as a table.
    Floats print with three decimals."""
    from IPython.display import Markdown

    def cell(value):
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|")

    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"a row has {len(row)} cells for {len(headers)} headers")
    lines = [
        "| " + " | ".join(map(cell, headers)) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(map(cell, row)) + " |" for row in rows),
    ]
    return Markdown("\n".join(lines))


def valid_citations(answers: Sequence[tuple[str, Sequence[str]]]) -> float:
    """The share of the claims of the answers given, each (answer, its prompt's
    sources), that cite at least one source and only sources of the prompt. Refusals
    have no claims."""
    claims = [
        claim
        for answer, sources in answers
        if not is_refusal(answer)
        for claim in check_answer(answer, sources)
    ]
    if not claims:
        raise ValueError("no claims to check: every answer is a refusal")
    return float(np.mean([bool(c.cited) and not c.missing_sources for c in claims]))


def with_interval(values: Sequence[float]) -> str:
    """The mean and its 95 % bootstrap interval, as "0.500 [0.250, 0.750]"."""
    values = np.asarray(values, float)
    low, high = bootstrap_interval(values)
    return f"{values.mean():.3f} [{low:.3f}, {high:.3f}]"
