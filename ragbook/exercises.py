"""Graded exercises: hidden cases run against the reader's function, with a verdict that says what is wrong.

A chapter asks the reader to write a function, then calls ``check("name", their_function)``. The checker
runs every hidden case and prints which ones failed and how (the input, the expected value and what came
back, or the exception raised), never the code of a solution. Expected values are written down from hand
derivation (exact fractions where possible), not computed by ragbook.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from . import validate

__all__ = ["Raises", "Case", "Exercise", "Verdict", "EXERCISES", "check", "register"]


@dataclass(frozen=True)
class Raises:
    """An expected outcome: the function must raise this exception type (or a subclass)."""

    error: type[BaseException]

    def __repr__(self) -> str:
        return f"raises {self.error.__name__}"


@dataclass(frozen=True)
class Case:
    """One hidden case: what it tests, the arguments, and the expected result."""

    description: str
    args: tuple
    expected: Any
    kwargs: dict = field(default_factory=dict)

    def call_text(self, name: str) -> str:
        parts = [_show(a) for a in self.args] + [f"{k}={_show(v)}" for k, v in self.kwargs.items()]
        return f"{name}({', '.join(parts)})"


@dataclass(frozen=True)
class Exercise:
    """A graded exercise: the function name the reader writes, its hidden cases, a float tolerance."""

    name: str
    function_name: str
    cases: tuple[Case, ...]
    tolerance: float = 1e-9


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`check`; true when every case passed. Prints as a readable report."""

    exercise: str
    passed: int
    total: int
    failures: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.passed == self.total

    def __repr__(self) -> str:
        if self:
            return f"PASS {self.exercise}: all {self.total} hidden cases are right."
        lines = [f"NOT YET {self.exercise}: {self.passed} of {self.total} hidden cases pass."]
        lines += [f"  - {failure}" for failure in self.failures]
        return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Fraction):
        return f"{float(value):.6g}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_show(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _show(value.tolist())
    return repr(value)


