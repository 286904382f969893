"""Turning a score per chunk into a ranking: the top k, ties broken by chunk id.

Every retriever (:mod:`ragbook.retrieval.bm25`, :mod:`ragbook.retrieval.tfidf`,
:mod:`ragbook.retrieval.vectors`) ranks the same way, so that rankings are deterministic
and comparable:

- chunks are ordered by score, highest first, and equal scores by chunk id, lowest
  first;
- the ranking covers every candidate, so chunks that score 0 follow in id order (a
  threshold on the score, not the ranking, decides that nothing matched);
- k larger than the number of candidates returns them all; k < 1 is an error, and so is
  a score that is nan or infinite;
- ``allowed`` restricts the candidates *before* ranking (permissions,
  :func:`ragbook.system.access.allowed_chunks`): the result is the top k among the
  allowed chunks, never a global top k filtered afterwards, which could come back short
  or empty.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .. import validate
from .contract import Hit, as_hits

__all__ = ["top_k", "top_k_arrays"]


def allowed_positions(n: int, allowed: Iterable[int] | None) -> np.ndarray:
    if allowed is None:
        return np.arange(n)
    ids = np.unique(np.array(validate.ids(allowed, "allowed"), dtype=np.int64))
    if ids.size and (ids[0] < 0 or ids[-1] >= n):
        bad = ids[0] if ids[0] < 0 else ids[-1]
        raise ValueError(
            f"allowed chunk id {bad} is outside the collection (0 to {n - 1})"
        )
    return ids


def top_k_arrays(
    scores: np.ndarray, k: int, allowed: Iterable[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The k best candidates as two arrays (ids, scores), by score descending then id
    ascending."""
    k = validate.k(k)
    scores = validate.finite_array(scores, "scores", ndim=1, dtype=None)
    if allowed is None:
        ids, values = None, scores
    else:
        ids = allowed_positions(scores.shape[0], allowed)
        values = scores[ids]
    n = values.shape[0]
    if k < n:
        # argpartition finds the k-th largest score; every score above it is in, and
        # ties at it are filled in id order (positions are in id order), so the cut is
        # deterministic. (partitioning the negated scores is much faster here than
        # partitioning at n - k: most chunks score exactly 0, and introselect slows down
        # on long runs of equal values near the pivot)
        kth = values[np.argpartition(-values, k - 1)[k - 1]]
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: k - above.size]
        keep = np.concatenate([above, tied])
    else:
        keep = np.arange(n)
    order = keep[np.lexsort((keep, -values[keep]))]
    return (order if ids is None else ids[order]), values[order]


def top_k(
    scores: np.ndarray, k: int, allowed: Iterable[int] | None = None
) -> list[Hit]:
    """The k best candidates as :class:`~ragbook.retrieval.contract.Hit` records, by
    score descending then id ascending."""
    ids, values = top_k_arrays(scores, k, allowed)
    return as_hits(zip(ids.tolist(), values.tolist()))
