"""An organisation's documents: a metadata block (id, access level, version, date), then
Markdown (chapter 16).

An organisation's documents differ from an encyclopedia's: each carries an access level
and exists in versions. A document file starts with a metadata block of ``key: value``
lines, ended by a blank line, then the Markdown that
:func:`ragbook.corpus.documents.parse_markdown` reads::

    id: refund-policy        (optional; the file name without extension by default)
    access: public           (one of ACCESS_LEVELS)
    version: 2               (a whole number, at least 1)
    date: 2026-03-01         (ISO date, YYYY-MM-DD)

    # Refund policy
    ...

Files are read and folders listed as for the encyclopedia
(:func:`ragbook.corpus.documents.read_text`,
:func:`ragbook.corpus.documents.document_paths`); only the metadata block is this
module's own.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable, NamedTuple

from .. import validate
from .documents import Document, document_paths, parse_markdown, read_text

__all__ = [
    "ACCESS_LEVELS",
    "DocumentMeta",
    "OrgDocument",
    "parse_org_document",
    "read_org_document",
    "read_org_folder",
    "load_org_corpus",
    "DATED_TITLE",
    "label_date",
    "plain_title",
    "has_metadata",
    "FolderDocuments",
    "read_current_folder",
]

ACCESS_LEVELS = ("public", "staff", "finance")
_KEYS = ("id", "access", "version", "date")
_REQUIRED = ("access", "version", "date")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# the title a dated document carries in the tool, so that its sources' labels (and
# the reader) see the version and the date
DATED_TITLE = "{title} (version {version}, {date})"
_DATED = re.compile(r"\(version (\d+), (\d{4}-\d{2}-\d{2})\)")


@dataclass(frozen=True)
class DocumentMeta:
    """What the store knows about a document besides its text: id, access level, version
    and date."""

    doc_id: str
    access: str
    version: int
    date: _dt.date


@dataclass(frozen=True)
class OrgDocument:
    """One version of an organisation's document: its metadata and its parsed
    Markdown."""

    meta: DocumentMeta
    document: Document

    @property
    def id(self) -> str:
        return self.meta.doc_id


def _metadata_lines(text: str, name: str) -> tuple[dict[str, str], str]:
    lines = text.splitlines(keepends=True)
    values: dict[str, str] = {}
    position = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            position += len(line)
            break
        if line.lstrip().startswith("#"):
            raise ValueError(
                f"document {name!r}: the metadata block must be followed by a "
                "blank line "
                f"before the title (line {number})"
            )
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not colon or not key:
            raise ValueError(
                f"document {name!r}, line {number}: expected 'key: value' in the "
                "metadata block, "
                f"got {line.strip()!r}"
            )
        if key not in _KEYS:
            raise ValueError(
                f"document {name!r}, line {number}: unknown metadata key {key!r}; "
                f"the keys are {', '.join(_KEYS)}"
            )
        if key in values:
            raise ValueError(
                f"document {name!r}, line {number}: metadata key {key!r} is given twice"
            )
        values[key] = value.strip()
        position += len(line)
    else:
        raise ValueError(f"document {name!r} has a metadata block but no text after it")
    return values, text[position:]


def parse_org_document(text: str, name: str) -> OrgDocument:
    """Read the metadata block and the Markdown after it (chapter 16).

    ``name`` is the document id unless the block gives one. Raises ``ValueError`` for a
    missing key, an access level not in :data:`ACCESS_LEVELS`, a version that is not a
    whole number of at least 1, a date that is not ``YYYY-MM-DD``, an unknown or
    repeated key, and a block without text after it.
    """
    name = validate.text(name, "name")
    if not isinstance(text, str):
        raise TypeError(
            f"document {name!r}: expected text as str, got {type(text).__name__}"
        )
    values, body = _metadata_lines(text, name)
    missing = [key for key in _REQUIRED if key not in values]
    if missing:
        raise ValueError(
            f"document {name!r} has no {', '.join(missing)} in its metadata block; "
            f"every document needs {', '.join(_REQUIRED)}"
        )
    doc_id = values.get("id", name)
    if not _ID.match(doc_id):
        raise ValueError(
            f"document id {doc_id!r} must be lowercase letters, digits, '-' or '_'"
        )
    access = values["access"]
    if access not in ACCESS_LEVELS:
        raise ValueError(
            f"document {doc_id!r}: unknown access level {access!r}; "
            f"choose one of {', '.join(ACCESS_LEVELS)}"
        )
    if not re.fullmatch(r"\d+", values["version"]) or int(values["version"]) < 1:
        raise ValueError(
            f"document {doc_id!r}: the version must be a whole number of at least 1, "
            f"got {values['version']!r}"
        )
    try:
        date = _dt.date.fromisoformat(values["date"])
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", values["date"]):
            raise ValueError
    except ValueError:
        raise ValueError(
            f"document {doc_id!r}: the date must be a real date written YYYY-MM-DD, "
            f"got {values['date']!r}"
        ) from None
    if not body.strip():
        raise ValueError(
            f"document {doc_id!r} has a metadata block but no text after it"
        )
    meta = DocumentMeta(doc_id, access, int(values["version"]), date)
    return OrgDocument(meta, parse_markdown(body, doc_id))


def read_org_document(path: str | os.PathLike) -> OrgDocument:
    """Read one file with a metadata block; its id defaults to the file name without
    extension."""
    path = Path(path)
    return parse_org_document(read_text(path), path.stem)


def _sorted_versions(documents: list[OrgDocument], where: str) -> list[OrgDocument]:
    seen = set()
    for d in documents:
        if (d.id, d.meta.version) in seen:
            raise ValueError(
                f"{where} holds version {d.meta.version} of {d.id!r} twice"
            )
        seen.add((d.id, d.meta.version))
    return sorted(documents, key=lambda d: (d.id, d.meta.version))


def read_org_folder(folder: str | os.PathLike) -> list[OrgDocument]:
    """Every ``*.md`` file of ``folder``, sorted by document id then version."""
    documents = [read_org_document(p) for p in document_paths(folder, "*.md")]
    return _sorted_versions(documents, f"folder {str(Path(folder))!r}")


def load_org_corpus() -> list[OrgDocument]:
    """The fictitious company's documents that ship with ragbook (``ragbook/data/org``),
    every version, sorted by document id then version."""
    folder = resources.files("ragbook") / "data" / "org"
    documents = [
        parse_org_document(entry.read_text(encoding="utf-8"), entry.name[:-3])
        for entry in folder.iterdir()
        if entry.name.endswith(".md")
    ]
    return _sorted_versions(documents, "ragbook/data/org")


def has_metadata(text: str) -> bool:
    """Whether ``text`` opens with a metadata block: its first line is ``key: value``
    for one of the block's keys (``access: public``)."""
    first = validate.text(text, "text").lstrip("\ufeff").split("\n", 1)[0]
    key, colon, _ = first.partition(":")
    return bool(colon) and key.strip().lower() in _KEYS