def _matches(expected: Any, got: Any, tolerance: float) -> bool:
    if isinstance(expected, (int, float, Fraction)) and not isinstance(expected, bool):
        if hasattr(got, "tolist"):
            got = got.tolist()
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        return math.isclose(float(got), float(expected), rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(expected, (list, tuple)):
        if hasattr(got, "tolist"):
            got = got.tolist()
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return False
        return all(_matches(e, g, tolerance) for e, g in zip(expected, got))
    return bool(expected == got)


def _run_case(exercise: Exercise, function: Callable, number: int, case: Case) -> str | None:
    call = case.call_text(exercise.function_name)
    where = f"case {number} ({case.description}): {call}"
    try:
        got = function(*case.args, **case.kwargs)
    except Exception as error:  # the reader's code may raise anything; report it
        if isinstance(case.expected, Raises) and isinstance(error, case.expected.error):
            return None
        wanted = repr(case.expected) if isinstance(case.expected, Raises) else f"expected {_show(case.expected)}"
        return f"{where} {wanted}, but it raised {type(error).__name__}: {error}"
    if isinstance(case.expected, Raises):
        return f"{where} should {case.expected!r} (bad input must be refused), but it returned {_show(got)}"
    if not _matches(case.expected, got, exercise.tolerance):
        return f"{where} expected {_show(case.expected)}, got {_show(got)}"
    return None


EXERCISES: dict[str, Exercise] = {}


def register(exercise: Exercise) -> Exercise:
    """Add an exercise to :data:`EXERCISES` under its name (names are unique)."""
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register takes an Exercise, got {type(exercise).__name__}")
    if exercise.name in EXERCISES:
        raise ValueError(f"an exercise named {exercise.name!r} is already registered")
    EXERCISES[exercise.name] = exercise
    return exercise


def check(name: str, function: Callable) -> Verdict:
    """Run the hidden cases of exercise ``name`` against ``function`` and return the verdict."""
    validate.text(name, "name")
    if name not in EXERCISES:
        known = ", ".join(sorted(EXERCISES))
        raise KeyError(f"no exercise named {name!r}; the exercises are: {known}")
    if not callable(function):
        raise TypeError(f"check needs the function you wrote, got {type(function).__name__}")
    exercise = EXERCISES[name]
    failures = []
    for number, case in enumerate(exercise.cases, start=1):
        failure = _run_case(exercise, function, number, case)
        if failure is not None:
            failures.append(failure)
    return Verdict(name, len(exercise.cases) - len(failures), len(exercise.cases), tuple(failures))


# ---------------------------------------------------------------------------------------------------
# Chapter 1. Expected values are exact fractions worked out by hand: with logits ln 4, ln 2, 0 the
# weights exp(z/T) are 4, 2, 1 at T = 1 and 16, 4, 1 at T = 1/2.
_F = Fraction
register(
    Exercise(
        name="softmax-temperature",
        function_name="softmax_t",
        cases=(
            Case("logits ln 4, ln 2, 0 at T = 1", ([math.log(4), math.log(2), 0.0], 1.0), [_F(4, 7), _F(2, 7), _F(1, 7)]),
            Case("the same logits at T = 0.5", ([math.log(4), math.log(2), 0.0], 0.5), [_F(16, 21), _F(4, 21), _F(1, 21)]),
            Case("logits ln 2, 0 at T = 0.5", ([math.log(2), 0.0], 0.5), [_F(4, 5), _F(1, 5)]),
            Case("equal logits stay equal at any T", ([3.0, 3.0, 3.0, 3.0], 0.1), [_F(1, 4)] * 4),
            Case("a high temperature flattens: ln 9, 0 at T = 2", ([math.log(9), 0.0], 2.0), [_F(3, 4), _F(1, 4)]),
            Case("large logits must not overflow", ([1000.0, 1000.0 + math.log(3)], 1.0), [_F(1, 4), _F(3, 4)]),
            Case("T = 0 is not a temperature", ([1.0, 2.0], 0.0), Raises(ValueError)),
            Case("a negative temperature is refused", ([1.0, 2.0], -1.0), Raises(ValueError)),
        ),
    )
)
register(
    Exercise(
        name="end-to-end-accuracy",
        function_name="accuracy",
        cases=(
            Case("r = 0.9, a = 0.85, b = 0.2", (0.9, 0.85, 0.2), _F(785, 1000)),
            Case("r = 0.8, a = 0.9, b = 0.1", (0.8, 0.9, 0.1), _F(74, 100)),
            Case("perfect recall gives a", (1.0, 0.6, 0.3), _F(6, 10)),
            Case("zero recall gives b", (0.0, 0.6, 0.3), _F(3, 10)),
            Case("a recall above 1 is not a probability", (1.2, 0.9, 0.1), Raises(ValueError)),
            Case("a negative accuracy is not a probability", (0.5, -0.1, 0.1), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 4. Window counts: 1 if n <= W, else ceil((n - W)/(W - o)) + 1, worked by hand for each case;
# cut probabilities max(0, L - 1 - o)/(W - o), as fractions.
register(
    Exercise(
        name="chunk-count",
        function_name="chunks_needed",
        cases=(
            Case("1,000 words, W = 200, o = 50: ceil(800/150) + 1", (1000, 200, 50), 7),
            Case("the same without overlap", (1000, 200, 0), 5),
            Case("a text shorter than one window", (150, 200, 50), 1),
            Case("600 words, W = 150, o = 30: ceil(450/120) + 1", (600, 150, 30), 5),
            Case("a text exactly one window long", (200, 200, 50), 1),
            Case("one word more than a window", (201, 200, 50), 2),
            Case("1,000 tokens, W = 300, o = 50", (1000, 300, 50), 4),
            Case("an overlap as large as the window never advances", (1000, 100, 100), Raises(ValueError)),
        ),
    )
)
register(
    Exercise(
        name="cut-probability",
        function_name="cut_prob",
        cases=(
            Case("an 11-word span, 100-word windows, no overlap", (11, 100, 0), _F(10, 100)),
            Case("a one-word span is never cut", (1, 10, 0), 0),
            Case("overlap L - 1 = 29 removes all cuts", (30, 100, 29), 0),
            Case("overlap 28 leaves one bad offset in 72", (30, 100, 28), _F(1, 72)),
            Case("a 15-word span, W = 50, o = 5: (15 - 1 - 5)/45", (15, 50, 5), _F(1, 5)),
            Case("a span as long as the window", (10, 10, 0), _F(9, 10)),
            Case("a span longer than the window is always cut", (5, 4, 0), 1),
            Case("an overlap as large as the window is refused", (5, 10, 10), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 3. A chunk [cs, ce) contains a span [ss, se) when cs <= ss and se <= ce. Each expected value
# below is that rule applied by hand; a range whose end comes before its start is not a range.
register(
    Exercise(
        name="span-containment",
        function_name="contains",
        cases=(
            Case("a span well inside the chunk: 0 <= 10 and 20 <= 100", (0, 100, 10, 20), True),
            Case("equal ranges: the chunk is exactly the span", (10, 20, 10, 20), True),
            Case("the span starts one character before the chunk: 9 < 10", (10, 20, 9, 20), False),
            Case("the span ends one character after the chunk: 21 > 20", (10, 20, 10, 21), False),
            Case("touching: the span starts where the chunk ends", (10, 20, 20, 25), False),
            Case("disjoint: the span lies far after the chunk", (0, 10, 40, 50), False),
            Case("a chunk whose end comes before its start is refused", (20, 10, 12, 15), Raises(ValueError)),
            Case("a span whose end comes before its start is refused", (0, 100, 30, 20), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 5. One term's BM25 contribution idf * f (k1 + 1) / (f + K), K = k1 (1 - b + b |d| / avg), with
# Lucene's idf ln(1 + (N - n + 0.5) / (n + 0.5)); each expected value is that arithmetic written out by hand.
_ln = math.log
register(
    Exercise(
        name="bm25-term",
        function_name="bm25_term",
        cases=(
            Case("moons in d1 of the worked example", (1, 2, 4, 6, 6.5),
                 _ln(2) * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 6 / 6.5))),
            Case("mars twice in d2", (2, 3, 4, 6, 6.5),
                 _ln(1 + 1.5 / 3.5) * 5 / (2 + 1.5 * (0.25 + 0.75 * 6 / 6.5))),
            Case("an absent term contributes nothing", (0, 2, 4, 6, 6.5), 0),
            Case("one occurrence in an average-length chunk is the idf", (1, 1, 10, 5, 5), _ln(1 + 9.5 / 1.5)),
            Case("b = 0 ignores the chunk's length", (3, 5, 100, 50, 10), _ln(1 + 95.5 / 5.5) * 7.5 / 4.5,
                 {"b": 0.0}),
            Case("k1 = 0 counts presence only", (7, 2, 20, 3, 9), _ln(1 + 18.5 / 2.5), {"k1": 0.0}),
            Case("a document frequency above N is refused", (1, 5, 4, 6, 6.5), Raises(ValueError)),
            Case("b outside [0, 1] is refused", (1, 2, 4, 6, 6.5), Raises(ValueError), {"b": 1.5}),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 9. nDCG@k with linear gains and the ideal from every judged item: the worked example's gains are
# d1 = 2, d2 = 1, so IDCG@3 = 2/log2(2) + 1/log2(3); every expected value is that arithmetic by hand.
_IDEAL = 2 + 1 / math.log2(3)
register(
    Exercise(
        name="ndcg-at-k",
        function_name="ndcg",
        cases=(
            Case("BM25's ranking d1, d3, d2", (["d1", "d3", "d2"], {"d1": 2, "d2": 1}, 3), (2 + 1 / 2) / _IDEAL),
            Case("the dense ranking d2, d1, d4", (["d2", "d1", "d4"], {"d1": 2, "d2": 1}, 3),
                 (1 + 2 / math.log2(3)) / _IDEAL),
            Case("the ideal ranking scores 1", (["d1", "d2", "d3"], {"d1": 2, "d2": 1}, 3), 1),
            Case("one of two relevant, at rank 3: the ideal comes from the collection", (["x", "y", "b"], {"a": 1, "b": 1}, 3),
                 (1 / 2) / (1 + 1 / math.log2(3))),
            Case("nothing relevant in the collection gives 0", (["a", "b"], {}, 2), 0),
            Case("only the first rank counts at k = 1", (["d2", "d1"], {"d1": 2, "d2": 1}, 1), 1 / 2),
            Case("a ranking shorter than k", (["d1"], {"d1": 2, "d2": 1}, 5), 2 / _IDEAL),
            Case("k = 0 is refused", (["d1"], {"d1": 1}, 0), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 7. The best number of IVF lists for n vectors and p probes minimises L + p n / L: the derivative
# 1 - p n / L^2 vanishes at L* = sqrt(p n), where the cost is 2 sqrt(p n). Each pair below is that closed form
# written out by hand (perfect squares where possible: 10,000 x 4 = 200^2, 2,500 x 16 = 200^2, 10^6 = 1000^2).
register(
    Exercise(
        name="ivf-lists",
        function_name="best_lists",
        cases=(
            Case("n = 100,000, p = 8: L* = sqrt(800,000)", (100_000, 8),
                 (math.sqrt(800_000), 2 * math.sqrt(800_000))),
            Case("a perfect square: n = 10,000, p = 4", (10_000, 4), (200, 400)),
            Case("one probe: n = 10,000, p = 1", (10_000, 1), (100, 200)),
            Case("one probe over 100,000 vectors: 100 sqrt(10)", (100_000, 1),
                 (100 * math.sqrt(10), 200 * math.sqrt(10))),
            Case("more probes, more lists: n = 2,500, p = 16", (2_500, 16), (200, 400)),
            Case("a million vectors, one probe", (1_000_000, 1), (1000, 2000)),
            Case("zero probes are refused", (10_000, 0), Raises(ValueError)),
            Case("an empty collection is refused", (0, 4), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 8. Reciprocal rank fusion, sum over lists of 1 / (c + rank), ties by id; each expected list is
# the arithmetic done by hand (the reference text's example with c = 10 first).
register(
    Exercise(
        name="rrf",
        function_name="rrf",
        cases=(
            Case("the worked example, c = 10", ([["d1", "d3", "d2", "d4"], ["d2", "d1", "d4", "d3"]], 10),
                 [("d1", 1 / 11 + 1 / 12), ("d2", 1 / 13 + 1 / 11), ("d3", 1 / 12 + 1 / 14), ("d4", 1 / 14 + 1 / 13)]),
            Case("one ranking keeps its order", ([["b", "a", "c"]], 60), [("b", 1 / 61), ("a", 1 / 62), ("c", 1 / 63)]),
            Case("equal scores are ordered by id", ([["y", "x"], ["x", "y"]], 60),
                 [("x", 1 / 61 + 1 / 62), ("y", 1 / 61 + 1 / 62)]),
            Case("an item missing from a list gets nothing from it", ([["a", "b"], ["b"]], 0),
                 [("b", 1 / 2 + 1), ("a", 1.0)]),
            Case("agreement beats a single first place at c = 60", ([["solo", "both"], ["x", "both"]], 60),
                 [("both", 2 / 62), ("solo", 1 / 61), ("x", 1 / 61)]),
            Case("no rankings give an empty list", ([], 60), []),
            Case("a negative constant is refused", ([["a"]], -1), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 6. The Frobenius error of the best rank-r approximation (Eckart-Young) is
# sqrt(sum of the squared singular values after the r largest); values are sorted in decreasing order
# first. Each expected value is that arithmetic by hand: [4, 3] r = 1 discards 3; [10, 6, 3, 2] r = 1 gives
# sqrt(36 + 9 + 4) = 7; [5, 3, 4] sorted is [5, 4, 3], so r = 2 discards 3; [2, 2, 1] r = 0 gives
# sqrt(4 + 4 + 1) = 3; keeping every value leaves 0.
register(
    Exercise(
        name="rank-r-error",
        function_name="truncation_error",
        cases=(
            Case("[4, 3], r = 1: the 3 is discarded", ([4.0, 3.0], 1), 3),
            Case("[10, 6, 3, 2], r = 1: sqrt(36 + 9 + 4)", ([10.0, 6.0, 3.0, 2.0], 1), 7),
            Case("unsorted [5, 3, 4], r = 2: sort first, then discard the 3", ([5.0, 3.0, 4.0], 2), 3),
            Case("[2, 2, 1], r = 0 keeps nothing: the whole norm sqrt(4 + 4 + 1)", ([2.0, 2.0, 1.0], 0), 3),
            Case("r equal to the number of values: nothing is lost", ([3.0, 2.0, 1.0], 3), 0),
            Case("a negative r is refused", ([3.0, 2.0], -1), Raises(ValueError)),
            Case("r above the number of values is refused", ([3.0, 2.0, 1.0], 4), Raises(ValueError)),
            Case("a negative singular value is refused", ([3.0, -1.0], 1), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 2. Cosines of a query with a list of vectors, q.v / (|q| |v|). The worked example's query
# (0.8, 0.6) has unit length, so each cosine is the dot product over the chunk's length, written out by hand;
# the other cases use 3-4-5 triangles and 1-2-2 vectors (length 3), whose cosines are exact fractions.
register(
    Exercise(
        name="dense-cosine",
        function_name="dense_cosines",
        cases=(
            Case("the worked example: query (0.8, 0.6), chunks d1 to d4",
                 ([0.8, 0.6], [[0.5, 0.9], [1.0, 0.5], [-0.1, 1.0], [0.9, -0.2]]),
                 [(0.4 + 0.54) / math.sqrt(0.25 + 0.81), (0.8 + 0.3) / math.sqrt(1.0 + 0.25),
                  (-0.08 + 0.6) / math.sqrt(0.01 + 1.0), (0.72 - 0.12) / math.sqrt(0.81 + 0.04)]),
            Case("a query of length 5 must be divided by its length", ([3.0, 4.0], [[4.0, 3.0], [3.0, 4.0]]),
                 [_F(24, 25), 1]),
            Case("perpendicular and opposite vectors", ([3.0, 4.0], [[-4.0, 3.0], [-3.0, -4.0]]), [0, -1]),
            Case("a vector's length does not matter, only its direction", ([1.0, 0.0], [[2.0, 0.0], [0.0, 5.0], [7.0, 7.0]]),
                 [1, 0, 1 / math.sqrt(2)]),
            Case("three dimensions: (1, 2, 2) and (2, 1, 2), both of length 3", ([1.0, 2.0, 2.0], [[2.0, 1.0, 2.0]]),
                 [_F(8, 9)]),
            Case("a zero query has no direction", ([0.0, 0.0], [[1.0, 0.0]]), Raises(ValueError)),
            Case("a zero vector among the chunks has no direction", ([0.8, 0.6], [[1.0, 0.5], [0.0, 0.0]]),
                 Raises(ValueError)),
            Case("a vector of another dimension is refused", ([0.8, 0.6], [[1.0, 0.5, 0.2]]), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 10. The evidence budget: context limit - instructions and history - question - output reserve -
# margin. Each expected value is that subtraction done by hand; a negative part or fixed parts larger than
# the context limit are refused.
register(
    Exercise(
        name="evidence-budget",
        function_name="evidence_tokens",
        cases=(
            Case("the reference example: 4096 - 700 - 196 - 700 - 100", (4096, 700, 196, 700, 100), 2400),
            Case("a smaller budget: 4096 - 1200 - 196 - 800 - 100", (4096, 1200, 196, 800, 100), 1800),
            Case("no margin: 8192 - 1500 - 92 - 1000 - 0", (8192, 1500, 92, 1000, 0), 5600),
            Case("a long context: 128000 - 2000 - 500 - 4000 - 1500", (128000, 2000, 500, 4000, 1500), 120000),
            Case("the fixed parts use everything: 2048 - 1000 - 48 - 1000 - 0", (2048, 1000, 48, 1000, 0), 0),
            Case("over-committed: 700 + 196 + 2000 + 100 + 2000 > 4096", (4096, 2000, 196, 2000, 100), Raises(ValueError)),
            Case("a negative question length is refused", (4096, 700, -196, 700, 100), Raises(ValueError)),
            Case("a negative margin is refused", (4096, 700, 196, 700, -100), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 12. Support: the share of the claim's terms, repeats counted, that occur among the source terms.
# Each expected value is that count done by hand (matches over claim terms); an empty claim is refused.
register(
    Exercise(
        name="support",
        function_name="support",
        cases=(
            Case("seed 004's first claim: all 5 terms in source [1]",
                 (["mars", "two", "moons", "phobos", "deimos"], ["mars", "two", "small", "moons", "phobos", "deimos"]), 1),
            Case("seed 004's second claim: phobos and mars, 2 of 6",
                 (["phobos", "circles", "mars", "every", "8", "hours"],
                  ["phobos", "orbits", "mars", "faster", "mars", "rotates"]), Fraction(2, 6)),
            Case("repeats in the claim count: titan twice of 3 terms",
                 (["titan", "titan", "moon"], ["titan"]), Fraction(2, 3)),
            Case("a repeated unsupported term counts every time: 1 of 4",
                 (["mars", "invented", "invented", "invented"], ["mars"]), Fraction(1, 4)),
            Case("a changed number in a Pluto claim: 5 of 6",
                 (["pluto", "rotation", "period", "6.5", "earth", "days"],
                  ["pluto", "rotation", "period", "6.387", "earth", "days", "single", "day", "lasts", "six", "days"]),
                 Fraction(5, 6)),
            Case("repeats in the source add nothing", (["moons"], ["moons", "moons", "moons"]), 1),
            Case("no term in common", (["venus", "clouds"], ["mars", "dust"]), 0),
            Case("no source terms support nothing", (["mars"], []), 0),
            Case("a claim with no terms is refused", ([], ["mars"]), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 13. RAG-Token: prod over tokens i of sum over chunks z of p(z) a[z][i]. The worked example's prior is
# the two-way softmax 1 / (1 + e^-1.13) at tau = 0.5 ((1.0875 - 0.5225) / 0.5 = 1.13); every expected value is
# the per-token mixtures multiplied out by hand.
_P1 = 1 / (1 + math.exp(-1.13))
register(
    Exercise(
        name="rag-token",
        function_name="rag_token",
        cases=(
            Case("the worked example: (p1 0.5 + p2 0.7)(p1 0.6 + p2 0.05)", ([_P1, 1 - _P1], [[0.5, 0.6], [0.7, 0.05]]),
                 (_P1 * 0.5 + (1 - _P1) * 0.7) * (_P1 * 0.6 + (1 - _P1) * 0.05)),
            Case("each token from its own chunk: 0.55 x 0.55", ([0.5, 0.5], [[1.0, 0.1], [0.1, 1.0]]), Fraction(3025, 10000)),
            Case("one chunk: the plain product 0.5^3", ([1.0], [[0.5, 0.5, 0.5]]), Fraction(1, 8)),
            Case("one token: the mixture 0.25 x 0.2 + 0.75 x 0.6", ([0.25, 0.75], [[0.2], [0.6]]), Fraction(1, 2)),
            Case("three chunks: 0.4 x 0.5", ([0.5, 0.25, 0.25], [[0.2, 0.4], [0.4, 0.8], [0.8, 0.4]]), Fraction(1, 5)),
            Case("a chunk with prior 0 contributes nothing: 0.5 x 0.2", ([0.0, 1.0], [[0.9, 0.9], [0.5, 0.2]]),
                 Fraction(1, 10)),
            Case("a prior that does not sum to 1 is refused", ([0.5, 0.6], [[0.5], [0.5]]), Raises(ValueError)),
            Case("one row of token probabilities per chunk, or refuse", ([1.0], [[0.5], [0.5]]), Raises(ValueError)),
            Case("a token probability above 1 is refused", ([0.5, 0.5], [[1.5], [0.5]]), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 14. From (evidence in prompt, correct) pairs: r = n_R / n, a = c_R / n_R, b = c_notR / (n - n_R),
# accuracy = (c_R + c_notR) / n, with 0 for a side that no question falls on. Each tuple is those counts by hand:
# e.g. ten questions, 7 with evidence (5 right), 3 without (1 right): 7/10, 5/7, 1/3, 6/10 = 1/2 + 1/10.
_T, _N = True, False
register(
    Exercise(
        name="composition-from-outcomes",
        function_name="compose",
        cases=(
            Case("three of four with evidence, two of those right", ([(_T, _T), (_T, _N), (_N, _N), (_T, _T)],),
                 (Fraction(3, 4), Fraction(2, 3), 0, Fraction(1, 2))),
            Case("two of five with evidence, both right; one of the other three right",
                 ([(_T, _T), (_N, _T), (_N, _N), (_N, _N), (_T, _T)],), (Fraction(2, 5), 1, Fraction(1, 3), Fraction(3, 5))),
            Case("ten questions: 5 of 7 right with evidence, 1 of 3 without",
                 ([(_T, _T)] * 5 + [(_T, _N)] * 2 + [(_N, _T)] + [(_N, _N)] * 2,),
                 (Fraction(7, 10), Fraction(5, 7), Fraction(1, 3), Fraction(6, 10))),
            Case("every question has its evidence: b is 0 by convention", ([(_T, _T), (_T, _N)],),
                 (1, Fraction(1, 2), 0, Fraction(1, 2))),
            Case("no question has its evidence: a is 0 by convention", ([(_N, _T), (_N, _N), (_N, _N)],),
                 (0, 0, Fraction(1, 3), Fraction(1, 3))),
            Case("one question, right with its evidence", ([(_T, _T)],), (1, 1, 0, 1)),
            Case("every answer wrong", ([(_T, _N), (_N, _N)],), (Fraction(1, 2), 0, 0, 0)),
            Case("an empty list is refused", ([],), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 11. Coverage: the share of the idf weight of the distinct question terms found among the sentence's
# (and its label's) terms, minus 1/2 when the question asks for a number and no sentence term has a digit.
# Each expected value is that share written out by hand; the worked example's weights are BM25's idf over four
# chunks, moons ln(1 + 2.5/2.5) = ln 2 and mars ln(1 + 1.5/3.5) = ln(5/3.5).
_MARS_IDF = {"moons": math.log(2), "mars": math.log(5 / 3.5)}
register(
    Exercise(
        name="coverage",
        function_name="coverage",
        cases=(
            Case("d1 of the worked example covers both terms",
                 (["moons", "mars"], ["mars", "two", "small", "moons", "phobos", "deimos"], _MARS_IDF, False), 1),
            Case("d2 covers only mars: ln(5/3.5) / (ln 2 + ln(5/3.5))",
                 (["moons", "mars"], ["phobos", "orbits", "mars", "faster", "mars", "rotates"], _MARS_IDF, False),
                 math.log(5 / 3.5) / (math.log(2) + math.log(5 / 3.5))),
            Case("a repeated question term counts once",
                 (["mars", "moons", "mars"], ["moons"], _MARS_IDF, False),
                 math.log(2) / (math.log(2) + math.log(5 / 3.5))),
            Case("rare terms weigh more: triton 3 of 4",
                 (["discovered", "triton"], ["triton", "retrograde"], {"discovered": 1.0, "triton": 3.0}, False), 0.75),
            Case("a number question meets a sentence without a number: 1/2 - 1/2",
                 (["day", "mars"], ["day", "little", "longer"], {"day": 1.0, "mars": 1.0}, True), 0),
            Case("a number in the sentence avoids the penalty",
                 (["day", "mars"], ["mars", "rotation", "day", "lasts", "24", "hours"], {"day": 1.0, "mars": 1.0}, True), 1),
            Case("a decimal is a number too: 2 + 1.5 + 2.5 of 6",
                 (["rotation", "period", "pluto"], ["pluto", "rotation", "period", "6.387", "earth", "days"],
                  {"rotation": 2.0, "period": 1.5, "pluto": 2.5}, True), 1),
            Case("the penalty can make coverage negative: 0 - 1/2",
                 (["day", "mars"], ["clouds", "sulfuric", "acid"], {"day": 1.0, "mars": 1.0}, True), -0.5),
            Case("a negative idf weight is refused", (["a"], ["a"], {"a": -1.0}, False), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 15. The chunks a user may read: chunk i is visible when the level of its document is one of the
# user's levels (no level implies another). Each expected list is that rule applied by hand, chunk by chunk;
# seed 003's D1-D4 first (D4 restricted to finance).
register(
    Exercise(
        name="visible-chunks",
        function_name="visible_chunks",
        cases=(
            Case("seed 003: a public user reads D1, D2, D3 but not D4",
                 (["D1", "D2", "D3", "D4"], {"D1": "public", "D2": "public", "D3": "public", "D4": "finance"},
                  {"public"}), [0, 1, 2]),
            Case("seed 003: public and finance read all four",
                 (["D1", "D2", "D3", "D4"], {"D1": "public", "D2": "public", "D3": "public", "D4": "finance"},
                  {"public", "finance"}), [0, 1, 2, 3]),
            Case("staff alone does not imply public: chunks 0 and 2 of staff document a",
                 (["a", "b", "a", "c"], {"a": "staff", "b": "public", "c": "finance"}, {"staff"}), [0, 2]),
            Case("several chunks of one document keep their ids: only chunk 1 is public",
                 (["b", "a", "b"], {"a": "public", "b": "finance"}, {"public"}), [1]),
            Case("a user without levels reads nothing",
                 (["a", "b"], {"a": "public", "b": "staff"}, set()), []),
            Case("no chunks, nothing to read", ([], {"a": "public"}, {"public"}), []),
            Case("a chunk whose document has no access level is refused",
                 (["a", "x"], {"a": "public"}, {"public"}), Raises(ValueError)),
            Case("an unknown access level is refused",
                 (["a"], {"a": "secret"}, {"public"}), Raises(ValueError)),
        ),
    )
)


# ---------------------------------------------------------------------------------------------------
# Chapter 14. A glossary rewrite: the definitions of the glossed terms of the question, appended in
# parentheses in the order the terms occur. Terms are compared after the analyzer (lowercase, stopwords
# dropped, no stemming). Each expected string is written out by hand.
_YEAR = "the time to orbit the Sun once"
register(
    Exercise(
        name="glossary-rewrite",
        function_name="gloss",
        cases=(
            Case("the example question", ("How long is a year on Venus?", {"year": _YEAR}),
                 f"How long is a year on Venus? (year: {_YEAR})"),
            Case("case does not matter", ("What is a YEAR on Mars?", {"year": "Y"}), "What is a YEAR on Mars? (year: Y)"),
            Case("two terms, in the order of the question, joined by '; '",
                 ("Is a day longer than a year?", {"year": "Y", "day": "D"}), "Is a day longer than a year? (day: D; year: Y)"),
            Case("a repeated term is glossed once", ("Year after year?", {"year": "Y"}), "Year after year? (year: Y)"),
            Case("nothing to gloss: the question comes back unchanged",
                 ("Who discovered Triton?", {"year": "Y"}), "Who discovered Triton?"),
            Case("no stemming: 'years' is not 'year'", ("How many years?", {"year": "Y"}), "How many years?"),
            Case("a term inside another word does not count", ("Is it a yearly event?", {"year": "Y"}),
                 "Is it a yearly event?"),
            Case("trailing spaces go before the parenthesis", ("How old is Ceres?  ", {"old": "O"}),
                 "How old is Ceres? (old: O)"),
            Case("an empty glossary is refused", ("How old is Ceres?", {}), Raises(ValueError)),
        ),
    )
)
