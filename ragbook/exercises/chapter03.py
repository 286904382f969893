"""Graded exercises of chapter 3: hidden cases with expected values derived by hand."""

from __future__ import annotations

from .grading import Case, Exercise, Raises, register

# Chapter 3. A chunk [cs, ce) contains a span [ss, se) when cs <= ss and se <= ce. Each
# expected value below is that rule applied by hand; a range whose end comes before its
# start is not a range.
register(
    Exercise(
        name="span-containment",
        function_name="contains",
        cases=(
            Case(
                "a span well inside the chunk: 0 <= 10 and 20 <= 100",
                (0, 100, 10, 20),
                True,
            ),
            Case("equal ranges: the chunk is exactly the span", (10, 20, 10, 20), True),
            Case(
                "the span starts one character before the chunk: 9 < 10",
                (10, 20, 9, 20),
                False,
            ),
            Case(
                "the span ends one character after the chunk: 21 > 20",
                (10, 20, 10, 21),
                False,
            ),
            Case(
                "touching: the span starts where the chunk ends",
                (10, 20, 20, 25),
                False,
            ),
            Case("disjoint: the span lies far after the chunk", (0, 10, 40, 50), False),
            Case(
                "a chunk whose end comes before its start is refused",
                (20, 10, 12, 15),
                Raises(ValueError),
            ),
            Case(
                "a span whose end comes before its start is refused",
                (0, 100, 30, 20),
                Raises(ValueError),
            ),
        ),
    )
)
