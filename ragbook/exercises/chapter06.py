"""Graded exercises of chapter 6: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math
from fractions import Fraction

from .grading import Case, Exercise, Raises, register

_F = Fraction

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


# Chapter 6. Cosines of a query with a list of vectors, q.v / (|q| |v|). The query
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


# Chapter 6. The in-batch loss: the mean over rows j of -log of the softmax share of
# entry (j, j) of the scaled similarities, log(sum_k exp(s x_jk)) - s x_jj. By hand:
# equal similarities in a row of M give log M; a positive of ln 3 against one 0 gives
# log(1 + 3) - ln 3 = log(4/3), and so does 1 against 0 at the scale ln 3; in the row
# (2, 0, 2) the positive 2 gives log(2 e^2 + 1) - 2 = log(2 + e^-2), and in (0, 1, 1)
# the positive 1 gives log(1 + 2e) - 1 = log(2 + e^-1); a positive of 0 against 1 gives
# log(1 + e). At the scale 20, 100 against 0 gives log(1 + e^-2000), which is 0 to
# double precision, and 0 against 100 gives 2000 + log(1 + e^-2000) = 2000.
register(
    Exercise(
        name="in-batch-loss",
        function_name="in_batch_loss",
        cases=(
            Case(
                "two questions, all similarities equal: each row is one choice of two",
                ([[0.0, 0.0], [0.0, 0.0]], 1.0),
                math.log(2),
            ),
            Case(
                "one question and its positive alone: nothing to confuse it with",
                ([[0.7]], 20.0),
                0,
            ),
            Case(
                "positives ln 3, negatives 0: -log(3/4) in each row",
                ([[math.log(3), 0.0], [0.0, math.log(3)]], 1.0),
                math.log(4 / 3),
            ),
            Case(
                "the scale multiplies the similarities: 1 and 0 at scale ln 3",
                ([[1.0, 0.0], [0.0, 1.0]], math.log(3)),
                math.log(4 / 3),
            ),
            Case(
                "hard negatives are extra columns: three equal passages per row",
                ([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], 1.0),
                math.log(3),
            ),
            Case(
                "the positive of row j is column j, with a hard negative after them",
                ([[2.0, 0.0, 2.0], [0.0, 1.0, 1.0]], 1.0),
                (math.log(2 + math.exp(-2)) + math.log(2 + math.exp(-1))) / 2,
            ),
            Case(
                "the positive is the diagonal entry even when it is not the largest",
                ([[0.0, 1.0], [1.0, 0.0]], 1.0),
                math.log(1 + math.e),
            ),
            Case(
                "large similarities must not overflow",
                ([[100.0, 0.0], [0.0, 100.0]], 20.0),
                0,
            ),
            Case(
                "a large loss must not overflow either",
                ([[0.0, 100.0], [100.0, 0.0]], 20.0),
                2000,
            ),
            Case("an empty batch is refused", ([], 1.0), Raises(ValueError)),
            Case(
                "rows of unequal length are refused",
                ([[0.0, 0.0], [0.0]], 1.0),
                Raises(ValueError),
            ),
            Case(
                "fewer passages than questions are refused",
                ([[0.0], [0.0]], 1.0),
                Raises(ValueError),
            ),
            Case(
                "a scale of 0 is refused",
                ([[1.0, 0.0], [0.0, 1.0]], 0.0),
                Raises(ValueError),
            ),
            Case(
                "a negative scale is refused",
                ([[1.0, 0.0], [0.0, 1.0]], -20.0),
                Raises(ValueError),
            ),
        ),
    )
)
