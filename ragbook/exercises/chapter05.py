"""Graded exercises of chapter 5: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math

from .grading import Case, Exercise, Raises, register

# Chapter 5. One term's BM25 contribution idf * f (k1 + 1) / (f + K), K = k1 (1 - b + b
# |d| / avg), with Lucene's idf ln(1 + (N - n + 0.5) / (n + 0.5)); each expected value
# is that arithmetic written out by hand.
_ln = math.log
register(
    Exercise(
        name="bm25-term",
        function_name="bm25_term",
        cases=(
            Case(
                "moons in d1 of the worked example",
                (1, 2, 4, 6, 6.5),
                _ln(2) * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 6 / 6.5)),
            ),
            Case(
                "mars twice in d2",
                (2, 3, 4, 6, 6.5),
                _ln(1 + 1.5 / 3.5) * 5 / (2 + 1.5 * (0.25 + 0.75 * 6 / 6.5)),
            ),
            Case("an absent term contributes nothing", (0, 2, 4, 6, 6.5), 0),
            Case(
                "one occurrence in an average-length chunk is the idf",
                (1, 1, 10, 5, 5),
                _ln(1 + 9.5 / 1.5),
            ),
            Case(
                "b = 0 ignores the chunk's length",
                (3, 5, 100, 50, 10),
                _ln(1 + 95.5 / 5.5) * 7.5 / 4.5,
                {"b": 0.0},
            ),
            Case(
                "k1 = 0 counts presence only",
                (7, 2, 20, 3, 9),
                _ln(1 + 18.5 / 2.5),
                {"k1": 0.0},
            ),
            Case(
                "a document frequency above N is refused",
                (1, 5, 4, 6, 6.5),
                Raises(ValueError),
            ),
            Case(
                "b outside [0, 1] is refused",
                (1, 2, 4, 6, 6.5),
                Raises(ValueError),
                {"b": 1.5},
            ),
        ),
    )
)
