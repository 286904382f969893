"""Graded exercises of chapter 4: hidden cases with expected values derived by hand."""

from __future__ import annotations

from fractions import Fraction

from .grading import Case, Exercise, Raises, register

_F = Fraction

# Chapter 4. Window counts: 1 if n <= W, else ceil((n - W)/(W - o)) + 1, worked by hand
# for each case; cut probabilities max(0, L - 1 - o)/(W - o), as fractions.
register(
    Exercise(
        name="chunk-count",
        function_name="chunks_needed",
        cases=(
            Case("1,000 words, W = 200, o = 50: ceil(800/150) + 1", (1000, 200, 50), 7),
            Case("the same without overlap", (1000, 200, 0), 5),
            Case("a text shorter than one window", (150, 200, 50), 1),
            Case("600 words, W = 150, o = 30: ceil(450/120) + 1", (600, 150, 30), 5),
            Case("a text exactly one window long", (200, 200, 50), 1),
            Case("one word more than a window", (201, 200, 50), 2),
            Case("1,000 tokens, W = 300, o = 50", (1000, 300, 50), 4),
            Case(
                "an overlap as large as the window never advances",
                (1000, 100, 100),
                Raises(ValueError),
            ),
        ),
    )
)
register(
    Exercise(
        name="cut-probability",
        function_name="cut_prob",
        cases=(
            Case(
                "an 11-word span, 100-word windows, no overlap",
                (11, 100, 0),
                _F(10, 100),
            ),
            Case("a one-word span is never cut", (1, 10, 0), 0),
            Case("overlap L - 1 = 29 removes all cuts", (30, 100, 29), 0),
            Case("overlap 28 leaves one bad offset in 72", (30, 100, 28), _F(1, 72)),
            Case(
                "a 15-word span, W = 50, o = 5: (15 - 1 - 5)/45", (15, 50, 5), _F(1, 5)
            ),
            Case("a span as long as the window", (10, 10, 0), _F(9, 10)),
            Case("a span longer than the window is always cut", (5, 4, 0), 1),
            Case(
                "an overlap as large as the window is refused",
                (5, 10, 10),
                Raises(ValueError),
            ),
        ),
    )
)
