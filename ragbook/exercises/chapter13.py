"""Graded exercises of chapter 13: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math
from fractions import Fraction

from .grading import Case, Exercise, Raises, register

# Chapter 13. RAG-Token: prod over tokens i of sum over chunks z of p(z) a[z][i]. The
# worked example's prior is the two-way softmax 1 / (1 + e^-1.13) at tau = 0.5 ((1.0875
# - 0.5225) / 0.5 = 1.13); every expected value is the per-token mixtures multiplied out
# by hand.
_P1 = 1 / (1 + math.exp(-1.13))
register(
    Exercise(
        name="rag-token",
        function_name="rag_token",
        cases=(
            Case(
                "the worked example: (p1 0.5 + p2 0.7)(p1 0.6 + p2 0.05)",
                ([_P1, 1 - _P1], [[0.5, 0.6], [0.7, 0.05]]),
                (_P1 * 0.5 + (1 - _P1) * 0.7) * (_P1 * 0.6 + (1 - _P1) * 0.05),
            ),
            Case(
                "each token from its own chunk: 0.55 x 0.55",
                ([0.5, 0.5], [[1.0, 0.1], [0.1, 1.0]]),
                Fraction(3025, 10000),
            ),
            Case(
                "one chunk: the plain product 0.5^3",
                ([1.0], [[0.5, 0.5, 0.5]]),
                Fraction(1, 8),
            ),
            Case(
                "one token: the mixture 0.25 x 0.2 + 0.75 x 0.6",
                ([0.25, 0.75], [[0.2], [0.6]]),
                Fraction(1, 2),
            ),
            Case(
                "three chunks: 0.4 x 0.5",
                ([0.5, 0.25, 0.25], [[0.2, 0.4], [0.4, 0.8], [0.8, 0.4]]),
                Fraction(1, 5),
            ),
            Case(
                "a chunk with prior 0 contributes nothing: 0.5 x 0.2",
                ([0.0, 1.0], [[0.9, 0.9], [0.5, 0.2]]),
                Fraction(1, 10),
            ),
            Case(
                "a prior that does not sum to 1 is refused",
                ([0.5, 0.6], [[0.5], [0.5]]),
                Raises(ValueError),
            ),
            Case(
                "one row of token probabilities per chunk, or refuse",
                ([1.0], [[0.5], [0.5]]),
                Raises(ValueError),
            ),
            Case(
                "a token probability above 1 is refused",
                ([0.5, 0.5], [[1.5], [0.5]]),
                Raises(ValueError),
            ),
        ),
    )
)
