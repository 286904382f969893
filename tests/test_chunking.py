"""Chunkers against the reference texts' counts, the cut-probability formula, and their
invariants."""

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from ragbook.indexing.chunking import (
    chunk_count,
    cl100k_encoding,
    cut_probability,
    recursive_chunks,
    section_chunks,
    sentence_chunks,
    token_windows,
    word_windows,
)
from ragbook.corpus.documents import parse_markdown
from ragbook.indexing.text import split_sentences


def words_document(n, doc_id="d"):
    return parse_markdown("# D\n\n" + " ".join(f"w{i}" for i in range(n)), doc_id)


# ---- seed 001 and 003 counts ---------------------------------------------------------
def test_chunk_count_reference_numbers():
    assert chunk_count(1000, 200, 50) == 7  # ceil(800/150) + 1
    assert chunk_count(1000, 200, 0) == 5
    assert chunk_count(150, 200, 50) == 1
    assert chunk_count(600, 150, 30) == 5  # ceil(450/120) + 1 = ceil(3.75) + 1
    assert chunk_count(1000, 300, 50) == 4  # seed 003: windows at 0, 250, 500, 750


def test_word_windows_meet_the_reference_numbers():
    assert len(word_windows(words_document(1000), 200, 50)) == 7
    assert len(word_windows(words_document(1000), 200)) == 5
    assert len(word_windows(words_document(150), 200, 50)) == 1
    assert len(word_windows(words_document(600), 150, 30)) == 5


def test_seed_003_token_windows():
    encoding = cl100k_encoding()
    text = " ".join(["planet"] * 1000)
    assert len(encoding.encode(text)) == 1000
    chunks = token_windows(parse_markdown(text, "t"), 300, 50, headers=False)
    lengths = [len(encoding.encode(c.text)) for c in chunks]
    assert lengths == [
        300,
        300,
        300,
        250,
    ]  # starts 0, 250, 500, 750; the last is shorter
    starts = [len(encoding.encode(text[: c.start])) for c in chunks]
    assert starts == [0, 250, 500, 750]


def brute_force_windows(n, size, overlap):
    """Independent count: starts at multiples of the stride until a window reaches the
    last word."""
    count, start = 0, 0
    while True:
        count += 1
        if start + size >= n:
            return count
        start += size - overlap


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.integers(1, 60), st.data())
def test_word_windows_match_the_count_formula(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    chunks = word_windows(words_document(n), size, overlap)
    assert (
        len(chunks)
        == chunk_count(n, size, overlap)
        == brute_force_windows(n, size, overlap)
    )
    assert chunks[-1].text.split()[-1] == f"w{n - 1}"  # the last window reaches the end
    assert all(c.words == size for c in chunks[:-1])


def test_seed_002_trailing_fragments_are_not_emitted():
    # a loop over every start below n (without the stop) adds windows that lie inside
    # the previous one 500 words, W = 200, o = 50: the window at 300 already ends at
    # word 500; a start at 450 adds nothing
    naive_starts = list(range(0, 500, 150))
    assert naive_starts == [0, 150, 300, 450]
    chunks = word_windows(words_document(500), 200, 50)
    assert [c.text.split()[0] for c in chunks] == ["w0", "w150", "w300"]
    assert chunks[-1].text.split()[-1] == "w499"


# ---- cut probability -----------------------------------------------------------------
def test_cut_probability_by_hand():
    assert cut_probability(11, 100) == pytest.approx(10 / 100)
    assert cut_probability(30, 100, 29) == 0
    assert cut_probability(30, 100, 28) == pytest.approx(1 / 72)
    assert cut_probability(5, 4) == 1.0
    assert cut_probability(1, 10) == 0


@pytest.mark.parametrize(
    "span, size, overlap", [(5, 20, 0), (12, 30, 5), (8, 8, 3), (3, 10, 2), (20, 25, 0)]
)
def test_cut_probability_equals_the_share_of_cut_positions(span, size, overlap):
    """Slide a span over every start in a long document and count how often no window
    holds it."""
    stride = size - overlap
    n = size + 40 * stride
    chunks = word_windows(words_document(n), size, overlap)
    ranges = [(int(c.text.split()[0][1:]), int(c.text.split()[-1][1:])) for c in chunks]
    positions = range(0, 30 * stride)  # whole periods, far from the end
    cut = sum(
        not any(a <= p and p + span - 1 <= b for a, b in ranges) for p in positions
    )
    assert Fraction(cut, len(positions)) == Fraction(max(0, span - 1 - overlap), stride)
    assert cut / len(positions) == pytest.approx(cut_probability(span, size, overlap))


def test_cut_probability_against_a_simulation():
    rng = random.Random(7)
    size, overlap, span = 100, 10, 25
    stride = size - overlap
    trials, cut = 20000, 0
    for _ in range(trials):
        first = rng.randrange(0, 10**6)
        start = (
            first // stride
        ) * stride  # the last window start at or before the span
        cut += first + span > start + size
    assert abs(cut / trials - cut_probability(span, size, overlap)) < 0.01


# ---- invariants of every chunker -----------------------------------------------------
word = st.sampled_from(
    [
        "Mars",
        "orbit",
        "224.7",
        "J.",
        "Dr.",
        "the",
        "e.g.",
        "3:2",
        "moons",
        "Ceres",
        "it's",
        "über",
    ]
)
sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(word, min_size=1, max_size=14),
    st.sampled_from([".", "!", "?", "", "."]),
)
paragraph = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
section = st.lists(paragraph, min_size=1, max_size=4).map("\n\n".join)
markdown = st.builds(
    lambda lead, sections: (
        "# T\n\n"
        + lead
        + "".join(f"\n\n## H{i}\n\n{s}" for i, s in enumerate(sections))
    ),
    section,
    st.lists(section, max_size=4),
)

