"""Grounding checks: citations, support, numbers and quotes (chapter 12).

- A citation is a source number in square brackets, ``[1]``. An answer is *grounded*
  (the minimal rule) when it cites at least one source and every number it cites names a
  source of the prompt.
- A claim is a sentence of the answer. Its *support* is the share of its analysed terms
  (citation markers removed, repeats counted) that occur in the sources it cites. A
  claim passes when it cites at least one existing source, its support is at least
  ``support_threshold`` (:data:`SUPPORT_THRESHOLD`, 0.75, by default), every number in
  it occurs in a cited source, and every quoted string occurs in a cited source.

These are necessary checks, not proof: a claim can pass and still misstate its source,
and a true claim can fail because it paraphrases. A citation is not an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from .. import validate
from ..indexing.text import analyze, normalize, split_sentences, tokenize

__all__ = [
    "CITATION",
    "SUPPORT_THRESHOLD",
    "citations",
    "is_grounded",
    "ClaimCheck",
    "check_claim",
    "check_answer",
    "numbers_in",
]

CITATION = re.compile(r"\[(\d+)\]")
_LEADING_CITATIONS = re.compile(r"\s*(?:\[\d+\][\s.,;:]*)+")
SUPPORT_THRESHOLD = 0.75  # the share of a claim's terms its cited sources must contain
_QUOTE = re.compile(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]")
_NUMBER = re.compile(r"^\d+(?:[.:]\d+)*$")


def citations(text: str) -> list[int]:
    """Every cited source number, in order of appearance (repeats kept)."""
    return [int(m.group(1)) for m in CITATION.finditer(validate.text(text, "text"))]


def is_grounded(answer: str, n_sources: int) -> bool:
    """At least one citation, and every cited number between 1 and ``n_sources``."""
    cited = citations(answer)
    n_sources = validate.count(n_sources, "n_sources")
    return bool(cited) and all(1 <= c <= n_sources for c in cited)


def numbers_in(text: str) -> list[str]:
    """The numbers among the text's tokens (``87.969``, ``4879`` for 4,879, ``3:2``)."""
    return [t for t in tokenize(validate.text(text, "text")) if _NUMBER.match(t)]


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on one claim: what it cites, its support, and what is missing."""

    claim: str
    cited: tuple[int, ...]
    missing_sources: tuple[int, ...]
    support: float
    unsupported_numbers: tuple[str, ...]
    unsupported_quotes: tuple[str, ...]
    support_threshold: float

    @property
    def supported(self) -> bool:
        return (
            bool(self.cited)
            and not self.missing_sources
            and self.support >= self.support_threshold
            and not self.unsupported_numbers
            and not self.unsupported_quotes
        )


def check_claim(
    claim: str, sources: Mapping[int, str], support_threshold: float = SUPPORT_THRESHOLD
) -> ClaimCheck:
    """Check one claim against the texts of the sources, numbered as in the prompt."""
    support_threshold = validate.real(
        support_threshold, "support_threshold", minimum=0, maximum=1
    )
    validate.text(claim, "claim")
    if not isinstance(sources, Mapping):
        raise TypeError(
            f"sources must map source numbers to texts, got {type(sources).__name__}"
        )
    cited = tuple(dict.fromkeys(citations(claim)))
    missing = tuple(c for c in cited if c not in sources)
    present = [sources[c] for c in cited if c in sources]
    bare = CITATION.sub(" ", claim)
    terms = analyze(bare)
    source_terms = {t for text in present for t in analyze(text)}
    support = (
        sum(t in source_terms for t in terms) / len(terms) if terms and present else 0.0
    )
    source_tokens = {t for text in present for t in tokenize(text)}
    numbers = tuple(
        n for n in dict.fromkeys(numbers_in(bare)) if n not in source_tokens
    )
    source_text = " ".join(normalize(text) for text in present)
    quotes = tuple(q for q in _QUOTE.findall(bare) if normalize(q) not in source_text)
    return ClaimCheck(
        claim, cited, missing, support, numbers, quotes, support_threshold
    )


def check_answer(
    answer: str,
    sources: Sequence[str] | Mapping[int, str],
    support_threshold: float = SUPPORT_THRESHOLD,
) -> list[ClaimCheck]:
    """Split the answer into claims (sentences) and check each; sources as a list are
    numbered from 1.

    A citation written after the sentence's full stop ("... 224.7 Earth days. [1]", as
    language models often write it) belongs to that sentence: a piece of the answer that
    holds nothing but citations is joined to the claim before it."""
    numbered = (
        dict(enumerate(validate.texts(sources, "sources"), start=1))
        if not isinstance(sources, Mapping)
        else dict(sources)
    )
    claims: list[str] = []
    for sentence in split_sentences(answer):
        text = sentence.text
        leading = _LEADING_CITATIONS.match(text)
        if (
            claims and leading
        ):  # "... days. [2] The next ...": [2] ends the claim before
            claims[-1] = f"{claims[-1]} {leading.group(0).strip()}"
            text = text[leading.end() :]
        if not CITATION.sub("", text).strip(" .,;:"):
            if claims:
                claims[-1] = f"{claims[-1]} {text.strip()}".rstrip()
                continue
        claims.append(text)
    return [check_claim(claim, numbered, support_threshold) for claim in claims]