def plain_title(title: str) -> str:
    """A title without the version and date :data:`DATED_TITLE` adds: "Refund policy"
    for "Refund policy (version 2, 2026-03-01)"."""
    return _DATED.sub("", validate.text(title, "title")).rstrip()


def label_date(label: str) -> _dt.date | None:
    """The date in a source's label of a dated document ("Refund policy (version 2,
    2026-03-01), Return window"), or None for a label without one."""
    found = _DATED.search(validate.text(label, "label"))
    return _dt.date.fromisoformat(found.group(2)) if found else None


class FolderDocuments(NamedTuple):
    """What :func:`read_current_folder` reads: the ``documents`` to index, the
    ``superseded`` versions left out, and the documents ``withheld`` for an access
    level the reader does not hold."""

    documents: list[Document]
    superseded: list[OrgDocument]
    withheld: list[OrgDocument]


def read_current_folder(
    folder: str | os.PathLike, levels: Iterable[str] = ("public",)
) -> FolderDocuments:
    """Every ``*.md`` file of ``folder`` as the tool indexes it for a reader who holds
    the access ``levels``.

    A file that opens with a metadata block is one version of a document: of each
    document id only the current version (the highest) is kept, as chapter 16's store
    keeps it, and indexed when its access level is among ``levels`` (no level implies
    another). Its title then names its version and date (:data:`DATED_TITLE`: "Refund
    policy (version 2, 2026-03-01)"), so that the reader can tell a newer source from
    an older one. Other files are plain Markdown, as
    :func:`~ragbook.corpus.documents.read_folder` reads them, readable by anyone. Two
    documents with one id are an error, as is a metadata block that does not parse or
    an unknown level.
    """
    if isinstance(levels, str):
        raise TypeError("levels is a collection of access levels; write ['public']")
    levels = frozenset(validate.texts(list(levels), "levels"))
    unknown = sorted(levels - set(ACCESS_LEVELS))
    if unknown:
        raise ValueError(
            f"unknown access level {unknown[0]!r}; choose among "
            f"{', '.join(ACCESS_LEVELS)}"
        )
    plain: list[Document] = []
    versions: list[OrgDocument] = []
    for path in document_paths(folder, "*.md"):
        text = read_text(path)
        if has_metadata(text):
            versions.append(parse_org_document(text, path.stem))
        else:
            plain.append(parse_markdown(text, path.stem))
    versions = _sorted_versions(versions, f"folder {str(Path(folder))!r}")
    current = {d.id: d for d in versions}  # sorted by version: the last one stays
    dated = [
        Document(
            d.id,
            DATED_TITLE.format(
                title=d.document.title, version=d.meta.version, date=d.meta.date
            ),
            d.document.text,
            d.document.sections,
        )
        for d in current.values()
        if d.meta.access in levels
    ]
    documents = sorted(plain + dated, key=lambda d: d.id)
    ids = [d.id for d in documents]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(
            f"folder {str(Path(folder))!r} holds two documents with the id "
            f"{twice[0]!r} (a file name, or the id of a metadata block)"
        )
    return FolderDocuments(
        documents,
        [d for d in versions if current[d.id] is not d],
        [d for d in current.values() if d.meta.access not in levels],
    )