CHUNKERS = {
    "words 7/0": lambda d: word_windows(d, 7),
    "words 9/4": lambda d: word_windows(d, 9, 4),
    "sentences 12": lambda d: sentence_chunks(d, 12),
    "sections": lambda d: section_chunks(d),
    "recursive 10": lambda d: recursive_chunks(d, 10),
}
NON_OVERLAPPING = {"words 7/0", "sentences 12", "sections", "recursive 10"}


@settings(max_examples=120, deadline=None)
@given(markdown)
def test_chunks_lie_inside_their_document_in_order(text):
    doc = parse_markdown(text, "d")
    for name, chunker in CHUNKERS.items():
        chunks = chunker(doc)
        assert [c.id for c in chunks] == list(range(len(chunks)))
        for c in chunks:
            assert 0 <= c.start < c.end <= len(text), name
            assert c.text == text[c.start : c.end] and c.text == c.text.strip(), name
        assert all(a.start < b.start for a, b in zip(chunks, chunks[1:])), name
        if name in NON_OVERLAPPING:
            assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:])), name
            covered = set()
            for c in chunks:
                covered.update(range(c.start, c.end))
            for s in doc.sections:
                for i in range(s.start, s.end):
                    assert i in covered or text[i].isspace(), (name, text[i])


@settings(max_examples=120, deadline=None)
@given(markdown, st.integers(1, 30))
def test_sentence_chunks_stay_in_a_section_and_within_the_limit(text, limit):
    doc = parse_markdown(text, "d")
    for c in sentence_chunks(doc, limit):
        s = doc.sections[c.section]
        assert s.start <= c.start and c.end <= s.end
        assert (
            c.words <= limit or len(split_sentences(c.text)) == 1
        )  # only a single sentence may exceed it
    for c in recursive_chunks(doc, limit):
        s = doc.sections[c.section]
        assert s.start <= c.start and c.end <= s.end and c.words <= limit


def test_single_long_sentence_is_kept_whole():
    doc = parse_markdown("# T\n\nOne two three four five six. Seven.", "d")
    assert [c.text for c in sentence_chunks(doc, 3)] == [
        "One two three four five six.",
        "Seven.",
    ]
    assert [c.text for c in recursive_chunks(doc, 3)] == [
        "One two three",
        "four five six.",
        "Seven.",
    ]


def test_headers_name_title_and_section():
    doc = parse_markdown(
        "# Mercury\n\nLead text.\n\n## Orbit\n\nIt takes 87.969 Earth days.", "mercury"
    )
    chunks = sentence_chunks(doc, 50)
    assert [c.header for c in chunks] == ["Mercury", "Mercury: Orbit"]
    assert chunks[1].indexed_text == "Mercury: Orbit\nIt takes 87.969 Earth days."
    assert [c.header for c in sentence_chunks(doc, 50, headers=False)] == ["", ""]


def test_bad_input_is_refused():
    doc = words_document(10)
    with pytest.raises(
        ValueError, match="overlap \\(5\\) must be smaller than the window size \\(5\\)"
    ):
        word_windows(doc, 5, 5)
    with pytest.raises(ValueError, match="at least 1"):
        word_windows(doc, 0)
    with pytest.raises(ValueError, match="at least 0"):
        chunk_count(10, 5, -1)
    with pytest.raises(ValueError, match="no documents"):
        sentence_chunks([])
    with pytest.raises(ValueError, match="max_words"):
        recursive_chunks(doc, 0)
    with pytest.raises(TypeError, match="Document"):
        section_chunks(["plain text"])
    with pytest.raises(ValueError, match="at least 1 unit"):
        chunk_count(0, 5)
