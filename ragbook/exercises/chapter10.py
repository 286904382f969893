"""Graded exercises of chapter 10: hidden cases with expected values derived by hand."""

from __future__ import annotations

from .grading import Case, Exercise, Raises, register

# Chapter 10. The evidence budget: context limit - instructions and history - question -
# output reserve - margin. Each expected value is that subtraction done by hand; a
# negative part or fixed parts larger than the context limit are refused.
register(
    Exercise(
        name="evidence-budget",
        function_name="evidence_tokens",
        cases=(
            Case(
                "the reference example: 4096 - 700 - 196 - 700 - 100",
                (4096, 700, 196, 700, 100),
                2400,
            ),
            Case(
                "a smaller budget: 4096 - 1200 - 196 - 800 - 100",
                (4096, 1200, 196, 800, 100),
                1800,
            ),
            Case(
                "no margin: 8192 - 1500 - 92 - 1000 - 0",
                (8192, 1500, 92, 1000, 0),
                5600,
            ),
            Case(
                "a long context: 128000 - 2000 - 500 - 4000 - 1500",
                (128000, 2000, 500, 4000, 1500),
                120000,
            ),
            Case(
                "the fixed parts use everything: 2048 - 1000 - 48 - 1000 - 0",
                (2048, 1000, 48, 1000, 0),
                0,
            ),
            Case(
                "over-committed: 700 + 196 + 2000 + 100 + 2000 > 4096",
                (4096, 2000, 196, 2000, 100),
                Raises(ValueError),
            ),
            Case(
                "a negative question length is refused",
                (4096, 700, -196, 700, 100),
                Raises(ValueError),
            ),
            Case(
                "a negative margin is refused",
                (4096, 700, 196, 700, -100),
                Raises(ValueError),
            ),
        ),
    )
)
