"""The measures of one ranking (chapter 9).

A ranking is a sequence of chunk ids (ints), best first, without repeats. The measures:

- :func:`recall_at_k`: the share of evidence pieces with at least one of their chunks in
  the top k;
- :func:`recall_of_documents_at_k`: the share of relevant chunks in the top k
  (trec_eval's R@k);
- :func:`precision_at_k`: relevant chunks in the top k, divided by k (trec_eval's P@k);
- :func:`reciprocal_rank` and :func:`mean_reciprocal_rank`: 1 / rank of the first
  relevant chunk;
- :func:`dcg_at_k` and :func:`ndcg_at_k`: graded gains discounted by log2(rank + 1), and
  divided by the best DCG the judged collection allows.

:mod:`ragbook.evaluation.metrics` measures a retriever with them over labelled
questions.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from typing import Collection, Iterable, Mapping, Sequence

from .. import validate

__all__ = [
    "recall_at_k",
    "recall_of_documents_at_k",
    "precision_at_k",
    "reciprocal_rank",
    "mean_reciprocal_rank",
    "dcg_at_k",
    "ndcg_at_k",
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
    (:func:`ragbook.corpus.labels.relevant_chunks`): a question that needs two facts and
    finds one has recall 0.5. A piece with no chunk at all (the chunker cut its every
    span) counts as not found. Raises for no pieces: an unanswerable question has no
    recall, and the caller must skip it.
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
