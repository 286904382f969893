"""Graded exercises of chapter 12: hidden cases with expected values derived by hand."""

from __future__ import annotations

from fractions import Fraction

from .grading import Case, Exercise, Raises, register

# Chapter 12. Support: the share of the claim's terms, repeats counted, that occur among
# the source terms. Each expected value is that count done by hand (matches over claim
# terms); an empty claim is refused.
register(
    Exercise(
        name="support",
        function_name="support",
        cases=(
            Case(
                "seed 004's first claim: all 5 terms in source [1]",
                (
                    ["mars", "two", "moons", "phobos", "deimos"],
                    ["mars", "two", "small", "moons", "phobos", "deimos"],
                ),
                1,
            ),
            Case(
                "seed 004's second claim: phobos and mars, 2 of 6",
                (
                    ["phobos", "circles", "mars", "every", "8", "hours"],
                    ["phobos", "orbits", "mars", "faster", "mars", "rotates"],
                ),
                Fraction(2, 6),
            ),
            Case(
                "repeats in the claim count: titan twice of 3 terms",
                (["titan", "titan", "moon"], ["titan"]),
                Fraction(2, 3),
            ),
            Case(
                "a repeated unsupported term counts every time: 1 of 4",
                (["mars", "invented", "invented", "invented"], ["mars"]),
                Fraction(1, 4),
            ),
            Case(
                "a changed number in a Pluto claim: 5 of 6",
                (
                    ["pluto", "rotation", "period", "6.5", "earth", "days"],
                    [
                        "pluto",
                        "rotation",
                        "period",
                        "6.387",
                        "earth",
                        "days",
                        "single",
                        "day",
                        "lasts",
                        "six",
                        "days",
                    ],
                ),
                Fraction(5, 6),
            ),
            Case(
                "repeats in the source add nothing",
                (["moons"], ["moons", "moons", "moons"]),
                1,
            ),
            Case("no term in common", (["venus", "clouds"], ["mars", "dust"]), 0),
            Case("no source terms support nothing", (["mars"], []), 0),
            Case(
                "a claim with no terms is refused", ([], ["mars"]), Raises(ValueError)
            ),
        ),
    )
)
