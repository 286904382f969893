"""The graded-exercise mechanism: right answers pass, wrong ones are named with expected
vs got."""

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
    assert (
        "expected [0.761905, 0.190476, 0.047619], got [0.571429, 0.285714, 0.142857]"
        in report
    )
    assert "no_temperature" not in report  # the verdict shows cases, never code


def test_overflow_and_missing_validation_are_reported():
    def naive(logits, temperature):
        w = [math.exp(z / temperature) for z in logits]
        return [x / sum(w) for x in w]

    report = repr(check("softmax-temperature", naive))
    assert (
        "large logits must not overflow" in report and "raised OverflowError" in report
    )
    assert (
        "T = 0 is not a temperature" in report and "raised ZeroDivisionError" in report
    )
    assert (
        "a negative temperature is refused" in report
        and "should raises ValueError" in report
    )


def test_wrong_types_fail_cleanly():
    verdict = check("end-to-end-accuracy", lambda r, a, b: "0.785")
    assert (
        verdict.passed == 0
    )  # wrong type in the four value cases, no refusal in the other two
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
    floor_instead = repr(
        check(
            "chunk-count",
            lambda n, s, o: 1 if n <= s else (n - s) // (s - o) + 1 if o < s else 0,
        )
    )
    assert "expected 7, got 6" in floor_instead
    no_minus_one = repr(
        check("cut-probability", lambda L, W, o: min(1, max(0, L - o) / (W - o)))
    )
    assert "a one-word span is never cut" in no_minus_one


def test_chapter_3_span_containment_accepts_a_correct_rule_and_names_the_strict_one():
    def contains(chunk_start, chunk_end, span_start, span_end):
        # an independent solution for non-empty spans: the span's characters are a
        # subset of the chunk's
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

    unchecked = repr(
        check("span-containment", lambda cs, ce, ss, se: cs <= ss and se <= ce)
    )
    assert "a chunk whose end comes before its start is refused" in unchecked
    assert "should raises ValueError" in unchecked


def test_bm25_term_checker():
    def bm25_term(f, n, N, length, average_length, k1=1.5, b=0.75):
        if not 0 <= n <= N or not 0 <= b <= 1:
            raise ValueError("out of range")
        idf = math.log(
            (N + 1) / (n + 0.5)
        )  # the same as ln(1 + (N - n + 0.5)/(n + 0.5))
        return idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average_length))

    assert check("bm25-term", bm25_term)

    def classic_idf(f, n, N, length, average_length, k1=1.5, b=0.75):
        if not 0 <= n <= N or not 0 <= b <= 1:
            raise ValueError("out of range")
        return (
            math.log((N - n + 0.5) / (n + 0.5))
            * f
            * (k1 + 1)
            / (f + k1 * (1 - b + b * length / average_length))
        )

    report = repr(check("bm25-term", classic_idf))
    assert (
        "case 1 (moons in d1 of the worked example)" in report and "got 0\n" in report
    )


def test_ndcg_checker_catches_the_ideal_from_the_retrieved_list():
    def ndcg(ranking, gains, k):
        if k < 1:
            raise ValueError("k must be at least 1")
        dcg = sum(gains.get(d, 0) / math.log2(r + 2) for r, d in enumerate(ranking[:k]))
        ideal = sum(
            g / math.log2(r + 2)
            for r, g in enumerate(sorted(gains.values(), reverse=True)[:k])
        )
        return dcg / ideal if ideal else 0.0

    assert check("ndcg-at-k", ndcg)

    def ideal_of_retrieved(ranking, gains, k):
        if k < 1:
            raise ValueError("k must be at least 1")
        got = [gains.get(d, 0) for d in ranking[:k]]
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(got))
        ideal = sum(
            g / math.log2(r + 2) for r, g in enumerate(sorted(got, reverse=True))
        )
        return dcg / ideal if ideal else 0.0

    report = repr(check("ndcg-at-k", ideal_of_retrieved))
    assert "the ideal comes from the collection" in report and "got 0.5\n" in report


