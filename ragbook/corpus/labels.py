"""Labelled questions and relevance from evidence spans (chapters 3, 4 and 9).

Each question lists the pieces of evidence its answer needs; each piece lists every span
of the corpus that states it (alternatives: a fact stated in the lead and again in the
body has two). A span is a character range of one document. Relevance is defined by
position, independently of any chunker: a chunk is relevant to a piece of evidence when
its range contains one of the piece's spans whole,

    chunk.start <= span.start  and  span.end <= chunk.end  (same document),

so the same labels judge fixed windows, sentences, sections and anything else.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Mapping, Sequence

from .. import validate
from .keys import parse_key
from .documents import Document

__all__ = [
    "Span",
    "Evidence",
    "Question",
    "STYLES",
    "SPLITS",
    "in_split",
    "locate_span",
    "parse_questions",
    "load_questions",
    "contains_span",
    "relevant_chunks",
    "is_cut",
]

STYLES = ("lexical", "paraphrase", "unanswerable")
SPLITS = ("dev", "test", "holdout")
# the file of each split when no path is given: dev and test are questions.json; the
# held-out questions, written with no system's answers in view and read once at the end
# of chapter 15, have a file of their own
_FILES = {"dev": "questions.json", "test": "questions.json", "holdout": "holdout.json"}


@dataclass(frozen=True)
class Span:
    """``document.text[start:end] == text`` for the document ``doc_id``."""

    doc_id: str
    start: int
    end: int
    text: str

    @property
    def words(self) -> int:
        """Length in whitespace-separated words, the unit of fixed word windows."""
        return len(self.text.split())


@dataclass(frozen=True)
class Evidence:
    """One fact a question needs: every span that states it, any of which will do."""

    spans: tuple[Span, ...]


@dataclass(frozen=True)
class Question:
    """A labelled question: text, short answer, style and the evidence pieces (none if
    unanswerable)."""

    id: str
    text: str
    answer: str
    style: str
    evidence: tuple[Evidence, ...]
    answers: tuple[tuple[str, ...], ...] = ()  # the key: groups of accepted forms
    split: str = ""  # "dev", "test" or "holdout", fixed before any measurement
    options: tuple[str, ...] = ()  # "which of X or Y": the options, accepted first

    @property
    def answerable(self) -> bool:
        return bool(self.evidence)

    @property
    def doc_ids(self) -> frozenset[str]:
        """The documents that the evidence comes from."""
        return frozenset(span.doc_id for piece in self.evidence for span in piece.spans)


def locate_span(documents: dict[str, Document], doc_id: str, text: str) -> Span:
    """The unique occurrence of ``text`` in document ``doc_id`` as a :class:`Span`.

    Raises ``ValueError`` when the document is unknown, or the text occurs nowhere or
    more than once (an ambiguous label could mark the wrong place).
    """
    validate.text(doc_id, "doc_id"), validate.text(text, "text")
    if doc_id not in documents:
        raise ValueError(
            f"evidence names document {doc_id!r}, which is not in the corpus "
            f"({', '.join(documents)})"
        )
    if not text.strip():
        raise ValueError(f"an evidence span in {doc_id!r} is empty")
    haystack = documents[doc_id].text
    start = haystack.find(text)
    if start < 0:
        raise ValueError(f"span not found in {doc_id!r}: {text!r}")
    if haystack.find(text, start + 1) >= 0:
        raise ValueError(
            f"span occurs more than once in {doc_id!r}; lengthen it to make it "
            f"unique: {text!r}"
        )
    return Span(doc_id, start, start + len(text), text)


def parse_questions(
    records: Sequence[dict], documents: Iterable[Document]
) -> list[Question]:
    """Turn question records (the JSON format of ``questions.json``) into
    :class:`Question` objects."""
    by_id = {
        d.id: d for d in validate.sequence(documents, "documents", "Document objects")
    }
    questions, seen = [], set()
    for number, record in enumerate(
        validate.sequence(records, "records", "question records (dicts)"), start=1
    ):
        if not isinstance(record, Mapping):
            raise TypeError(
                f"question {number} must be a record (a dict), got "
                f"{type(record).__name__}"
            )
        missing = [
            key
            for key in ("id", "question", "answer", "style", "evidence")
            if key not in record
        ]
        if missing:
            raise ValueError(
                f"question {number} ({record.get('id', 'no id')}) lacks "
                f"{', '.join(missing)}"
            )
        qid = record["id"]
        if qid in seen:
            raise ValueError(f"question id {qid!r} is used twice")
        seen.add(qid)
        for key in ("id", "question", "answer", "style"):
            validate.text(record[key], f"question {number}'s {key}")
        if record["style"] not in STYLES:
            raise ValueError(
                f"question {qid!r}: style must be one of {STYLES}, got "
                f"{record['style']!r}"
            )
        pieces = []
        for piece in validate.sequence(
            record["evidence"],
            f"question {qid!r}'s evidence",
            "pieces (lists of spans)",
        ):
            piece = validate.sequence(
                piece, f"an evidence piece of question {qid!r}", "spans"
            )
            if not piece:
                raise ValueError(f"question {qid!r} has an evidence piece with no span")
            pieces.append(
                Evidence(tuple(locate_span(by_id, s["doc"], s["text"]) for s in piece))
            )
        if (record["style"] == "unanswerable") != (not pieces):
            raise ValueError(
                f"question {qid!r}: exactly the unanswerable questions have no evidence"
            )
        key = _answer_key(record, qid, bool(pieces))
        options = _options(record, qid, key)
        split = record.get("split", "")
        if split not in SPLITS + ("",):
            raise ValueError(
                f"question {qid!r}: split must be one of {SPLITS}, got {split!r}"
            )
        if not pieces:
            _check_absent(record.get("absent", {}), by_id, qid)
        questions.append(
            Question(
                qid,
                record["question"],
                record["answer"],
                record["style"],
                tuple(pieces),
                key,
                split,
                options,
            )
        )
    if len({bool(q.split) for q in questions}) > 1:
        raise ValueError(
            "some questions have a split and some do not; give every question one"
        )
    return questions


def _answer_key(record: Mapping, qid: str, answerable: bool):
    if "answers" not in record:
        return ()
    try:
        key = parse_key(record["answers"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"question {qid!r}: {error}") from None
    if answerable and not key:
        raise ValueError(f"question {qid!r} is answerable but has no accepted answers")
    if not answerable and key:
        raise ValueError(f"question {qid!r} is unanswerable but lists answers")
    return key


def _options(record: Mapping, qid: str, key) -> tuple[str, ...]:
    if "options" not in record:
        return ()
    options = tuple(validate.texts(record["options"], f"question {qid!r}'s options"))
    if len(options) < 2 or not key or options[0] not in key[0]:
        raise ValueError(
            f"question {qid!r}: options must name at least two alternatives, the "
            "first of them an accepted answer"
        )
    return options


def _check_absent(absent, documents: Mapping[str, Document], qid: str) -> None:
    """An unanswerable question may name phrases that any statement of its fact would
    contain; each must occur nowhere in the named document (case-insensitive)."""
    if not isinstance(absent, Mapping):
        raise TypeError(
            f"question {qid!r}: absent must map document ids to phrases, got "
            f"{type(absent).__name__}"
        )
    for doc_id, phrases in absent.items():
        if doc_id not in documents:
            raise ValueError(
                f"question {qid!r}: absent names document {doc_id!r}, which is not in "
                "the corpus"
            )
        text = documents[doc_id].text.lower()
        for phrase in validate.texts(phrases, f"question {qid!r}'s absent phrases"):
            if phrase.lower() in text:
                raise ValueError(
                    f"question {qid!r} is labelled unanswerable, but {doc_id!r} "
                    f"contains {phrase!r}"
                )


def in_split(questions: Sequence[Question], split: str) -> list[Question]:
    """The questions of one split ("dev", "test" or "holdout"), in file order."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    chosen = [
        q
        for q in validate.sequence(questions, "questions", "questions")
        if q.split == split
    ]
    if not chosen:
        raise ValueError(f"no question is in the {split!r} split")
    return chosen


