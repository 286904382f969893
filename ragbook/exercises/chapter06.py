"""Graded exercises of chapter 6: hidden cases with expected values derived by hand."""

from __future__ import annotations

from .grading import Case, Exercise, Raises, register

# Chapter 6. The Frobenius error of the best rank-r approximation (Eckart-Young) is
# sqrt(sum of the squared singular values after the r largest); values are sorted in
# decreasing order first. Each expected value is that arithmetic by hand: [4, 3] r = 1
# discards 3; [10, 6, 3, 2] r = 1 gives sqrt(36 + 9 + 4) = 7; [5, 3, 4] sorted is [5, 4,
# 3], so r = 2 discards 3; [2, 2, 1] r = 0 gives sqrt(4 + 4 + 1) = 3; keeping every
# value leaves 0.
register(
    Exercise(
        name="rank-r-error",
        function_name="truncation_error",
        cases=(
            Case("[4, 3], r = 1: the 3 is discarded", ([4.0, 3.0], 1), 3),
            Case(
                "[10, 6, 3, 2], r = 1: sqrt(36 + 9 + 4)", ([10.0, 6.0, 3.0, 2.0], 1), 7
            ),
            Case(
                "unsorted [5, 3, 4], r = 2: sort first, then discard the 3",
                ([5.0, 3.0, 4.0], 2),
                3,
            ),
            Case(
                "[2, 2, 1], r = 0 keeps nothing: the whole norm sqrt(4 + 4 + 1)",
                ([2.0, 2.0, 1.0], 0),
                3,
            ),
            Case(
                "r equal to the number of values: nothing is lost",
                ([3.0, 2.0, 1.0], 3),
                0,
            ),
            Case("a negative r is refused", ([3.0, 2.0], -1), Raises(ValueError)),
            Case(
                "r above the number of values is refused",
                ([3.0, 2.0, 1.0], 4),
                Raises(ValueError),
            ),
            Case(
                "a negative singular value is refused",
                ([3.0, -1.0], 1),
                Raises(ValueError),
            ),
        ),
    )
)