def test_ivf_lists_checker():
    def best_lists(n, probes):
        # an independent solution: the minimum of L + p n / L found by its defining
        # property
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
    assert (
        "a perfect square: n = 10,000, p = 4" in report
        and "expected (200, 400), got (200, 200)" in report
    )

    def n_over_p(n, probes):
        if n < 1 or probes < 1:
            raise ValueError("n and probes must be at least 1")
        return (n / probes) ** 0.5, 2 * (n / probes) ** 0.5

    report = repr(check("ivf-lists", n_over_p))
    assert (
        "case 1 (n = 100,000, p = 8: L* = sqrt(800,000))" in report
        and "got (111.803, 223.607)" in report
    )
    assert (
        "one probe: n = 10,000, p = 1" not in report
    )  # with p = 1 the two formulas agree

    unchecked = repr(
        check("ivf-lists", lambda n, p: ((p * n) ** 0.5, 2 * (p * n) ** 0.5))
    )
    assert (
        "zero probes are refused" in unchecked
        and "should raises ValueError" in unchecked
    )


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


def test_rank_r_error_checker():
    def truncation_error(singular_values, r):
        # an independent solution: the discarded values are all but the r largest
        values = list(singular_values)
        if r < 0 or r > len(values) or min(values, default=0) < 0:
            raise ValueError("bad input")
        discarded = sorted(values)[: len(values) - r]
        return math.hypot(*discarded) if discarded else 0.0

    verdict = check("rank-r-error", truncation_error)
    assert verdict and verdict.passed == verdict.total == 8

    def no_square_root(singular_values, r):
        values = sorted(singular_values, reverse=True)
        if r < 0 or r > len(values) or min(values, default=0) < 0:
            raise ValueError("bad input")
        return sum(v * v for v in values[r:])

    report = repr(check("rank-r-error", no_square_root))
    assert (
        "case 1 ([4, 3], r = 1: the 3 is discarded)" in report
        and "expected 3, got 9" in report
    )

    def kept_instead_of_discarded(singular_values, r):
        values = sorted(singular_values, reverse=True)
        if r < 0 or r > len(values) or min(values, default=0) < 0:
            raise ValueError("bad input")
        return math.sqrt(sum(v * v for v in values[:r]))

    report = repr(check("rank-r-error", kept_instead_of_discarded))
    assert (
        "[10, 6, 3, 2], r = 1: sqrt(36 + 9 + 4)" in report
        and "expected 7, got 10" in report
    )

    def unsorted(singular_values, r):
        values = list(singular_values)
        if r < 0 or r > len(values) or min(values, default=0) < 0:
            raise ValueError("bad input")
        return math.sqrt(sum(v * v for v in values[r:]))

    verdict = check("rank-r-error", unsorted)
    assert (
        verdict.passed == 7
        and "unsorted [5, 3, 4], r = 2" in repr(verdict)
        and "got 4" in repr(verdict)
    )


def test_dense_cosine_checker():
    def dense_cosines(query, vectors):
        # an independent solution: normalise both sides first, then take dot products
        def unit(v):
            length = math.hypot(*v)
            if length == 0:
                raise ValueError("a zero vector has no direction")
            return [x / length for x in v]

        q = unit(query)
        out = []
        for v in vectors:
            if len(v) != len(q):
                raise ValueError("dimensions differ")
            out.append(sum(a * b for a, b in zip(q, unit(v))))
        return out

    verdict = check("dense-cosine", dense_cosines)
    assert verdict and verdict.passed == verdict.total == 8

    def chunk_length_only(query, vectors):
        # divides by the chunk's length but forgets the query's: right only for a unit
        # query
        out = []
        for v in vectors:
            if len(v) != len(query) or math.hypot(*v) == 0 or math.hypot(*query) == 0:
                raise ValueError("bad input")
            out.append(sum(a * b for a, b in zip(query, v)) / math.hypot(*v))
        return out

    report = repr(check("dense-cosine", chunk_length_only))
    # the first case's query has unit length, so that case passes
    assert "four two-dimensional vectors" not in report
    assert (
        "a query of length 5 must be divided by its length" in report
        and "expected [0.96, 1], got [4.8, 5]" in report
    )

    def zip_silently(query, vectors):
        # zip truncates: a 3-D vector against a 2-D query gives a number instead of an
        # error
        return [
            sum(a * b for a, b in zip(query, v))
            / (math.hypot(*query) * math.hypot(*v[: len(query)]))
            for v in vectors
        ]

    report = repr(check("dense-cosine", zip_silently))
    assert (
        "a vector of another dimension is refused" in report
        and "should raises ValueError" in report
    )


