"""Bootstrap intervals (chapter 9): how uncertain a mean over a few dozen questions is,
and how uncertain the difference between two systems measured on the same questions.

:func:`bootstrap_interval` gives a percentile interval for a statistic of per-question
values; :func:`paired_bootstrap` resamples questions, not systems, so that the two
systems' values stay paired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .. import validate

__all__ = ["bootstrap_interval", "PairedComparison", "paired_bootstrap"]


def _check_values(values: Sequence[float], what: str = "values") -> np.ndarray:
    array = validate.finite_array(values, what)
    if array.ndim != 1:
        raise ValueError(
            f"{what} must be a flat sequence of numbers, one per question; got "
            f"shape {array.shape}"
        )
    if array.size == 0:
        raise ValueError(f"{what} is empty: a bootstrap needs at least one question")
    return array


def check_bootstrap(confidence: float, resamples: int) -> None:
    validate.real(confidence, "confidence (0.95 for a 95% interval)")
    if not 0 < confidence < 1:
        raise ValueError(
            "confidence must lie strictly between 0 and 1 (0.95 for a 95% "
            f"interval), got {confidence!r}"
        )
    validate.k(resamples, "resamples")


def _check_seed(seed: int) -> int:
    return validate.count(seed, "seed")


def _resampled(
    values: np.ndarray, statistic: Callable, resamples: int, seed: int
) -> np.ndarray:
    """``statistic`` of ``resamples`` resamples of ``values`` (n draws with replacement
    each)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, values.size, size=(resamples, values.size))
    results = np.array([float(statistic(values[row])) for row in draws])
    if not np.all(np.isfinite(results)):
        raise ValueError(
            "the statistic returned a value that is not a finite number on some "
            "resample"
        )
    return results


def _percentiles(results: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2
    return float(np.quantile(results, tail)), float(np.quantile(results, 1 - tail))


def bootstrap_interval(
    values: Sequence[float],
    statistic: Callable = np.mean,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over questions (chapter 9).

    Draw n of the n per-question values with replacement, ``resamples`` times, apply
    ``statistic`` to each resample, and return the (1 - c)/2 and (1 + c)/2 quantiles of
    the results for confidence c. The resamples come from
    ``numpy.random.default_rng(seed)``, so the same seed gives the same interval.
    """
    check_bootstrap(confidence, resamples)
    if not callable(statistic):
        raise TypeError(
            f"statistic must be a function of an array of values, got {statistic!r}"
        )
    return _percentiles(
        _resampled(_check_values(values), statistic, resamples, _check_seed(seed)),
        confidence,
    )


@dataclass(frozen=True)
class PairedComparison:
    """System a against system b on the same questions (see :func:`paired_bootstrap`).

    ``mean_difference`` is mean(a - b); ``interval`` its percentile bootstrap interval;
    ``share_a_greater`` the share of resamples whose mean of a is above that of b;
    ``a_better``, ``a_worse`` and ``tied`` count the questions where a's value is above,
    below or exactly equal to b's.
    """

    mean_difference: float
    interval: tuple[float, float]
    share_a_greater: float
    a_better: int
    a_worse: int
    tied: int


def paired_bootstrap(
    values_a: Sequence[float],
    values_b: Sequence[float],
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedComparison:
    """Paired percentile bootstrap of mean(a) - mean(b) over the same questions (chapter
    9).

    Question i is resampled with both its values, so the per-question differences d_i =
    a_i - b_i are what is resampled: the interval is :func:`bootstrap_interval` of d
    with the same seed, and a resample has mean(a) > mean(b) exactly when its mean of d
    is above 0.
    """
    check_bootstrap(confidence, resamples)
    a, b = _check_values(values_a, "values_a"), _check_values(values_b, "values_b")
    if a.size != b.size:
        raise ValueError(
            f"values_a has {a.size} questions but values_b has {b.size}; a paired "
            "comparison needs the same questions"
        )
    differences = a - b
    results = _resampled(differences, np.mean, resamples, _check_seed(seed))
    return PairedComparison(
        mean_difference=float(np.mean(differences)),
        interval=_percentiles(results, confidence),
        share_a_greater=float(np.mean(results > 0)),
        a_better=int(np.sum(a > b)),
        a_worse=int(np.sum(a < b)),
        tied=int(np.sum(a == b)),
    )
