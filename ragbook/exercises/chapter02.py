"""Graded exercises of chapter 2: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math
from fractions import Fraction

from .grading import Case, Exercise, Raises, register

_F = Fraction

# Chapter 2. Cosines of a query with a list of vectors, q.v / (|q| |v|). The query
# (0.8, 0.6) has unit length, so each cosine is the dot product over the
# chunk's length, written out by hand; the other cases use 3-4-5 triangles and 1-2-2
# vectors (length 3), whose cosines are exact fractions.
register(
    Exercise(
        name="dense-cosine",
        function_name="dense_cosines",
        cases=(
            Case(
                "query (0.8, 0.6) and four two-dimensional vectors",
                ([0.8, 0.6], [[0.5, 0.9], [1.0, 0.5], [-0.1, 1.0], [0.9, -0.2]]),
                [
                    (0.4 + 0.54) / math.sqrt(0.25 + 0.81),
                    (0.8 + 0.3) / math.sqrt(1.0 + 0.25),
                    (-0.08 + 0.6) / math.sqrt(0.01 + 1.0),
                    (0.72 - 0.12) / math.sqrt(0.81 + 0.04),
                ],
            ),
            Case(
                "a query of length 5 must be divided by its length",
                ([3.0, 4.0], [[4.0, 3.0], [3.0, 4.0]]),
                [_F(24, 25), 1],
            ),
            Case(
                "perpendicular and opposite vectors",
                ([3.0, 4.0], [[-4.0, 3.0], [-3.0, -4.0]]),
                [0, -1],
            ),
            Case(
                "a vector's length does not matter, only its direction",
                ([1.0, 0.0], [[2.0, 0.0], [0.0, 5.0], [7.0, 7.0]]),
                [1, 0, 1 / math.sqrt(2)],
            ),
            Case(
                "three dimensions: (1, 2, 2) and (2, 1, 2), both of length 3",
                ([1.0, 2.0, 2.0], [[2.0, 1.0, 2.0]]),
                [_F(8, 9)],
            ),
            Case(
                "a zero query has no direction",
                ([0.0, 0.0], [[1.0, 0.0]]),
                Raises(ValueError),
            ),
            Case(
                "a zero vector among the chunks has no direction",
                ([0.8, 0.6], [[1.0, 0.5], [0.0, 0.0]]),
                Raises(ValueError),
            ),
            Case(
                "a vector of another dimension is refused",
                ([0.8, 0.6], [[1.0, 0.5, 0.2]]),
                Raises(ValueError),
            ),
        ),
    )
)
