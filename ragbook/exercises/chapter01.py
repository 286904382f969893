"""Graded exercises of chapter 1: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math
from fractions import Fraction

from .grading import Case, Exercise, Raises, register

_F = Fraction

# Chapter 1. Expected values are exact fractions worked out by hand: with logits ln 4,
# ln 2, 0 the weights exp(z/T) are 4, 2, 1 at T = 1 and 16, 4, 1 at T = 1/2.
register(
    Exercise(
        name="softmax-temperature",
        function_name="softmax_t",
        cases=(
            Case(
                "logits ln 4, ln 2, 0 at T = 1",
                ([math.log(4), math.log(2), 0.0], 1.0),
                [_F(4, 7), _F(2, 7), _F(1, 7)],
            ),
            Case(
                "the same logits at T = 0.5",
                ([math.log(4), math.log(2), 0.0], 0.5),
                [_F(16, 21), _F(4, 21), _F(1, 21)],
            ),
            Case(
                "logits ln 2, 0 at T = 0.5",
                ([math.log(2), 0.0], 0.5),
                [_F(4, 5), _F(1, 5)],
            ),
            Case(
                "equal logits stay equal at any T",
                ([3.0, 3.0, 3.0, 3.0], 0.1),
                [_F(1, 4)] * 4,
            ),
            Case(
                "a high temperature flattens: ln 9, 0 at T = 2",
                ([math.log(9), 0.0], 2.0),
                [_F(3, 4), _F(1, 4)],
            ),
            Case(
                "large logits must not overflow",
                ([1000.0, 1000.0 + math.log(3)], 1.0),
                [_F(1, 4), _F(3, 4)],
            ),
            Case("T = 0 is not a temperature", ([1.0, 2.0], 0.0), Raises(ValueError)),
            Case(
                "a negative temperature is refused",
                ([1.0, 2.0], -1.0),
                Raises(ValueError),
            ),
        ),
    )
)
register(
    Exercise(
        name="end-to-end-accuracy",
        function_name="accuracy",
        cases=(
            Case("r = 0.9, a = 0.85, a0 = 0.2", (0.9, 0.85, 0.2), _F(785, 1000)),
            Case("r = 0.8, a = 0.9, a0 = 0.1", (0.8, 0.9, 0.1), _F(74, 100)),
            Case("evidence rate 1 gives a", (1.0, 0.6, 0.3), _F(6, 10)),
            Case("evidence rate 0 gives a0", (0.0, 0.6, 0.3), _F(3, 10)),
            Case(
                "an evidence rate above 1 is not a probability",
                (1.2, 0.9, 0.1),
                Raises(ValueError),
            ),
            Case(
                "a negative accuracy is not a probability",
                (0.5, -0.1, 0.1),
                Raises(ValueError),
            ),
        ),
    )
)