def test_evidence_budget_checker():
    def evidence_tokens(limit, instructions, question, reserve, margin):
        # an independent solution: the sum of the fixed parts must fit under the limit
        fixed = [instructions, question, reserve, margin]
        if limit < 0 or min(fixed) < 0 or sum(fixed) > limit:
            raise ValueError("parts must be non-negative and fit the context limit")
        return limit - sum(fixed)

    verdict = check("evidence-budget", evidence_tokens)
    assert verdict and verdict.passed == verdict.total == 8

    def no_negative_check(limit, instructions, question, reserve, margin):
        left = limit - instructions - question - reserve - margin
        if left < 0:
            raise ValueError("over budget")
        return left

    report = repr(check("evidence-budget", no_negative_check))
    assert (
        "a negative question length is refused" in report
        and "should raises ValueError" in report
    )
    assert "over-committed" not in report

    forgot_margin = repr(check("evidence-budget", lambda c, i, q, o, m: c - i - q - o))
    assert (
        "the reference example" in forgot_margin
        and "expected 2400, got 2500" in forgot_margin
    )


def test_support_checker_counts_repeats():
    from collections import Counter

    def support(claim_terms, source_terms):
        # an independent solution: count the claim's terms by kind, keep the counts of
        # those the source has
        if len(claim_terms) == 0:
            raise ValueError("empty claim")
        counts = Counter(claim_terms)
        return sum(n for term, n in counts.items() if term in set(source_terms)) / sum(
            counts.values()
        )

    verdict = check("support", support)
    assert verdict and verdict.passed == verdict.total == 9

    def distinct_terms(claim_terms, source_terms):
        if not claim_terms:
            raise ValueError("empty claim")
        return len(set(claim_terms) & set(source_terms)) / len(set(claim_terms))

    report = repr(check("support", distinct_terms))
    assert (
        "repeats in the claim count: titan twice of 3 terms" in report
        and "expected 0.666667, got 0.5" in report
    )
    assert (
        "seed 004's second claim" not in report
    )  # with no repeated claim term the two agree

    report = repr(
        check("support", lambda c, s: sum(t in s for t in c) / len(c) if c else 0.0)
    )
    assert (
        "a claim with no terms is refused" in report
        and "should raises ValueError" in report
    )


def test_rag_token_checker():
    def rag_token(prior, rows):
        # an independent solution in log space, token by token
        if abs(sum(prior) - 1) > 1e-9 or min(prior) < 0:
            raise ValueError("the prior must be a distribution")
        if len(rows) != len(prior) or any(not 0 <= a <= 1 for row in rows for a in row):
            raise ValueError("one row of probabilities per chunk")
        total = 0.0
        for i in range(len(rows[0])):
            total += math.log(sum(p * row[i] for p, row in zip(prior, rows)))
        return math.exp(total)

    verdict = check("rag-token", rag_token)
    assert verdict and verdict.passed == verdict.total == 9

    def rag_sequence_instead(prior, rows):
        if (
            abs(sum(prior) - 1) > 1e-9
            or len(rows) != len(prior)
            or any(a > 1 for row in rows for a in row)
        ):
            raise ValueError("bad input")
        return sum(p * math.prod(row) for p, row in zip(prior, rows))

    report = repr(check("rag-token", rag_sequence_instead))
    assert "the worked example" in report and "got 0.235" in report
    assert (
        "each token from its own chunk: 0.55 x 0.55" in report
        and "expected 0.3025, got 0.1" in report
    )
    assert (
        "one chunk" not in report and "one token" not in report
    )  # the two models agree there


def test_composition_from_outcomes_checker():
    def compose(outcomes):
        # an independent solution: count the four cells of the 2 x 2 table
        if len(outcomes) == 0:
            raise ValueError("no outcomes")
        cells = {(e, c): 0 for e in (True, False) for c in (True, False)}
        for evidence, correct in outcomes:
            cells[bool(evidence), bool(correct)] += 1
        hits = cells[True, True] + cells[True, False]
        misses = cells[False, True] + cells[False, False]
        n = hits + misses
        a = cells[True, True] / hits if hits else 0.0
        b = cells[False, True] / misses if misses else 0.0
        return hits / n, a, b, (cells[True, True] + cells[False, True]) / n

    verdict = check("composition-from-outcomes", compose)
    assert verdict and verdict.passed == verdict.total == 8

    def joint(outcomes):
        # the slip: P(C and R) instead of P(C | R)
        if not outcomes:
            raise ValueError("no outcomes")
        n = len(outcomes)
        return (
            sum(e for e, _ in outcomes) / n,
            sum(e and c for e, c in outcomes) / n,
            sum(c and not e for e, c in outcomes) / n,
            sum(c for _, c in outcomes) / n,
        )

    report = repr(check("composition-from-outcomes", joint))
    assert (
        "three of four with evidence, two of those right" in report
        and "expected (0.75, 0.666667, 0, 0.5)" in report
    )
    assert (
        "one question, right with its evidence" not in report
    )  # with r = 1 and one question they agree

    unchecked = repr(
        check("composition-from-outcomes", lambda o: compose(o) if o else (0, 0, 0, 0))
    )
    assert (
        "an empty list is refused" in unchecked
        and "should raises ValueError" in unchecked
    )


