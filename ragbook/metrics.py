"""Retrieval metrics, and the loop that measures them over labelled questions
(chapter 9).

A ranking is a sequence of chunk ids (ints), best first, without repeats. The metrics:

- :func:`recall_at_k`: the share of evidence pieces with at least one of their chunks in
  the top k;
- :func:`recall_of_documents_at_k`: the share of relevant chunks in the top k
  (trec_eval's R@k);
- :func:`precision_at_k`: relevant chunks in the top k, divided by k (trec_eval's P@k);
- :func:`reciprocal_rank` and :func:`mean_reciprocal_rank`: 1 / rank of the first
  relevant chunk;
- :func:`dcg_at_k` and :func:`ndcg_at_k`: graded gains discounted by log2(rank + 1), and
  divided by the best DCG the judged collection allows.

:func:`evaluate_retrieval` runs a search function over labelled questions and returns a
:class:`RetrievalReport`, with intervals from :mod:`ragbook.intervals`
(:func:`bootstrap_interval`, :func:`paired_bootstrap`, importable from here as well).
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from . import validate
from .formats import write_trec_run
from .intervals import (  # importable from here too, where chapter 9 meets them
    PairedComparison,
    _check_bootstrap,
    bootstrap_interval,
    paired_bootstrap,
)
from .labels import Question, relevant_chunks
from .retrieval import Hit

__all__ = [
    "recall_at_k",
    "recall_of_documents_at_k",
    "precision_at_k",
    "reciprocal_rank",
    "mean_reciprocal_rank",
    "dcg_at_k",
    "ndcg_at_k",
    "bootstrap_interval",
    "PairedComparison",
    "paired_bootstrap",
    "RetrievalReport",
    "evaluate_retrieval",
]


# ---- checks --------------------------------------------------------------------------
def _check_ranking(ranking: Sequence[int]) -> list[int]:
    """The ranking as a list of ints; raises for anything but ints, and for repeats."""
    if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Iterable):
        raise TypeError(
            "a ranking must be a sequence of chunk ids (ints), got "
            f"{type(ranking).__name__}"
        )
    ids = list(ranking)
    seen: set[int] = set()
    for rank, chunk_id in enumerate(ids, start=1):
        if isinstance(chunk_id, (bool, np.bool_)) or not isinstance(
            chunk_id, numbers.Integral
        ):
            raise TypeError(
                f"rank {rank} of the ranking is {chunk_id!r}; chunk ids must be ints"
            )
        if chunk_id in seen:
            raise ValueError(
                f"chunk {chunk_id} is repeated in the ranking (rank {rank}); a "
                "ranking lists each chunk once"
            )
        seen.add(chunk_id)
    return [int(c) for c in ids]


def _check_relevant(
    relevant: Collection[int], what: str = "relevant"
) -> frozenset[int]:
    if isinstance(relevant, (str, bytes, numbers.Number)) or not isinstance(
        relevant, Iterable
    ):
        raise TypeError(
            f"{what} must be a set of chunk ids, got {type(relevant).__name__} "
            f"{relevant!r}"
        )
    return frozenset(validate.ids(relevant, what, "chunk ids (ints)"))


def _check_gains(gains: Mapping[int, float]) -> dict[int, float]:
    if not isinstance(gains, Mapping):
        raise TypeError(
            f"gains must be a mapping from chunk id to gain, got {type(gains).__name__}"
        )
    checked = {}
    for chunk_id, gain in gains.items():
        if isinstance(gain, (bool, np.bool_)) or not isinstance(gain, numbers.Real):
            raise TypeError(
                f"the gain of chunk {chunk_id!r} is {gain!r}; gains must be "
                "finite numbers >= 0"
            )
        if not math.isfinite(gain):
            raise ValueError(
                f"the gain of chunk {chunk_id!r} is {gain!r}; gains must be "
                "finite numbers >= 0"
            )
        if gain < 0:
            raise ValueError(
                f"the gain of chunk {chunk_id!r} is {gain!r}; gains must be >= 0 "
                "(0 means not relevant)"
            )
        checked[chunk_id] = float(gain)
    return checked


# ---- metrics -------------------------------------------------------------------------
def recall_at_k(
    ranking: Sequence[int], pieces: Sequence[Collection[int]], k: int
) -> float:
    """Evidence recall: (1/m) * sum over the m pieces of [top k holds one of the piece's
    chunks] (chapter 9).

    ``pieces`` holds one set of relevant chunk ids per piece of evidence
    (:func:`ragbook.labels.relevant_chunks`): a question that needs two facts and finds
    one has recall 0.5. A piece with no chunk at all (the chunker cut its every span)
    counts as not found. Raises for no pieces: an unanswerable question has no recall,
    and the caller must skip it.
    """
    k = validate.k(k)
    top = set(_check_ranking(ranking)[:k])
    if isinstance(pieces, (str, bytes)) or not isinstance(pieces, Iterable):
        raise TypeError(
            "pieces must be a sequence of sets of chunk ids, got "
            f"{type(pieces).__name__}"
        )
    sets = []
    for number, piece in enumerate(pieces, start=1):
        if isinstance(piece, numbers.Number):
            raise TypeError(
                f"piece {number} is {piece!r}, not a set of chunk ids; pieces "
                "holds one set per piece of evidence "
                "(for a single set of relevant chunks use recall_of_documents_at_k)"
            )
        sets.append(_check_relevant(piece, f"piece {number}"))
    if not sets:
        raise ValueError(
            "no evidence pieces: an unanswerable question has no recall; skip it"
        )
    return sum(1 for piece in sets if top & piece) / len(sets)


def recall_of_documents_at_k(
    ranking: Sequence[int], relevant: Collection[int], k: int
) -> float:
    """Document recall, trec_eval's R@k: |top k ∩ relevant| / |relevant| (chapter 9).

    Every relevant chunk counts, so two chunks stating the same fact count twice;
    :func:`recall_at_k` counts facts instead. Raises when ``relevant`` is empty (the
    ratio is undefined).
    """
    k = validate.k(k)
    top = _check_ranking(ranking)[:k]
    relevant = _check_relevant(relevant)
    if not relevant:
        raise ValueError(
            "relevant is empty: recall needs at least one relevant chunk; skip "
            "the question"
        )
    return len(relevant.intersection(top)) / len(relevant)


def precision_at_k(ranking: Sequence[int], relevant: Collection[int], k: int) -> float:
    """Precision: |top k ∩ relevant| / k (chapter 9).

    The denominator is k even when the ranking is shorter than k, which is trec_eval's
    P@k convention: a system that returns fewer results is not rewarded for it. An empty
    ``relevant`` gives 0.
    """
    k = validate.k(k)
    top = _check_ranking(ranking)[:k]
    return len(_check_relevant(relevant).intersection(top)) / k


def reciprocal_rank(ranking: Sequence[int], relevant: Collection[int]) -> float:
    """Reciprocal rank: 1 / rank of the first relevant chunk, 0 when none is retrieved
    (chapter 9)."""
    relevant = _check_relevant(relevant)
    for rank, chunk_id in enumerate(_check_ranking(ranking), start=1):
        if chunk_id in relevant:
            return 1.0 / rank
    return 0.0


def mean_reciprocal_rank(
    rankings: Sequence[Sequence[int]], relevants: Sequence[Collection[int]]
) -> float:
    """MRR: (1/n) * sum over n questions of :func:`reciprocal_rank` (chapter 9).

    ``rankings`` and ``relevants`` are paired by position and must have the same,
    non-zero, length.
    """
    rankings = validate.sequence(
        rankings, "rankings", "rankings (sequences of chunk ids)"
    )
    relevants = validate.sequence(relevants, "relevants", "sets of chunk ids")
    if len(rankings) != len(relevants):
        raise ValueError(
            f"got {len(rankings)} rankings but {len(relevants)} relevant sets; "
            "they pair by position"
        )
    if not rankings:
        raise ValueError(
            "no rankings: the mean reciprocal rank needs at least one question"
        )
    return sum(reciprocal_rank(r, rel) for r, rel in zip(rankings, relevants)) / len(
        rankings
    )


def _discounted(gains: Iterable[float]) -> float:
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def dcg_at_k(ranking: Sequence[int], gains: Mapping[int, float], k: int) -> float:
    """DCG@k = sum over ranks r = 1..k of gain(d_r) / log2(r + 1), linear gain (chapter
    9).

    ``gains`` maps chunk ids to gains >= 0; a chunk it does not name has gain 0.
    """
    k = validate.k(k)
    top = _check_ranking(ranking)[:k]
    gains = _check_gains(gains)
    return _discounted(gains.get(chunk_id, 0.0) for chunk_id in top)


def ndcg_at_k(ranking: Sequence[int], gains: Mapping[int, float], k: int) -> float:
    """nDCG@k = DCG@k / IDCG@k, where IDCG@k is the DCG of the k largest gains of
    ``gains`` (chapter 9).

    The ideal comes from every judged chunk of the collection, sorted by gain
    descending, not from the retrieved ones only: dividing by the ideal of the retrieved
    list would give a system that finds one of two relevant chunks, at rank 3, the score
    0.5 instead of 0.5 / 1.6309 = 0.3066. This is trec_eval's ndcg_cut. When no gain is
    positive there is nothing to find, and nDCG is 0 (not undefined).
    """
    k = validate.k(k)
    gains = _check_gains(gains)
    ideal = _discounted(sorted(gains.values(), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg_at_k(ranking, gains, k) / ideal


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
        _check_bootstrap(confidence, 1)
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

        Uses :func:`ragbook.formats.write_trec_run`, which raises for a question whose
        search returned nothing (trec_eval would drop it rather than score it 0). Only
        evaluated (answerable) questions are written. trec_eval orders tied scores by
        docid descending, so with ties its ranking can differ from the one evaluated
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
    piece (via :func:`ragbook.labels.relevant_chunks`) for each k,
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
