"""Graded exercises of chapter 11: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math

from .grading import Case, Exercise, Raises, register

# Chapter 11. Coverage: the share of the idf weight of the distinct question terms found
# among the sentence's (and its label's) terms, minus 1/2 when the question asks for a
# number and no sentence term has a digit. Each expected value is that share written out
# by hand; the worked example's weights are BM25's idf over four chunks, moons ln(1 +
# 2.5/2.5) = ln 2 and mars ln(1 + 1.5/3.5) = ln(5/3.5).
_MARS_IDF = {"moons": math.log(2), "mars": math.log(5 / 3.5)}
register(
    Exercise(
        name="coverage",
        function_name="coverage",
        cases=(
            Case(
                "d1 of the worked example covers both terms",
                (
                    ["moons", "mars"],
                    ["mars", "two", "small", "moons", "phobos", "deimos"],
                    _MARS_IDF,
                    False,
                ),
                1,
            ),
            Case(
                "d2 covers only mars: ln(5/3.5) / (ln 2 + ln(5/3.5))",
                (
                    ["moons", "mars"],
                    ["phobos", "orbits", "mars", "faster", "mars", "rotates"],
                    _MARS_IDF,
                    False,
                ),
                math.log(5 / 3.5) / (math.log(2) + math.log(5 / 3.5)),
            ),
            Case(
                "a repeated question term counts once",
                (["mars", "moons", "mars"], ["moons"], _MARS_IDF, False),
                math.log(2) / (math.log(2) + math.log(5 / 3.5)),
            ),
            Case(
                "rare terms weigh more: triton 3 of 4",
                (
                    ["discovered", "triton"],
                    ["triton", "retrograde"],
                    {"discovered": 1.0, "triton": 3.0},
                    False,
                ),
                0.75,
            ),
            Case(
                "a number question meets a sentence without a number: 1/2 - 1/2",
                (
                    ["day", "mars"],
                    ["day", "little", "longer"],
                    {"day": 1.0, "mars": 1.0},
                    True,
                ),
                0,
            ),
            Case(
                "a number in the sentence avoids the penalty",
                (
                    ["day", "mars"],
                    ["mars", "rotation", "day", "lasts", "24", "hours"],
                    {"day": 1.0, "mars": 1.0},
                    True,
                ),
                1,
            ),
            Case(
                "a decimal is a number too: 2 + 1.5 + 2.5 of 6",
                (
                    ["rotation", "period", "pluto"],
                    ["pluto", "rotation", "period", "6.387", "earth", "days"],
                    {"rotation": 2.0, "period": 1.5, "pluto": 2.5},
                    True,
                ),
                1,
            ),
            Case(
                "the penalty can make coverage negative: 0 - 1/2",
                (
                    ["day", "mars"],
                    ["clouds", "sulfuric", "acid"],
                    {"day": 1.0, "mars": 1.0},
                    True,
                ),
                -0.5,
            ),
            Case(
                "a negative idf weight is refused",
                (["a"], ["a"], {"a": -1.0}, False),
                Raises(ValueError),
            ),
        ),
    )
)
