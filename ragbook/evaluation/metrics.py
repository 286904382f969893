"""A retriever measured on labelled questions (chapter 9).

:func:`evaluate_retrieval` runs a search function over labelled questions, measures
each ranking with :mod:`ragbook.evaluation.measures`, and returns a
:class:`RetrievalReport`: the mean of each measure with its bootstrap interval
(:mod:`ragbook.evaluation.intervals`), and the rankings as a TREC run.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from .. import validate
from ..corpus.labels import Question, relevant_chunks
from ..corpus.trec import write_trec_run
from ..retrieval.contract import Hit
from .intervals import bootstrap_interval, check_bootstrap
from .measures import (
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)

__all__ = ["RetrievalReport", "evaluate_retrieval"]


# ---- evaluation loop -----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RetrievalReport:
    """Per-question retrieval metrics over the answerable questions (see
    :func:`evaluate_retrieval`).

    ``values`` maps each metric name (``recall@k`` for every k, ``rr``, ``ndcg@10``) to
    a read-only array with one value per question of ``question_ids``; ``rankings``
    holds what the search returned for each, as (chunk id, score) pairs; ``skipped``
    counts the unanswerable questions left out.
    """

    question_ids: tuple[str, ...]
    values: Mapping[str, np.ndarray]
    rankings: tuple[tuple[tuple[int, float], ...], ...]
    skipped: int
    ks: tuple[int, ...]
    depth: int

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metric names, in table order."""
        return tuple(self.values)

    def per_question(self, metric: str) -> np.ndarray:
        """The values of ``metric``, one per question of ``question_ids``."""
        validate.text(metric, "metric")
        if metric not in self.values:
            raise ValueError(
                f"unknown metric {metric!r}; this report has {', '.join(self.values)}"
            )
        return self.values[metric]

    def mean(self, metric: str) -> float:
        """The mean of ``metric`` over the evaluated questions."""
        return float(np.mean(self.per_question(metric)))

    def interval(
        self,
        metric: str,
        confidence: float = 0.95,
        resamples: int = 2000,
        seed: int = 0,
    ) -> tuple[float, float]:
        """The :func:`bootstrap_interval` of the mean of ``metric`` over the
        questions."""
        return bootstrap_interval(
            self.per_question(metric), np.mean, confidence, resamples, seed
        )

    def table(self, confidence: float = 0.95) -> str:
        """A text table: each metric with its mean and bootstrap interval, then the
        question counts."""
        check_bootstrap(confidence, 1)
        head = f"{confidence:.0%} interval"
        rows = [f"{'metric':<10} {'mean':>6}  {head}"]
        for metric in self.values:
            low, high = self.interval(metric, confidence)
            rows.append(
                f"{metric:<10} {self.mean(metric):>6.3f}  [{low:.3f}, {high:.3f}]"
            )
        rows.append(
            f"{len(self.question_ids)} answerable questions, {self.skipped} "
            f"unanswerable skipped, depth {self.depth}"
        )
        return "\n".join(rows)

    def write_run(self, path: str | os.PathLike[str], tag: str = "ragbook") -> None:
        """Write the rankings as a TREC run (``qid Q0 docid rank score tag``, docid =
        str(chunk id)).

        Uses :func:`ragbook.corpus.trec.write_trec_run`, which raises for a question
        whose search returned nothing (trec_eval would drop it rather than score it 0).
        Only evaluated (answerable) questions are written. trec_eval orders tied scores
        by docid descending, so with ties its ranking can differ from the one evaluated
        here.
        """
        run = {
            qid: [(str(chunk_id), score) for chunk_id, score in ranking]
            for qid, ranking in zip(self.question_ids, self.rankings)
        }
        write_trec_run(path, run, tag)


def _check_chunks(chunks: Sequence) -> None:
    chunks = validate.sequence(chunks, "chunks", "chunks")
    if not chunks:
        raise ValueError(
            "there are no chunks: evaluation needs the chunks the search ranks"
        )
    for position, chunk in enumerate(chunks):
        chunk_id = getattr(chunk, "id", position)
        if chunk_id != position:
            raise ValueError(
                f"chunks[{position}] has id {chunk_id!r}; chunk ids must be their "
                "positions in the list "
                "(as every ragbook chunker numbers them), since relevance is "
                "computed by position"
            )


