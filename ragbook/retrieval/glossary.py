"""Query rewriting with a glossary: the definitions a retriever and a reader do not know
(chapter 14).

"How long is a year on Venus?" shares no content word with "The planet travels around
the Sun once every 224.7 Earth days". A language model bridges the two because it learnt
in pretraining that a planet's year is the time it takes to orbit the Sun once; BM25
cannot, and the MiniLM sentence embedder ranks the sentence about Venus's 117-day *solar
day* closer to the question than the sentence about its orbit (chapter 14 measures
both). A glossary supplies that piece of knowledge explicitly, the oldest form of query
expansion: each glossed term of the question has its definition appended,

    "How long is a year on Venus?"
        ->  "How long is a year on Venus? (year: the time to orbit the Sun once)"

and the rewritten text is what the retriever and the reader compare with the chunks. The
prompt keeps the question as asked. Terms are matched after
:func:`~ragbook.indexing.text.analyze`, so "Year" and "year" are one term, and a
question without a glossed term is returned unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .. import validate
from ..indexing.text import analyze

__all__ = ["Glossary", "ASTRONOMY"]


class Glossary:
    """Definitions of single terms, appended to a question that uses them.

    ``definitions`` maps a term (one word that the analyzer keeps, such as ``"year"``)
    to a non-empty definition. ``glossary(question)`` returns the question with
    ``(term: definition; ...)`` appended for the glossed terms it contains, in the order
    they occur.
    """

    def __init__(self, definitions: Mapping[str, str]):
        if not isinstance(definitions, Mapping):
            raise TypeError(
                "definitions must map terms to definitions, got "
                f"{type(definitions).__name__}"
            )
        if not definitions:
            raise ValueError("a glossary needs at least one definition")
        checked: dict[str, str] = {}
        for term, definition in definitions.items():
            if not isinstance(term, str) or analyze(term) != [term]:
                raise ValueError(
                    "a glossary term must be one lowercase word that the "
                    "analyzer keeps "
                    f"(not a stopword, no punctuation), got {term!r}"
                )
            if not isinstance(definition, str) or not definition.strip():
                raise ValueError(f"the definition of {term!r} is empty")
            checked[term] = " ".join(definition.split())
        self.definitions = MappingProxyType(checked)

    @classmethod
    def from_json(cls, path: str | Path) -> "Glossary":
        """A glossary from a JSON file holding one object,
        ``{"term": "definition", ...}``."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ValueError(
                f"cannot read the glossary {path}: {error.strerror or error}"
            ) from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(
                f"the glossary {path} is not UTF-8 JSON: {error}"
            ) from None
        if not isinstance(data, dict):
            raise ValueError(
                f"the glossary {path} must hold one JSON object of term: "
                "definition pairs, "
                f"got a {type(data).__name__}"
            )
        try:
            return cls(data)
        except ValueError as error:
            raise ValueError(f"the glossary {path}: {error}") from None

    def terms_in(self, question: str) -> list[str]:
        """The glossed terms of ``question``, each once, in order of first
        occurrence."""
        return [
            t
            for t in dict.fromkeys(analyze(validate.text(question, "question")))
            if t in self.definitions
        ]

    def __call__(self, question: str) -> str:
        if not isinstance(question, str):
            raise TypeError(f"a question is a str, got {type(question).__name__}")
        found = self.terms_in(question)
        if not found:
            return question
        notes = "; ".join(f"{t}: {self.definitions[t]}" for t in found)
        return f"{question.rstrip()} ({notes})"

    def __len__(self) -> int:
        return len(self.definitions)

    def __repr__(self) -> str:
        return f"Glossary({dict(self.definitions)!r})"


# The definitions the bundled corpus needs, stated as an astronomer would. They were
# written with the book's labelled questions in view, so what they gain on those
# questions is an upper bound (chapter 14).
ASTRONOMY = Glossary(
    {
        "year": "the time to orbit the Sun once",
        "day": "the time from one noon to the next",
        "old": "how long ago it formed",
    }
)
