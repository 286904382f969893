"""Hybrid ranking: fusing the rankings of several retrievers, and reranking a first
stage (chapter 8).

BM25 scores are unbounded and grow with the query's length, cosines lie in [-1, 1]:
adding them lets the larger scale decide. Reciprocal rank fusion uses only ranks:

    RRF(d) = sum over the rankings j that contain d of 1 / (c + rank_j(d)),

with c = 60 by default: rank 1 is worth 1/61 and rank 2 1/62, almost the same, so a
chunk that several retrievers place fairly high beats one that a single retriever places
first; a small c makes the top ranks count more. Ties are broken by chunk id so the
fused ranking is deterministic.

Every function here returns its ranking as :class:`~ragbook.retrieval.contract.Hit`
records, and takes rankings as hits, as plain chunk ids, or (for the score fusions) as
(chunk id, score) pairs; :class:`HybridRetriever` and :class:`RerankedRetriever` satisfy
the retriever contract of :mod:`ragbook.retrieval.contract`.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from .. import validate
from .contract import Hit, as_hits

__all__ = [
    "reciprocal_rank_fusion",
    "score_sum_fusion",
    "normalized_score_fusion",
    "HybridRetriever",
    "rerank",
    "RerankedRetriever",
]

Ranking = Sequence[Hit] | Sequence[tuple[int, float]]


def _ordered(scores: dict[int, float], k: int | None) -> list[Hit]:
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return as_hits(ranked if k is None else ranked[: validate.k(k)])


def _id_of(item):
    if isinstance(item, Hit):
        return item.chunk_id
    return item[0] if isinstance(item, (tuple, list)) else item


def _ids(ranking, name: str = "a ranking") -> list[int]:
    entries = validate.sequence(
        ranking, name, "hits, chunk ids or (chunk id, score) pairs"
    )
    ids = validate.ids([_id_of(item) for item in entries], name)
    if len(set(ids)) != len(ids):
        raise ValueError("a ranking lists the same chunk twice")
    return ids


def _pairs(ranking, name: str) -> list[tuple[int, float]]:
    """A ranking of (chunk id, score) pairs with distinct int ids and finite scores."""
    entries = [
        (entry.chunk_id, entry.score) if isinstance(entry, Hit) else entry
        for entry in validate.sequence(ranking, name, "hits or (chunk id, score) pairs")
    ]
    for position, entry in enumerate(entries):
        if (
            isinstance(entry, (str, bytes))
            or not isinstance(entry, Sequence)
            or len(entry) != 2
        ):
            raise TypeError(
                f"{name} must hold (chunk id, score) pairs, got {entry!r} at "
                f"position {position}"
            )
    ids = _ids(entries, name)
    return [
        (chunk_id, validate.real(score, f"the score of chunk {chunk_id} in {name}"))
        for chunk_id, (_, score) in zip(ids, entries)
    ]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence], c: float = 60, k: int | None = None
) -> list[Hit]:
    """Fuse rankings (lists of hits, of ids, or of (id, score) pairs, best first) by sum
    of 1 / (c + rank)."""
    rankings = validate.sequence(rankings, "rankings", "rankings")
    if not rankings:
        raise ValueError("reciprocal rank fusion needs at least one ranking")
    c = validate.real(c, "the fusion constant c", minimum=0)
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(_ids(ranking), start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (c + rank)
    return _ordered(fused, k)


def score_sum_fusion(results: Sequence[Ranking], k: int | None = None) -> list[Hit]:
    """The pitfall: add the raw scores of each list (a chunk missing from a list adds
    0)."""
    fused: dict[int, float] = {}
    for j, ranking in enumerate(validate.sequence(results, "results", "rankings")):
        for chunk_id, score in _pairs(ranking, f"results[{j}]"):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + score
    return _ordered(fused, k)


def normalized_score_fusion(
    results: Sequence[Ranking], weights: Sequence[float], k: int | None = None
) -> list[Hit]:
    """sum_j w_j (s_j(d) - min_j) / (max_j - min_j): each list's scores mapped to [0, 1]
    before a weighted sum.

    A chunk missing from a list gets 0 from it, like the list's lowest score. A list
    whose scores are all equal contributes 1 to each of its chunks.
    """
    results = validate.sequence(results, "results", "rankings")
    weights = validate.finite_array(weights, "weights", ndim=1).tolist()
    if len(results) != len(weights):
        raise ValueError(f"got {len(results)} result lists but {len(weights)} weights")
    fused: dict[int, float] = {}
    for j, (ranking, weight) in enumerate(zip(results, weights)):
        ranking = _pairs(ranking, f"results[{j}]")
        if not ranking:
            continue
        scores = np.array([s for _, s in ranking], dtype=np.float64)
        low, span = scores.min(), scores.max() - scores.min()
        for (chunk_id, _), s in zip(ranking, scores):
            value = (s - low) / span if span > 0 else 1.0
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight * value
    return _ordered(fused, k)


class HybridRetriever:
    """Reciprocal rank fusion of several retrievers' top ``depth`` lists."""

    def __init__(self, retrievers: Sequence, c: float = 60, depth: int = 50):
        retrievers = validate.sequence(retrievers, "retrievers", "retrievers")
        if not retrievers:
            raise ValueError("a hybrid retriever needs at least one retriever")
        for position, retriever in enumerate(retrievers):
            if not callable(getattr(retriever, "search", None)):
                raise TypeError(
                    f"retrievers must have a search method; retriever {position} "
                    f"is {retriever!r}"
                )
        c = validate.real(c, "the fusion constant c", minimum=0)
        self.retrievers, self.c, self.depth = retrievers, c, validate.k(depth, "depth")

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k of the fused top ``depth`` lists; ``allowed`` is passed on to every
        retriever."""
        query = validate.query(query)
        k = validate.k(k)
        allowed = None if allowed is None else validate.ids(allowed, "allowed")
        rankings = [
            r.search(query, self.depth, allowed=allowed) for r in self.retrievers
        ]
        return reciprocal_rank_fusion(rankings, self.c, k)


def rerank(
    query: str,
    candidates: Ranking,
    score: Callable[[str, list[int]], np.ndarray],
    k: int | None = None,
) -> list[Hit]:
    """Second stage: rescore the first stage's candidates with ``score(query, ids)`` and
    sort (ties by id)."""
    query = validate.query(query)
    if not callable(score):
        raise TypeError(
            f"score must be a function of (query, chunk ids), got {score!r}"
        )
    k = None if k is None else validate.k(k)
    ids = _ids(candidates, "candidates")
    if not ids:
        return []
    values = validate.finite_array(score(query, ids), "the second-stage scores")
    if values.shape != (len(ids),):
        raise ValueError(
            f"the second-stage scorer returned {values.shape} scores for "
            f"{len(ids)} candidates"
        )
    return _ordered(dict(zip(ids, values.tolist())), k)


class RerankedRetriever:
    """A first-stage retriever's top ``depth``, rescored by ``score(query, chunk ids)``:
    :func:`rerank` as a retriever."""

    def __init__(
        self,
        first_stage,
        score: Callable[[str, list[int]], np.ndarray],
        depth: int = 50,
    ):
        if not callable(getattr(first_stage, "search", None)):
            raise TypeError(
                f"first_stage must have a search method, got {first_stage!r}"
            )
        if not callable(score):
            raise TypeError(
                f"score must be a function of (query, chunk ids), got {score!r}"
            )
        self.first_stage, self.score, self.depth = (
            first_stage,
            score,
            validate.k(depth, "depth"),
        )

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k after reranking; ``allowed`` is applied by the first stage, before
        anything is ranked."""
        query = validate.query(query)
        k = validate.k(k)
        allowed = None if allowed is None else validate.ids(allowed, "allowed")
        return rerank(
            query,
            self.first_stage.search(query, max(k, self.depth), allowed=allowed),
            self.score,
            k,
        )