def _check_results(
    results: object, question: Question, k: int, n_chunks: int
) -> tuple[tuple[int, float], ...]:
    where = f"search for question {question.id!r}"
    if isinstance(results, (str, bytes)) or not isinstance(results, Iterable):
        raise TypeError(
            f"{where} must return a list of hits (or (chunk id, score) pairs), "
            f"got {type(results).__name__}"
        )
    results = [
        (entry.chunk_id, entry.score) if isinstance(entry, Hit) else entry
        for entry in results
    ]
    if len(results) > k:
        raise ValueError(
            f"{where} returned {len(results)} results for k = {k}; it must return "
            "at most k"
        )
    checked, seen, previous = [], set(), math.inf
    for rank, entry in enumerate(results, start=1):
        if (
            isinstance(entry, (str, bytes))
            or not isinstance(entry, Sequence)
            or len(entry) != 2
        ):
            raise ValueError(
                f"{where}, rank {rank}: expected a hit or a (chunk id, score) "
                f"pair, got {entry!r}"
            )
        chunk_id, score = entry
        if (
            isinstance(chunk_id, bool)
            or not isinstance(chunk_id, numbers.Integral)
            or not 0 <= chunk_id < n_chunks
        ):
            raise ValueError(
                f"{where}, rank {rank}: chunk id {chunk_id!r} is not a position "
                f"in the {n_chunks} chunks"
            )
        if (
            isinstance(score, bool)
            or not isinstance(score, numbers.Real)
            or not math.isfinite(score)
        ):
            raise ValueError(
                f"{where}, rank {rank}: score must be a finite number, got {score!r}"
            )
        if chunk_id in seen:
            raise ValueError(
                f"{where}, rank {rank}: chunk {chunk_id} is repeated; a ranking "
                "lists each chunk once"
            )
        if score > previous:
            raise ValueError(
                f"{where}, rank {rank}: score {score!r} is above the score "
                f"{previous!r} before it; results are best first"
            )
        seen.add(chunk_id)
        previous = score
        checked.append((int(chunk_id), float(score)))
    return tuple(checked)


def evaluate_retrieval(
    questions: Sequence[Question],
    search: Callable[[str, int], Sequence[Hit]],
    chunks: Sequence,
    ks: Sequence[int] = (1, 3, 5, 10),
    depth: int | None = None,
) -> RetrievalReport:
    """Run ``search(question.text, depth)`` for every answerable question and score it
    (chapter 9).

    ``search`` returns at most ``depth`` hits (or (chunk id, score) pairs), best first;
    ``depth`` defaults to the largest k. Per question: :func:`recall_at_k` per evidence
    piece (via :func:`ragbook.corpus.labels.relevant_chunks`) for each k,
    :func:`reciprocal_rank` and :func:`ndcg_at_k` at 10 with gain 1 for every chunk
    relevant to some piece. nDCG@10 counts ranks beyond the depth as misses, so with a
    depth below 10 it is a lower bound. Unanswerable questions have no relevant chunks
    and are skipped and counted; evidence that the chunker cut counts as not found.
    """
    if isinstance(ks, numbers.Integral):
        raise TypeError(
            "ks must be a sequence of cutoffs such as (1, 3, 5, 10), got the "
            f"single number {ks!r}"
        )
    ks = tuple(
        sorted(
            validate.k(k)
            for k in validate.sequence(ks, "ks", "cutoffs such as (1, 3, 5, 10)")
        )
    )
    if not ks:
        raise ValueError("ks is empty; give at least one cutoff, such as (1, 3, 5, 10)")
    if len(set(ks)) != len(ks):
        raise ValueError(f"ks repeats a cutoff: {ks}")
    if depth is None:
        depth = ks[-1]
    depth = validate.k(depth)
    if depth < ks[-1]:
        raise ValueError(
            f"depth ({depth}) must be at least the largest k ({ks[-1]}), or "
            f"recall@{ks[-1]} is not measured"
        )
    _check_chunks(chunks)
    if not callable(search):
        raise TypeError(
            f"search must be a function of (question text, depth), got {search!r}"
        )
    questions = validate.sequence(questions, "questions", "Question objects")
    for position, question in enumerate(questions):
        if not isinstance(question, Question):
            raise TypeError(
                "questions must hold Question objects, got "
                f"{type(question).__name__} at position {position}"
            )
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        repeated = next(qid for qid in ids if ids.count(qid) > 1)
        raise ValueError(
            f"question id {repeated!r} is used twice; each question needs its own id"
        )

    names = [f"recall@{k}" for k in ks] + ["rr", "ndcg@10"]
    columns: dict[str, list[float]] = {name: [] for name in names}
    evaluated, rankings, skipped = [], [], 0
    for question in questions:
        if not question.answerable:
            skipped += 1
            continue
        results = _check_results(
            search(question.text, depth), question, depth, len(chunks)
        )
        ranking = [chunk_id for chunk_id, _ in results]
        pieces = relevant_chunks(question, chunks)
        relevant = frozenset().union(*pieces)
        for k in ks:
            columns[f"recall@{k}"].append(recall_at_k(ranking, pieces, k))
        columns["rr"].append(reciprocal_rank(ranking, relevant))
        columns["ndcg@10"].append(ndcg_at_k(ranking, {c: 1 for c in relevant}, 10))
        evaluated.append(question.id)
        rankings.append(results)
    if not evaluated:
        raise ValueError(
            f"no answerable questions to evaluate ({skipped} unanswerable skipped)"
        )
    values = {}
    for name, column in columns.items():
        array = np.array(column, dtype=float)
        array.setflags(write=False)
        values[name] = array
    return RetrievalReport(
        tuple(evaluated), values, tuple(rankings), skipped, ks, depth
    )
