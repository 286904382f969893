"""Next-token probabilities from logits, with a temperature (chapter 1).

    P_T(i) = exp(z_i / T) / sum_j exp(z_j / T),   T > 0

Dividing by T < 1 stretches the gaps between logits, so the distribution sharpens; T > 1
flattens it. As T -> 0 the mass goes to the largest logit (shared equally among ties).

Top-p (nucleus) sampling then keeps the smallest set of most probable tokens whose
probabilities add up to at least p, and renormalises over that set.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import validate

__all__ = ["softmax", "top_p", "zero_temperature_limit"]


def _as_logits(logits: Sequence[float]) -> np.ndarray:
    z = validate.finite_array(logits, "logits")
    if z.ndim != 1 or z.size == 0:
        raise ValueError(
            f"logits must be a non-empty one-dimensional sequence, got shape {z.shape}"
        )
    return z


def softmax(logits: Sequence[float], temperature: float = 1.0) -> np.ndarray:
    """Probabilities exp(z_i/T) / sum_j exp(z_j/T) for logits z and temperature T > 0.

    The largest logit is subtracted before exponentiating, which changes nothing in
    exact arithmetic and keeps exp from overflowing. T = 0 is not a temperature but a
    limit: use :func:`zero_temperature_limit` (greedy decoding) for it.
    """
    z = _as_logits(logits)
    if validate.real(temperature, "temperature") <= 0:
        raise ValueError(
            f"temperature must be a positive finite number, got {temperature!r}; "
            "the T -> 0 limit is zero_temperature_limit (greedy decoding)"
        )
    scaled = (z - z.max()) / temperature
    weights = np.exp(scaled)
    return weights / weights.sum()


def zero_temperature_limit(logits: Sequence[float]) -> np.ndarray:
    """The limit of :func:`softmax` as T -> 0: all mass on the largest logit, split
    equally among ties."""
    z = _as_logits(logits)
    top = z == z.max()
    return top / top.sum()


def top_p(probabilities: Sequence[float], p: float) -> np.ndarray:
    """Nucleus filtering: keep the most probable tokens until their mass reaches p.

    Tokens are taken in order of falling probability (ties by index); the first whose
    running sum reaches p closes the set. The kept probabilities are divided by their
    sum, the others set to 0. p = 1 keeps every token; a small p keeps only the top one.
    """
    probs = validate.finite_array(probabilities, "probabilities")
    if probs.ndim != 1 or probs.size == 0 or (probs < 0).any():
        raise ValueError("probabilities must be a non-empty list of values >= 0")
    if not 0 < validate.real(p, "p") <= 1:
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    order = np.lexsort((np.arange(probs.size), -probs))
    running = np.cumsum(probs[order]) / probs.sum()
    kept = order[: int(np.searchsorted(running, p - 1e-12)) + 1]
    out = np.zeros_like(probs, dtype=float)
    out[kept] = probs[kept] / probs[kept].sum()
    return out
