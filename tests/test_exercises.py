"""The graded-exercise mechanism: right answers pass, wrong ones are named with expected vs got."""
import math

import pytest

from ragbook.exercises import EXERCISES, Case, Exercise, Raises, check, register


def reader_softmax(logits, temperature):
    # an independent correct solution, written the way a reader might
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    m = max(logits)
    w = [math.exp((z - m) / temperature) for z in logits]
    return [x / sum(w) for x in w]


def test_a_correct_solution_passes():
    verdict = check("softmax-temperature", reader_softmax)
    assert verdict and verdict.passed == verdict.total == 8
    assert repr(verdict).startswith("PASS softmax-temperature")
    assert check("end-to-end-accuracy", lambda r, a, b: _checked(r, a, b))


def _checked(r, a, b):
    if not all(0 <= x <= 1 for x in (r, a, b)):
        raise ValueError("probabilities only")
    return r * a + (1 - r) * b


def test_forgetting_the_temperature_is_reported_with_expected_and_got():
    def no_temperature(logits, temperature):
        return reader_softmax(logits, 1.0 if temperature > 0 else temperature)

    verdict = check("softmax-temperature", no_temperature)
    assert not verdict
    report = repr(verdict)
    assert "the same logits at T = 0.5" in report
    assert "expected [0.761905, 0.190476, 0.047619], got [0.571429, 0.285714, 0.142857]" in report
    assert "no_temperature" not in report  # the verdict shows cases, never code


def test_overflow_and_missing_validation_are_reported():
    def naive(logits, temperature):
        w = [math.exp(z / temperature) for z in logits]
        return [x / sum(w) for x in w]

    report = repr(check("softmax-temperature", naive))
    assert "large logits must not overflow" in report and "raised OverflowError" in report
    assert "T = 0 is not a temperature" in report and "raised ZeroDivisionError" in report
    assert "a negative temperature is refused" in report and "should raises ValueError" in report


def test_wrong_types_fail_cleanly():
    verdict = check("end-to-end-accuracy", lambda r, a, b: "0.785")
    assert verdict.passed == 0  # wrong type in the four value cases, no refusal in the other two
    assert "expected 0.785, got '0.785'" in repr(verdict)


def test_unknown_exercise_and_duplicate_names():
    with pytest.raises(KeyError, match="softmax-temperature"):
        check("no-such-exercise", print)
    with pytest.raises(TypeError, match="the function you wrote"):
        check("softmax-temperature", 3)
    with pytest.raises(ValueError, match="already registered"):
        register(Exercise("softmax-temperature", "f", (Case("x", (), 1),)))
    assert isinstance(EXERCISES["end-to-end-accuracy"].cases[-1].expected, Raises)


def test_chapter_4_checkers_accept_independent_solutions_and_reject_off_by_one():
    def chunks_needed(n, size, overlap):
        if overlap >= size:
            raise ValueError("overlap must be below size")
        return 1 if n <= size else -(-(n - size) // (size - overlap)) + 1

    def cut_prob(span, size, overlap):
        if overlap >= size:
            raise ValueError("overlap must be below size")
        if span > size:
            return 1
        return max(0, span - 1 - overlap) / (size - overlap)

    assert check("chunk-count", chunks_needed)
    assert check("cut-probability", cut_prob)
    floor_instead = repr(check("chunk-count", lambda n, s, o: 1 if n <= s else (n - s) // (s - o) + 1 if o < s else 0))
    assert "expected 7, got 6" in floor_instead
    no_minus_one = repr(check("cut-probability", lambda L, W, o: min(1, max(0, L - o) / (W - o))))
    assert "a one-word span is never cut" in no_minus_one


def test_chapter_3_span_containment_accepts_a_correct_rule_and_names_the_strict_one():
    def contains(chunk_start, chunk_end, span_start, span_end):
        # an independent solution for non-empty spans: the span's characters are a subset of the chunk's
        if chunk_end < chunk_start or span_end < span_start:
            raise ValueError("a range's end must not come before its start")
        return set(range(span_start, span_end)) <= set(range(chunk_start, chunk_end))

    verdict = check("span-containment", contains)
    assert verdict and verdict.passed == verdict.total == 8

    def strict(chunk_start, chunk_end, span_start, span_end):
        if chunk_end < chunk_start or span_end < span_start:
            raise ValueError("a range's end must not come before its start")
        return chunk_start < span_start and span_end < chunk_end

    verdict = check("span-containment", strict)
    report = repr(verdict)
    assert not verdict and verdict.passed == 7
    assert "equal ranges: the chunk is exactly the span" in report
    assert "contains(10, 20, 10, 20) expected True, got False" in report

    unchecked = repr(check("span-containment", lambda cs, ce, ss, se: cs <= ss and se <= ce))
    assert "a chunk whose end comes before its start is refused" in unchecked
    assert "should raises ValueError" in unchecked


def test_bm25_term_checker():
    def bm25_term(f, n, N, length, average_length, k1=1.5, b=0.75):
        if not 0 <= n <= N or not 0 <= b <= 1:
            raise ValueError("out of range")
        idf = math.log((N + 1) / (n + 0.5))  # the same as ln(1 + (N - n + 0.5)/(n + 0.5))
        return idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average_length))

    assert check("bm25-term", bm25_term)

    def classic_idf(f, n, N, length, average_length, k1=1.5, b=0.75):
        if not 0 <= n <= N or not 0 <= b <= 1:
            raise ValueError("out of range")
        return math.log((N - n + 0.5) / (n + 0.5)) * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average_length))

    report = repr(check("bm25-term", classic_idf))
    assert "case 1 (moons in d1 of the worked example)" in report and "got 0\n" in report


