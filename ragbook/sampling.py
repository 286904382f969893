"""Next-token probabilities from logits, with a temperature (chapter 1).

    P_T(i) = exp(z_i / T) / sum_j exp(z_j / T),   T > 0

Dividing by T < 1 stretches the gaps between logits, so the distribution sharpens; T > 1
flattens it. As T -> 0 the mass goes to the largest logit (shared equally among ties).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import validate

__all__ = ["softmax", "zero_temperature_limit"]


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
