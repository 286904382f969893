"""Graded exercises of chapter 7: hidden cases with expected values derived by hand."""

from __future__ import annotations

import math

from .grading import Case, Exercise, Raises, register

# Chapter 7. The best number of IVF lists for n vectors and p probes minimises L + p n /
# L: the derivative 1 - p n / L^2 vanishes at L* = sqrt(p n), where the cost is 2 sqrt(p
# n). Each pair below is that closed form written out by hand (perfect squares where
# possible: 10,000 x 4 = 200^2, 2,500 x 16 = 200^2, 10^6 = 1000^2).
register(
    Exercise(
        name="ivf-lists",
        function_name="best_lists",
        cases=(
            Case(
                "n = 100,000, p = 8: L* = sqrt(800,000)",
                (100_000, 8),
                (math.sqrt(800_000), 2 * math.sqrt(800_000)),
            ),
            Case("a perfect square: n = 10,000, p = 4", (10_000, 4), (200, 400)),
            Case("one probe: n = 10,000, p = 1", (10_000, 1), (100, 200)),
            Case(
                "one probe over 100,000 vectors: 100 sqrt(10)",
                (100_000, 1),
                (100 * math.sqrt(10), 200 * math.sqrt(10)),
            ),
            Case("more probes, more lists: n = 2,500, p = 16", (2_500, 16), (200, 400)),
            Case("a million vectors, one probe", (1_000_000, 1), (1000, 2000)),
            Case("zero probes are refused", (10_000, 0), Raises(ValueError)),
            Case("an empty collection is refused", (0, 4), Raises(ValueError)),
        ),
    )
)
