"""Documents and their sections, read from Markdown (chapter 3).

A document is one Markdown file: a first line ``# Title``, a lead (the text before the
first ``##`` heading, the article's summary) and sections that each start with a
``## Heading`` line. Every section keeps its character range in the document's text, so
evidence spans, chunks and sections all share one coordinate system:
``document.text[section.start:section.end] == section.text``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .. import validate

__all__ = [
    "Section",
    "Document",
    "parse_markdown",
    "read_text",
    "read_markdown",
    "document_paths",
    "read_folder",
    "load_corpus",
    "LEAD",
    "CORPUS_ORDER",
]

LEAD = ""  # the heading of a document's lead, which has none

_TITLE = re.compile(r"\A[ \t]*#[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class Section:
    """Part of a document: its lead (heading ``""``) or one ``##`` section, as a
    character range."""

    doc_id: str
    index: int
    heading: str
    start: int
    end: int
    text: str

    @property
    def is_lead(self) -> bool:
        return self.heading == LEAD


@dataclass(frozen=True)
class Document:
    """A whole document: its id (the file name without extension), title, full text and
    sections."""

    id: str
    title: str
    text: str
    sections: tuple[Section, ...]

    @property
    def lead(self) -> Section:
        """The text before the first ``##`` heading."""
        return self.sections[0]

    def section_at(self, position: int) -> Section:
        """The section whose range contains character ``position`` (or the last one that
        starts before it)."""
        if not 0 <= validate.whole(position, "position") <= len(self.text):
            raise ValueError(
                f"position {position} lies outside document {self.id!r} (0 to "
                f"{len(self.text)})"
            )
        found = self.sections[0]
        for section in self.sections:
            if section.start <= position:
                found = section
        return found


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def parse_markdown(text: str, doc_id: str) -> Document:
    """Split Markdown ``text`` into a :class:`Document`: title, lead and ``##`` sections
    with their ranges.

    The title is the first line if it is a ``# Title`` heading, else ``doc_id``. Raises
    ``ValueError`` for a document with no text besides headings.
    """
    validate.text(doc_id, "doc_id")
    if not isinstance(text, str):
        raise TypeError(
            f"document {doc_id!r}: expected text as str, got {type(text).__name__}"
        )
    title_match = _TITLE.match(text)
    title = title_match.group(1) if title_match else doc_id
    body_start = title_match.end() if title_match else 0
    headings = list(_HEADING.finditer(text, body_start))
    bounds = [(LEAD, body_start, headings[0].start() if headings else len(text))]
    for i, match in enumerate(headings):
        end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
        bounds.append((match.group(1), match.end(), end))
    sections = []
    for index, (heading, start, end) in enumerate(bounds):
        start, end = _trimmed(text, start, end)
        sections.append(Section(doc_id, index, heading, start, end, text[start:end]))
    if not any(s.text for s in sections):
        raise ValueError(
            f"document {doc_id!r} is empty: it has no text besides headings"
        )
    return Document(doc_id, title, text, tuple(sections))


def read_text(path: str | os.PathLike) -> str:
    """The text of a UTF-8 file; a file that cannot be read, or is not UTF-8, is a
    ``ValueError`` naming it."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ValueError(
            f"cannot read document {str(path)!r}: {error.strerror or error}"
        ) from error
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"document {str(path)!r} is not valid UTF-8 (byte {error.start}); "
            "save it as UTF-8"
        ) from error


def read_markdown(path: str | os.PathLike) -> Document:
    """Read one Markdown file as a :class:`Document` whose id is the file name without
    its extension."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise ValueError(f"document {str(path)!r} is empty")
    return parse_markdown(text, path.stem)


def document_paths(folder: str | os.PathLike, pattern: str = "*.md") -> list[Path]:
    """The files matching ``pattern`` in ``folder`` (not its subfolders), sorted by
    name; none is an error."""
    folder, pattern = Path(folder), validate.text(pattern, "pattern")
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a folder of documents")
    paths = sorted(p for p in folder.glob(pattern) if p.is_file())
    if not paths:
        raise ValueError(f"folder {str(folder)!r} holds no files matching {pattern!r}")
    return paths


def read_folder(folder: str | os.PathLike, pattern: str = "*.md") -> list[Document]:
    """Every file matching ``pattern`` in ``folder`` (not its subfolders), sorted by
    name."""
    documents = [read_markdown(p) for p in document_paths(folder, pattern)]
    ids = [d.id for d in documents]
    if len(set(ids)) != len(ids):
        raise ValueError(f"folder {str(folder)!r} holds two documents with the same id")
    return documents


# The bundled corpus, in the book's order: inner planets and the Moon, the asteroid
# belt, the giants, Pluto.
CORPUS_ORDER = (
    "mercury",
    "venus",
    "moon",
    "mars",
    "ceres",
    "jupiter",
    "saturn",
    "uranus",
    "neptune",
    "pluto",
)


def load_corpus() -> list[Document]:
    """The ten articles that ship with ragbook (``ragbook/data/corpus``), in
    :data:`CORPUS_ORDER`."""
    folder = resources.files("ragbook") / "data" / "corpus"
    documents = {}
    for name in CORPUS_ORDER:
        entry = folder / f"{name}.md"
        documents[name] = parse_markdown(entry.read_text(encoding="utf-8"), name)
    return [documents[name] for name in CORPUS_ORDER]
