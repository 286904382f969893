"""Graded exercises of chapter 8: hidden cases with expected values derived by hand."""

from __future__ import annotations

from .grading import Case, Exercise, Raises, register

# Chapter 8. Reciprocal rank fusion, sum over lists of 1 / (c + rank), ties by id; each
# expected list is the arithmetic done by hand (the reference text's example with c = 10
# first).
register(
    Exercise(
        name="rrf",
        function_name="rrf",
        cases=(
            Case(
                "the worked example, c = 10",
                ([["d1", "d3", "d2", "d4"], ["d2", "d1", "d4", "d3"]], 10),
                [
                    ("d1", 1 / 11 + 1 / 12),
                    ("d2", 1 / 13 + 1 / 11),
                    ("d3", 1 / 12 + 1 / 14),
                    ("d4", 1 / 14 + 1 / 13),
                ],
            ),
            Case(
                "one ranking keeps its order",
                ([["b", "a", "c"]], 60),
                [("b", 1 / 61), ("a", 1 / 62), ("c", 1 / 63)],
            ),
            Case(
                "equal scores are ordered by id",
                ([["y", "x"], ["x", "y"]], 60),
                [("x", 1 / 61 + 1 / 62), ("y", 1 / 61 + 1 / 62)],
            ),
            Case(
                "an item missing from a list gets nothing from it",
                ([["a", "b"], ["b"]], 0),
                [("b", 1 / 2 + 1), ("a", 1.0)],
            ),
            Case(
                "agreement beats a single first place at c = 60",
                ([["solo", "both"], ["x", "both"]], 60),
                [("both", 2 / 62), ("solo", 1 / 61), ("x", 1 / 61)],
            ),
            Case("no rankings give an empty list", ([], 60), []),
            Case("a negative constant is refused", ([["a"]], -1), Raises(ValueError)),
        ),
    )
)
