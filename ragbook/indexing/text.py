"""The analyzer the whole book uses: normalisation, tokens, stopwords, sentences and
phrases.

Introduced in chapter 2 and used from chapter 3 on. One analyzer for chunks and queries
alike: retrieval compares the two, so they must be cut into terms the same way.

- ``normalize``: Unicode NFKD, accents stripped, lowercased, typographic quotes and
  dashes made plain.
- ``tokenize``: words and numbers kept whole (``224.7``, ``87.969``, ``4,879`` ->
  ``4879``, ``3:2``).
- ``analyze``: ``tokenize`` without the stopwords of :data:`STOPWORDS`.
- ``split_sentences``: sentence ranges that know abbreviations, initials and decimal
  points.
- ``contains_phrase``: whether a phrase occurs as consecutive tokens.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .. import validate

__all__ = [
    "STOPWORDS",
    "ABBREVIATIONS",
    "normalize",
    "tokenize",
    "analyze",
    "Analyzer",
    "Sentence",
    "split_sentences",
    "PARAGRAPH_BREAK",
    "contains_phrase",
]

# Function words that carry no topic: articles, pronouns, auxiliaries, prepositions,
# conjunctions, question words. Number words ("two", "four") and content verbs
# ("orbits", "comes") are kept: "Mars has two small moons" must still say how many.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves
    """.split()
)

# Words that end in a full stop without ending a sentence (compared lowercased, without
# the stop).
ABBREVIATIONS: frozenset[str] = frozenset(
    """
    mr mrs ms dr prof sr jr st mt vs etc e.g i.e approx ca cf al fig vol jan feb apr jun
    jul aug sep sept oct nov dec
    """.split()
)

_QUOTES_AND_DASHES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)

_TOKEN = re.compile(
    r"""
      \d+(?:,\d{3})+(?:\.\d+)?(?![\d,])   # thousands separators: 4,879 or 384,400.5
    | \d+(?:[.:]\d+)+                     # a decimal or a ratio: 224.7, 87.969, 3:2
    | [^\W_]+(?:'[^\W_]+)*                # a word (letters, digits), inner apostrophes
    """,
    re.VERBOSE,
)


def normalize(text: str) -> str:
    """Lowercase ``text``, strip accents (NFKD, combining marks dropped) and plain its
    quotes and dashes.

    ``normalize("Spärck Jones’s Ω")`` is ``"sparck jones's ω"``. Idempotent: normalising
    twice changes nothing more.
    """
    if not isinstance(text, str):
        raise TypeError(f"normalize expects a str, got {type(text).__name__}")
    decomposed = unicodedata.normalize("NFKD", text.translate(_QUOTES_AND_DASHES))
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    # casefold then NFKC-free recomposition: lower() of some characters produces new
    # combining marks
    lowered = unicodedata.normalize("NFKD", stripped.lower())
    return "".join(ch for ch in lowered if not unicodedata.combining(ch))


def _clean(token: str) -> str:
    if "," in token:  # only a thousands-separated number can contain a comma
        return token.replace(",", "")
    if token.endswith("'s"):  # possessive: "jupiter's" is about jupiter
        return token[:-2]
    return token


def tokenize(text: str) -> list[str]:
    """All tokens of ``text`` in order, after :func:`normalize`, stopwords included.

    A token is a number or a word. Numbers stay whole: ``224.7`` and ``3:2`` are one
    token each, and thousands separators are removed (``4,879`` becomes ``4879``), so a
    number reads the same however it was grouped. A sign is not part of a number:
    ``-173`` gives ``173``. Hyphens and slashes separate words (``spin-orbit`` gives
    ``spin`` and ``orbit``), and a possessive ``'s`` is dropped.
    """
    tokens = (_clean(m.group()) for m in _TOKEN.finditer(normalize(text)))
    return [t for t in tokens if t]


def analyze(text: str) -> list[str]:
    """The terms of ``text``: :func:`tokenize` without :data:`STOPWORDS`, in order,
    repeats kept.

    ``analyze("What moons does Mars have?")`` is ``["moons", "mars"]``.
    """
    return [t for t in tokenize(text) if t not in STOPWORDS]