def test_ndcg_checker_catches_the_ideal_from_the_retrieved_list():
    def ndcg(ranking, gains, k):
        if k < 1:
            raise ValueError("k must be at least 1")
        dcg = sum(gains.get(d, 0) / math.log2(r + 2) for r, d in enumerate(ranking[:k]))
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(gains.values(), reverse=True)[:k]))
        return dcg / ideal if ideal else 0.0

    assert check("ndcg-at-k", ndcg)

    def ideal_of_retrieved(ranking, gains, k):
        if k < 1:
            raise ValueError("k must be at least 1")
        got = [gains.get(d, 0) for d in ranking[:k]]
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(got))
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(got, reverse=True)))
        return dcg / ideal if ideal else 0.0

    report = repr(check("ndcg-at-k", ideal_of_retrieved))
    assert "the ideal comes from the collection" in report and "got 0.5\n" in report


def test_ivf_lists_checker():
    def best_lists(n, probes):
        # an independent solution: the minimum of L + p n / L found by its defining property
        if n < 1 or probes < 1:
            raise ValueError("n and probes must be at least 1")
        lists = (probes * n) ** 0.5
        return lists, 2 * lists

    verdict = check("ivf-lists", best_lists)
    assert verdict and verdict.passed == verdict.total == 8

    def no_factor_two(n, probes):
        if n < 1 or probes < 1:
            raise ValueError("n and probes must be at least 1")
        return (probes * n) ** 0.5, (probes * n) ** 0.5

    report = repr(check("ivf-lists", no_factor_two))
    assert "a perfect square: n = 10,000, p = 4" in report and "expected (200, 400), got (200, 200)" in report

    def n_over_p(n, probes):
        if n < 1 or probes < 1:
            raise ValueError("n and probes must be at least 1")
        return (n / probes) ** 0.5, 2 * (n / probes) ** 0.5

    report = repr(check("ivf-lists", n_over_p))
    assert "case 1 (n = 100,000, p = 8: L* = sqrt(800,000))" in report and "got (111.803, 223.607)" in report
    assert "one probe: n = 10,000, p = 1" not in report  # with p = 1 the two formulas agree

    unchecked = repr(check("ivf-lists", lambda n, p: ((p * n) ** 0.5, 2 * (p * n) ** 0.5)))
    assert "zero probes are refused" in unchecked and "should raises ValueError" in unchecked


def test_rrf_checker():
    def rrf(rankings, c):
        if c < 0:
            raise ValueError("c must be at least 0")
        scores = {}
        for ranking in rankings:
            for rank, item in enumerate(ranking, start=1):
                scores[item] = scores.get(item, 0) + 1 / (c + rank)
        return sorted(scores.items(), key=lambda p: (-p[1], p[0]))

    assert check("rrf", rrf)

    def zero_based(rankings, c):
        if c < 0:
            raise ValueError("c must be at least 0")
        scores = {}
        for ranking in rankings:
            for rank, item in enumerate(ranking):
                scores[item] = scores.get(item, 0) + 1 / (c + rank + 1e-12)
        return sorted(scores.items(), key=lambda p: (-p[1], p[0]))

    assert "the worked example, c = 10" in repr(check("rrf", zero_based))
