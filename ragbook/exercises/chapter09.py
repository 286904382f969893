"""Graded exercises of chapter 9: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math

from .grading import Case, Exercise, Raises, register

# Chapter 9. nDCG@k with linear gains and the ideal from every judged item: the worked
# example's gains are d1 = 2, d2 = 1, so IDCG@3 = 2/log2(2) + 1/log2(3); every expected
# value is that arithmetic by hand.
_IDEAL = 2 + 1 / math.log2(3)
register(
    Exercise(
        name="ndcg-at-k",
        function_name="ndcg",
        cases=(
            Case(
                "BM25's ranking d1, d3, d2",
                (["d1", "d3", "d2"], {"d1": 2, "d2": 1}, 3),
                (2 + 1 / 2) / _IDEAL,
            ),
            Case(
                "the dense ranking d2, d1, d4",
                (["d2", "d1", "d4"], {"d1": 2, "d2": 1}, 3),
                (1 + 2 / math.log2(3)) / _IDEAL,
            ),
            Case(
                "the ideal ranking scores 1",
                (["d1", "d2", "d3"], {"d1": 2, "d2": 1}, 3),
                1,
            ),
            Case(
                "one of two relevant, at rank 3: the ideal comes from the collection",
                (["x", "y", "b"], {"a": 1, "b": 1}, 3),
                (1 / 2) / (1 + 1 / math.log2(3)),
            ),
            Case("nothing relevant in the collection gives 0", (["a", "b"], {}, 2), 0),
            Case(
                "only the first rank counts at k = 1",
                (["d2", "d1"], {"d1": 2, "d2": 1}, 1),
                1 / 2,
            ),
            Case(
                "a ranking shorter than k", (["d1"], {"d1": 2, "d2": 1}, 5), 2 / _IDEAL
            ),
            Case("k = 0 is refused", (["d1"], {"d1": 1}, 0), Raises(ValueError)),
        ),
    )
)