def test_coverage_checker():
    def coverage(question_terms, sentence_terms, idf, needs_number):
        # an independent solution: distinct terms by set, the number test by a regular
        # expression
        import re

        terms = set(question_terms)
        if any(idf[t] < 0 for t in terms):
            raise ValueError("negative weight")
        total = math.fsum(idf[t] for t in terms)
        covered = math.fsum(idf[t] for t in terms & set(sentence_terms))
        value = covered / total if total else 0.0
        return (
            value - 0.5
            if needs_number and not re.search(r"\d", " ".join(sentence_terms))
            else value
        )

    verdict = check("coverage", coverage)
    assert verdict and verdict.passed == verdict.total == 9

    def counts_repeats(question_terms, sentence_terms, idf, needs_number):
        if any(w < 0 for w in idf.values()):
            raise ValueError("negative weight")
        value = sum(idf[t] for t in question_terms if t in sentence_terms) / sum(
            idf[t] for t in question_terms
        )
        return (
            value - 0.5
            if needs_number and not any(c.isdigit() for t in sentence_terms for c in t)
            else value
        )

    report = repr(check("coverage", counts_repeats))
    assert (
        "a repeated question term counts once" in report
        and "d1 of the worked example" not in report
    )

    def no_penalty(question_terms, sentence_terms, idf, needs_number):
        if any(w < 0 for w in idf.values()):
            raise ValueError("negative weight")
        terms = set(question_terms)
        return sum(idf[t] for t in terms & set(sentence_terms)) / sum(
            idf[t] for t in terms
        )

    report = repr(check("coverage", no_penalty))
    assert (
        "a number question meets a sentence without a number" in report
        and "expected 0, got 0.5" in report
    )


def test_visible_chunks_checker():
    levels = {"public", "staff", "finance"}

    def visible_chunks(chunk_docs, doc_access, user_levels):
        # an independent solution: look each chunk's document up, refuse what cannot be
        # decided
        if not set(doc_access.values()) <= levels:
            raise ValueError("unknown access level")
        result = []
        for position, doc in enumerate(chunk_docs):
            if doc not in doc_access:
                raise ValueError(f"no access level for {doc}")
            if doc_access[doc] in user_levels:
                result.append(position)
        return result

    assert check("visible-chunks", visible_chunks)

    def public_always(chunk_docs, doc_access, user_levels):
        # a typical mistake: everyone may read public documents, whatever levels they
        # hold
        return visible_chunks(chunk_docs, doc_access, set(user_levels) | {"public"})

    report = repr(check("visible-chunks", public_always))
    assert (
        "staff alone does not imply public" in report
        and "expected [0, 2], got [0, 1, 2]" in report
    )
    assert "a user without levels reads nothing" in report

    def fail_open(chunk_docs, doc_access, user_levels):
        # another: an unlabelled document is skipped silently instead of refused
        return [i for i, d in enumerate(chunk_docs) if doc_access.get(d) in user_levels]

    report = repr(check("visible-chunks", fail_open))
    assert (
        "has no access level is refused" in report
        and "should raises ValueError" in report
    )


def test_a_verdict_prints_and_displays_wrapped_to_the_book_width():
    from ragbook.show import WIDTH

    verdict = check("softmax-temperature", lambda logits, t: [1.0] * len(logits))
    report, shown = repr(verdict), str(verdict)
    assert any(len(line) > WIDTH for line in report.split("\n"))  # a long failure
    assert all(len(line) <= WIDTH for line in shown.split("\n"))
    assert shown.split() == report.split()
    pretty = []
    verdict._repr_pretty_(type("Printer", (), {"text": pretty.append})(), False)
    assert pretty == [shown]