def load_questions(
    documents: Iterable[Document],
    path: str | os.PathLike | None = None,
    split: str | None = None,
) -> list[Question]:
    """The labelled questions (by default the bundled ``ragbook/data/questions.json``)
    against ``documents``; with ``split`` ("dev", "test" or "holdout"), those of that
    split only. The bundled held-out questions are in ``ragbook/data/holdout.json``,
    read when ``split`` is "holdout" and no ``path`` is given.

    Choices are made on dev; test and holdout are for reporting what was chosen."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    if path is None:
        raw = (
            resources.files("ragbook") / "data" / _FILES.get(split, "questions.json")
        ).read_text(encoding="utf-8")
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                raw = handle.read()
        except OSError as error:
            raise ValueError(
                f"cannot read questions file {str(path)!r}: {error.strerror or error}"
            ) from error
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"questions file is not valid JSON (line {error.lineno}): {error.msg}"
        ) from error
    questions = parse_questions(
        data["questions"] if isinstance(data, dict) else data, documents
    )
    return questions if split is None else in_split(questions, split)


def contains_span(chunk, span: Span) -> bool:
    """Whether ``chunk`` (anything with ``doc_id``, ``start``, ``end``) holds ``span``
    whole."""
    if not isinstance(span, Span):
        raise TypeError(f"span must be a Span, got {type(span).__name__}")
    return (
        chunk.doc_id == span.doc_id
        and chunk.start <= span.start
        and span.end <= chunk.end
    )


def relevant_chunks(question: Question, chunks: Sequence) -> list[frozenset[int]]:
    """For each evidence piece, the positions in ``chunks`` of the chunks that contain
    one of its spans."""
    if not isinstance(question, Question):
        raise TypeError(f"question must be a Question, got {type(question).__name__}")
    chunks = validate.sequence(chunks, "chunks", "chunks")
    by_doc: dict[str, list[int]] = {}
    for position, chunk in enumerate(chunks):
        by_doc.setdefault(chunk.doc_id, []).append(position)
    result = []
    for piece in question.evidence:
        found = {
            position
            for span in piece.spans
            for position in by_doc.get(span.doc_id, ())
            if contains_span(chunks[position], span)
        }
        result.append(frozenset(found))
    return result


def is_cut(evidence: Evidence, chunks: Sequence) -> bool:
    """True when no chunk contains any of the evidence's spans whole: no ranking can
    then retrieve it."""
    if not isinstance(evidence, Evidence):
        raise TypeError(f"evidence must be an Evidence, got {type(evidence).__name__}")
    chunks = validate.sequence(chunks, "chunks", "chunks")
    return not any(
        contains_span(chunk, span) for span in evidence.spans for chunk in chunks
    )
