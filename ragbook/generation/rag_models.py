"""RAG-Sequence and RAG-Token: the retrieved chunk as a hidden variable (chapter 13).

The retriever gives each of the top k chunks z a probability p(z | x), a softmax of the
retrieval scores at a temperature tau. With a_{z,i} = p(y_i | x, z, y_<i) the
generator's probability of answer token i given z:

    RAG-Sequence:  p(y | x) = sum_z p(z | x) prod_i a_{z,i}   (one chunk for the answer)
    RAG-Token:     p(y | x) = prod_i sum_z p(z | x) a_{z,i}   (a chunk per token)

Written as a product of ratios, RAG-Sequence's i-th factor is sum_z w_{z,i} a_{z,i},
where the weights w_{z,i} are p(z | x) updated by Bayes' rule on the tokens before i;
RAG-Token keeps the prior weights.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import validate
from .sampling import softmax

__all__ = [
    "retrieval_distribution",
    "rag_sequence_likelihood",
    "rag_token_likelihood",
    "rag_sequence_log_likelihood",
    "rag_token_log_likelihood",
    "sequence_weights",
]


def retrieval_distribution(
    scores: Sequence[float], temperature: float = 1.0
) -> np.ndarray:
    """p(z | x): a softmax of the retrieval scores of the top k chunks at temperature
    tau."""
    return softmax(scores, temperature)


def _check(chunk_probabilities, token_probabilities) -> tuple[np.ndarray, np.ndarray]:
    p = validate.finite_array(chunk_probabilities, "chunk probabilities")
    a = np.atleast_2d(validate.finite_array(token_probabilities, "token probabilities"))
    if p.ndim != 1 or p.size == 0:
        raise ValueError(
            f"chunk probabilities must be a non-empty vector, got shape {p.shape}"
        )
    if a.shape[0] != p.size:
        raise ValueError(
            f"token probabilities need one row per chunk: {p.size} chunks, "
            f"{a.shape[0]} rows"
        )
    if a.shape[1] == 0:
        raise ValueError("the answer has no tokens")
    if np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(
            f"chunk probabilities must be non-negative and sum to 1, got sum {p.sum()}"
        )
    if np.any(a <= 0) or np.any(a > 1):
        raise ValueError("token probabilities must lie in (0, 1]")
    return p, a


def rag_sequence_log_likelihood(
    chunk_probabilities: Sequence[float], token_probabilities
) -> float:
    """log sum_z p(z) prod_i a_{z,i}, with the largest term factored out (log-sum-exp):
    no underflow."""
    p, a = _check(chunk_probabilities, token_probabilities)
    with np.errstate(divide="ignore"):
        logs = np.log(p) + np.log(a).sum(axis=1)
    peak = logs.max()
    return float(peak + np.log(np.exp(logs - peak).sum()))


def rag_token_log_likelihood(
    chunk_probabilities: Sequence[float], token_probabilities
) -> float:
    """sum_i log sum_z p(z) a_{z,i}."""
    p, a = _check(chunk_probabilities, token_probabilities)
    return float(np.log(p @ a).sum())


def rag_sequence_likelihood(
    chunk_probabilities: Sequence[float], token_probabilities
) -> float:
    """sum_z p(z) prod_i a_{z,i} (the exponential of
    :func:`rag_sequence_log_likelihood`)."""
    return float(
        np.exp(rag_sequence_log_likelihood(chunk_probabilities, token_probabilities))
    )


def rag_token_likelihood(
    chunk_probabilities: Sequence[float], token_probabilities
) -> float:
    """prod_i sum_z p(z) a_{z,i} (the exponential of
    :func:`rag_token_log_likelihood`)."""
    return float(
        np.exp(rag_token_log_likelihood(chunk_probabilities, token_probabilities))
    )


def sequence_weights(
    chunk_probabilities: Sequence[float], token_probabilities
) -> np.ndarray:
    """RAG-Sequence's weights w_{z,i} before each token i (rows: tokens, columns:
    chunks).

    w_{z,1} = p(z), and w_{z,i+1} is proportional to w_{z,i} a_{z,i}: Bayes' rule after
    each token. The product over i of sum_z w_{z,i} a_{z,i} equals
    :func:`rag_sequence_likelihood`.
    """
    p, a = _check(chunk_probabilities, token_probabilities)
    weights = [p]
    for i in range(a.shape[1] - 1):
        updated = weights[-1] * a[:, i]
        weights.append(updated / updated.sum())
    return np.array(weights)