class Analyzer:
    """A configurable analyzer: :func:`tokenize`, then drop ``stopwords``, then
    optionally stem.

    ``Analyzer()`` behaves exactly like :func:`analyze`. ``Analyzer(stemmer="english")``
    also reduces every term to its Snowball (Porter2) stem with PyStemmer, so "orbits",
    "orbiting" and "orbit" become one term; the book keeps stemming off, and the
    benchmark of chapter 5 turns it on. Numbers are never stemmed.
    """

    def __init__(
        self,
        stopwords: frozenset[str] | set[str] = STOPWORDS,
        stemmer: str | None = None,
    ):
        self.stopwords = frozenset(validate.texts(stopwords, "stopwords"))
        if stemmer is not None:
            validate.text(stemmer, "stemmer")
        self.stemmer_name = stemmer
        self._stem = None
        if stemmer is not None:
            try:
                import Stemmer
            except ImportError as error:
                raise ImportError(
                    "stemming needs the PyStemmer package: pip install 'ragbook[stem]'"
                ) from error
            try:
                self._stem = Stemmer.Stemmer(stemmer).stemWord
            except KeyError as error:
                known = ", ".join(sorted(Stemmer.algorithms()))
                raise ValueError(
                    f"unknown stemmer {stemmer!r}; PyStemmer knows: {known}"
                ) from error

    def __call__(self, text: str) -> list[str]:
        terms = [t for t in tokenize(text) if t not in self.stopwords]
        if self._stem is None:
            return terms
        stem = self._stem
        return [t if t[0].isdigit() else stem(t) for t in terms]

    def __repr__(self) -> str:
        return (
            f"Analyzer(stopwords={len(self.stopwords)} words, "
            f"stemmer={self.stemmer_name!r})"
        )


@dataclass(frozen=True)
class Sentence:
    """A sentence of a text: ``text[start:end]``, without the whitespace around it."""

    start: int
    end: int
    text: str


# A candidate boundary: terminal punctuation, optional closing quotes or brackets, then
# whitespace.
_BOUNDARY = re.compile(r"[.!?]+['\"\u2019\u201d)\]]*(?=\s)")
PARAGRAPH_BREAK = re.compile(
    r"\n[ \t]*\n"
)  # a blank line (spaces or tabs allowed) between paragraphs


def _ends_sentence(text: str, stop: int, end: int) -> bool:
    """Whether the punctuation ``text[stop:end]`` closes a sentence."""
    if text[stop] != ".":
        return True  # ! and ? always end a sentence
    word_start = stop
    while (
        word_start > 0
        and not text[word_start - 1].isspace()
        and text[word_start - 1] not in "(\"'"
    ):
        word_start -= 1
    word = text[word_start:stop]
    if len(word) == 1 and word.isalpha() and word.isupper():
        return False  # an initial: "J. G. Galle"
    if word.lower().rstrip(".") in ABBREVIATIONS or word.lower() in ABBREVIATIONS:
        return False
    if "." in word and all(len(p) == 1 for p in word.split(".") if p):
        return False  # "U.S." or "e.g." written as a chain of letters and stops
    rest = text[end:].lstrip()
    if rest and rest[0].islower():
        return False  # the next word continues the sentence
    return True


def split_sentences(text: str) -> list[Sentence]:
    """Split ``text`` into sentences, in order, each without surrounding whitespace.

    A sentence ends at ``.``, ``!`` or ``?`` (with any closing quotes) followed by
    whitespace, unless the word before the full stop is an abbreviation
    (:data:`ABBREVIATIONS`), an initial ("J. G. Galle") or a dotted chain ("e.g."), or
    the next word starts in lowercase. A decimal point is never followed by whitespace,
    so ``224.7`` is never split. A blank line always ends a sentence.

    Every non-whitespace character of ``text`` lies in exactly one sentence.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects a str, got {type(text).__name__}")
    cuts: set[int] = set()
    for m in _BOUNDARY.finditer(text):
        if _ends_sentence(text, m.start(), m.end()):
            cuts.add(m.end())
    for m in PARAGRAPH_BREAK.finditer(text):
        cuts.add(m.start())
    sentences: list[Sentence] = []
    begin = 0
    for cut in sorted(cuts) + [len(text)]:
        piece = text[begin:cut]
        stripped = piece.strip()
        if stripped:
            start = begin + (len(piece) - len(piece.lstrip()))
            end = start + len(stripped)
            sentences.append(Sentence(start, end, text[start:end]))
        begin = cut
    return sentences


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether the tokens of ``phrase`` occur consecutively among the tokens of
    ``text``.

    Matching is on :func:`tokenize` output, so case, accents and punctuation do not
    matter but word boundaries do: ``contains_phrase("Marshal Plan", "mars")`` is false.
    An empty phrase raises.
    """
    needle = tokenize(phrase)
    if not needle:
        raise ValueError(
            "contains_phrase needs a phrase with at least one word or number, "
            f"got {phrase!r}"
        )
    hay = tokenize(text)
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))
