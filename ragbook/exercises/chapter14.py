"""Graded exercises of chapter 14: hidden cases with expected values derived by hand."""

from __future__ import annotations

from fractions import Fraction

from .grading import Case, Exercise, Raises, register

# Chapter 14. From (evidence in prompt, correct) pairs: r = n_R / n, a = c_R / n_R, b =
# c_notR / (n - n_R), accuracy = (c_R + c_notR) / n, with 0 for a side that no question
# falls on. Each tuple is those counts by hand: e.g. ten questions, 7 with evidence (5
# right), 3 without (1 right): 7/10, 5/7, 1/3, 6/10 = 1/2 + 1/10.
_T, _N = True, False
register(
    Exercise(
        name="composition-from-outcomes",
        function_name="compose",
        cases=(
            Case(
                "three of four with evidence, two of those right",
                ([(_T, _T), (_T, _N), (_N, _N), (_T, _T)],),
                (Fraction(3, 4), Fraction(2, 3), 0, Fraction(1, 2)),
            ),
            Case(
                "two of five with evidence, both right; one of the other three right",
                ([(_T, _T), (_N, _T), (_N, _N), (_N, _N), (_T, _T)],),
                (Fraction(2, 5), 1, Fraction(1, 3), Fraction(3, 5)),
            ),
            Case(
                "ten questions: 5 of 7 right with evidence, 1 of 3 without",
                ([(_T, _T)] * 5 + [(_T, _N)] * 2 + [(_N, _T)] + [(_N, _N)] * 2,),
                (Fraction(7, 10), Fraction(5, 7), Fraction(1, 3), Fraction(6, 10)),
            ),
            Case(
                "every question has its evidence: b is 0 by convention",
                ([(_T, _T), (_T, _N)],),
                (1, Fraction(1, 2), 0, Fraction(1, 2)),
            ),
            Case(
                "no question has its evidence: a is 0 by convention",
                ([(_N, _T), (_N, _N), (_N, _N)],),
                (0, 0, Fraction(1, 3), Fraction(1, 3)),
            ),
            Case("one question, right with its evidence", ([(_T, _T)],), (1, 1, 0, 1)),
            Case(
                "every answer wrong", ([(_T, _N), (_N, _N)],), (Fraction(1, 2), 0, 0, 0)
            ),
            Case("an empty list is refused", ([],), Raises(ValueError)),
        ),
    )
)


# Chapter 14. A glossary rewrite: the definitions of the glossed terms of the question,
# appended in parentheses in the order the terms occur. Terms are compared after the
# analyzer (lowercase, stopwords dropped, no stemming). Each expected string is written
# out by hand.
_YEAR = "the time to orbit the Sun once"
register(
    Exercise(
        name="glossary-rewrite",
        function_name="gloss",
        cases=(
            Case(
                "the example question",
                ("How long is a year on Venus?", {"year": _YEAR}),
                f"How long is a year on Venus? (year: {_YEAR})",
            ),
            Case(
                "case does not matter",
                ("What is a YEAR on Mars?", {"year": "Y"}),
                "What is a YEAR on Mars? (year: Y)",
            ),
            Case(
                "two terms, in the order of the question, joined by '; '",
                ("Is a day longer than a year?", {"year": "Y", "day": "D"}),
                "Is a day longer than a year? (day: D; year: Y)",
            ),
            Case(
                "a repeated term is glossed once",
                ("Year after year?", {"year": "Y"}),
                "Year after year? (year: Y)",
            ),
            Case(
                "nothing to gloss: the question comes back unchanged",
                ("Who discovered Triton?", {"year": "Y"}),
                "Who discovered Triton?",
            ),
            Case(
                "no stemming: 'years' is not 'year'",
                ("How many years?", {"year": "Y"}),
                "How many years?",
            ),
            Case(
                "a term inside another word does not count",
                ("Is it a yearly event?", {"year": "Y"}),
                "Is it a yearly event?",
            ),
            Case(
                "trailing spaces go before the parenthesis",
                ("How old is Ceres?  ", {"old": "O"}),
                "How old is Ceres? (old: O)",
            ),
            Case(
                "an empty glossary is refused",
                ("How old is Ceres?", {}),
                Raises(ValueError),
            ),
        ),
    )
)
