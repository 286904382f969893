"""RAG in operation: access levels, document versions, a store that stays current, and what to log (chapter 15).

An organisation's documents differ from an encyclopedia's in three ways that retrieval must respect:

- **Permissions.** Each document carries an access level (``public``, ``staff``, ``finance``); a user holds
  some of them. The chunks a user may read are computed *before* ranking (:func:`allowed_chunks`) and passed
  to the retriever as ``allowed``, so the top k is taken among readable chunks only. Filtering a global top k
  afterwards can leave fewer than k chunks, or none, even when readable evidence exists.
- **Freshness.** Documents have versions. :class:`DocumentStore` keeps exactly one current version of each
  document; :meth:`~DocumentStore.replace` supersedes it and :meth:`~DocumentStore.delete` removes it, and
  after every change the chunks and the retriever are rebuilt, so no deleted or superseded text can be found.
  BM25's idf and average length depend on every chunk, and this book's BM25 stores weights that already
  include them, so any change means rebuilding the sparse index; its cost grows with the collection.
- **Hostile text and monitoring.** Retrieved text is data written by others; :func:`instruction_like` flags
  chunks that address the model, and :func:`log_entry` / :func:`alerts` record and watch what each question
  retrieved, how many tokens it cost, and whether it abstained or failed the grounding checks.

A document file starts with a metadata block of ``key: value`` lines, ended by a blank line, then Markdown::

    id: refund-policy        (optional; the file name without extension by default)
    access: public           (one of ACCESS_LEVELS)
    version: 2               (a whole number, at least 1)
    date: 2026-03-01         (ISO date, YYYY-MM-DD)

    # Refund policy
    ...
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import time
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from . import validate
from .bm25 import BM25
from .chunking import Chunk, sentence_chunks
from .documents import Document, parse_markdown
from .pipeline import Answer, answer_question
from .prompts import Prompt, count_tokens
from .retrieval import Hit

__all__ = [
    "ACCESS_LEVELS",
    "DocumentMeta",
    "OrgDocument",
    "parse_org_document",
    "read_org_document",
    "read_org_folder",
    "load_org_corpus",
    "User",
    "allowed_chunks",
    "StoreHit",
    "DocumentStore",
    "instruction_like",
    "log_entry",
    "alerts",
    "DEFAULT_LIMITS",
]

ACCESS_LEVELS = ("public", "staff", "finance")
_KEYS = ("id", "access", "version", "date")
_REQUIRED = ("access", "version", "date")
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


# ---- documents with metadata ------------------------------------------------------------------------
@dataclass(frozen=True)
class DocumentMeta:
    """What the store knows about a document besides its text: id, access level, version and date."""

    doc_id: str
    access: str
    version: int
    date: _dt.date


@dataclass(frozen=True)
class OrgDocument:
    """One version of an organisation's document: its metadata and its parsed Markdown."""

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
            raise ValueError(f"document {name!r}: the metadata block must be followed by a blank line "
                             f"before the title (line {number})")
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if not colon or not key:
            raise ValueError(f"document {name!r}, line {number}: expected 'key: value' in the metadata block, "
                             f"got {line.strip()!r}")
        if key not in _KEYS:
            raise ValueError(f"document {name!r}, line {number}: unknown metadata key {key!r}; "
                             f"the keys are {', '.join(_KEYS)}")
        if key in values:
            raise ValueError(f"document {name!r}, line {number}: metadata key {key!r} is given twice")
        values[key] = value.strip()
        position += len(line)
    else:
        raise ValueError(f"document {name!r} has a metadata block but no text after it")
    return values, text[position:]


def parse_org_document(text: str, name: str) -> OrgDocument:
    """Read the metadata block and the Markdown after it (chapter 15).

    ``name`` is the document id unless the block gives one. Raises ``ValueError`` for a missing key, an
    access level not in :data:`ACCESS_LEVELS`, a version that is not a whole number of at least 1, a date
    that is not ``YYYY-MM-DD``, an unknown or repeated key, and a block without text after it.
    """
    name = validate.text(name, "name")
    if not isinstance(text, str):
        raise TypeError(f"document {name!r}: expected text as str, got {type(text).__name__}")
    values, body = _metadata_lines(text, name)
    missing = [key for key in _REQUIRED if key not in values]
    if missing:
        raise ValueError(f"document {name!r} has no {', '.join(missing)} in its metadata block; "
                         f"every document needs {', '.join(_REQUIRED)}")
    doc_id = values.get("id", name)
    if not _ID.match(doc_id):
        raise ValueError(f"document id {doc_id!r} must be lowercase letters, digits, '-' or '_'")
    access = values["access"]
    if access not in ACCESS_LEVELS:
        raise ValueError(f"document {doc_id!r}: unknown access level {access!r}; "
                         f"choose one of {', '.join(ACCESS_LEVELS)}")
    if not re.fullmatch(r"\d+", values["version"]) or int(values["version"]) < 1:
        raise ValueError(f"document {doc_id!r}: the version must be a whole number of at least 1, "
                         f"got {values['version']!r}")
    try:
        date = _dt.date.fromisoformat(values["date"])
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", values["date"]):
            raise ValueError
    except ValueError:
        raise ValueError(f"document {doc_id!r}: the date must be a real date written YYYY-MM-DD, "
                         f"got {values['date']!r}") from None
    if not body.strip():
        raise ValueError(f"document {doc_id!r} has a metadata block but no text after it")
    meta = DocumentMeta(doc_id, access, int(values["version"]), date)
    return OrgDocument(meta, parse_markdown(body, doc_id))


def read_org_document(path: str | os.PathLike) -> OrgDocument:
    """Read one file with a metadata block; its id defaults to the file name without extension."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read document {str(path)!r}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise ValueError(f"document {str(path)!r} is not valid UTF-8 (byte {error.start})") from error
    return parse_org_document(text, path.stem)


def _sorted_versions(documents: list[OrgDocument], where: str) -> list[OrgDocument]:
    seen = set()
    for d in documents:
        if (d.id, d.meta.version) in seen:
            raise ValueError(f"{where} holds version {d.meta.version} of {d.id!r} twice")
        seen.add((d.id, d.meta.version))
    return sorted(documents, key=lambda d: (d.id, d.meta.version))


def read_org_folder(folder: str | os.PathLike) -> list[OrgDocument]:
    """Every ``*.md`` file of ``folder``, sorted by document id then version."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is not a folder of documents")
    paths = sorted(p for p in folder.glob("*.md") if p.is_file())
    if not paths:
        raise ValueError(f"folder {str(folder)!r} holds no .md files")
    return _sorted_versions([read_org_document(p) for p in paths], f"folder {str(folder)!r}")


def load_org_corpus() -> list[OrgDocument]:
    """The fictitious company's documents that ship with ragbook (``ragbook/data/org``), every version,
    sorted by document id then version."""
    folder = resources.files("ragbook") / "data" / "org"
    documents = [parse_org_document(entry.read_text(encoding="utf-8"), entry.name[:-3])
                 for entry in folder.iterdir() if entry.name.endswith(".md")]
    return _sorted_versions(documents, "ragbook/data/org")


# ---- permissions ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class User:
    """A user and the access levels they hold; a document is readable when they hold its level."""

    name: str
    levels: frozenset[str]

    def __init__(self, name: str, levels: Iterable[str]):
        name = validate.text(name, "name")
        if isinstance(levels, str):
            raise TypeError("levels is a collection of access levels, not one string; write ['public']")
        held = frozenset(validate.texts(levels, "levels"))
        unknown = sorted(held - set(ACCESS_LEVELS))
        if unknown:
            raise ValueError(f"user {name!r}: unknown access level {unknown[0]!r}; "
                             f"choose among {', '.join(ACCESS_LEVELS)}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "levels", held)

    def can_read(self, access: str) -> bool:
        return access in self.levels


def _access_of(meta: DocumentMeta | str) -> str:
    access = meta.access if isinstance(meta, DocumentMeta) else meta
    if access not in ACCESS_LEVELS:
        raise ValueError(f"unknown access level {access!r}; choose one of {', '.join(ACCESS_LEVELS)}")
    return access


def allowed_chunks(chunks: Sequence[Chunk], documents_meta: Mapping[str, DocumentMeta | str], user: User) -> list[int]:
    """The ids of the chunks whose document's access level ``user`` holds, in id order (chapter 15).

    Pass them as ``allowed`` to a retriever, so it ranks readable chunks only. ``documents_meta`` maps a
    document id to its :class:`DocumentMeta` (or directly to its access level). A chunk whose document has
    no metadata is an error, not a guess: an unlabelled document must not become readable by default.
    """
    if not isinstance(user, User):
        raise TypeError(f"expected a User, got {type(user).__name__}")
    if not isinstance(documents_meta, Mapping):
        raise TypeError(f"documents_meta must map document ids to metadata, got {type(documents_meta).__name__}")
    allowed = []
    for chunk in validate.sequence(chunks, "chunks", "chunks"):
        meta = documents_meta.get(chunk.doc_id)
        if meta is None:
            raise ValueError(f"chunk {chunk.id} comes from document {chunk.doc_id!r}, which has no access level")
        if user.can_read(_access_of(meta)):
            allowed.append(chunk.id)
    return allowed


# ---- the store --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StoreHit:
    """One result of :meth:`DocumentStore.search_for`: rank, score, the chunk, and its document's version and access."""

    rank: int
    score: float
    chunk: Chunk
    version: int
    access: str


def _default_chunker(documents: Sequence[Document]) -> list[Chunk]:
    return sentence_chunks(documents, 30)


class DocumentStore:
    """The current version of every document, its chunks and a retriever over them, kept in step (chapter 15).

    ``chunker`` maps a list of documents to chunks (sentence chunks of at most 30 words by default, which suits short policy documents);
    ``retriever`` builds a retriever from the chunks' indexed texts (BM25 by default); any object with
    ``search(query, k, allowed)`` will do. Each document is chunked once, when it is added or replaced; the
    retriever is rebuilt from all chunks after every change, because collection statistics such as BM25's idf
    and average chunk length depend on all of them. ``rebuilds`` counts the rebuilds and ``rebuild_seconds``
    holds the duration of the last one; ``history`` lists every change as (action, document id, version).
    """

    def __init__(self, chunker: Callable[[Sequence[Document]], list[Chunk]] | None = None,
                 retriever: Callable[[list[str]], object] | None = None):
        for name, value in (("chunker", chunker), ("retriever", retriever)):
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be a function or None, got {value!r}")
        self.chunker = chunker or _default_chunker
        self.make_retriever = retriever or BM25.from_texts
        self._current: dict[str, OrgDocument] = {}
        self._chunks: dict[str, list[Chunk]] = {}
        self.chunks: list[Chunk] = []
        self.retriever = None
        self.rebuilds = 0
        self.rebuild_seconds = 0.0
        self.history: list[tuple[str, str, int]] = []

    # -- reading ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._current)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._current

    def get(self, doc_id: str) -> OrgDocument:
        """The current version of a document."""
        if doc_id not in self._current:
            raise KeyError(f"the store holds no document {doc_id!r}")
        return self._current[doc_id]

    @property
    def meta(self) -> dict[str, DocumentMeta]:
        """Document id -> metadata of its current version."""
        return {doc_id: d.meta for doc_id, d in self._current.items()}

    @property
    def documents(self) -> list[Document]:
        """The current versions' parsed documents, in the store's order (for prompts and sources)."""
        return [d.document for d in self._current.values()]

    def allowed(self, user: User) -> list[int]:
        """Ids of the current chunks ``user`` may read."""
        return allowed_chunks(self.chunks, self.meta, user)

    # -- changes ------------------------------------------------------------------------------------
    def add(self, documents: OrgDocument | Iterable[OrgDocument]) -> None:
        """Add new documents (one rebuild for all of them); an id already in the store is an error."""
        if isinstance(documents, OrgDocument):
            batch = [documents]
        elif isinstance(documents, Iterable) and not isinstance(documents, (str, Document)):
            batch = list(documents)
        else:
            raise TypeError(f"the store keeps OrgDocument objects (metadata and text), got {type(documents).__name__}")
        ids = [self._checked(d).id for d in batch]
        if len(set(ids)) != len(ids):
            raise ValueError("the batch holds two documents with the same id; add the first, then replace it")
        for doc_id in ids:
            if doc_id in self._current:
                raise ValueError(f"the store already holds {doc_id!r} (version {self._current[doc_id].meta.version}); "
                                 "use replace to store a new version")
        for d in batch:
            self._store(d, "add")
        self._rebuild()

    def replace(self, document: OrgDocument) -> None:
        """Store a new version of a document; the old version's chunks disappear from the index."""
        self._checked(document)
        old = self._current.get(document.id)
        if old is None:
            raise ValueError(f"the store holds no document {document.id!r} to replace; use add")
        if document.meta.version <= old.meta.version:
            raise ValueError(f"version {document.meta.version} of {document.id!r} does not supersede the stored "
                             f"version {old.meta.version}; a replacement needs a higher version")
        self._store(document, "replace")
        self._rebuild()

    def delete(self, doc_id: str) -> None:
        """Remove a document and its chunks from the store and the index."""
        if doc_id not in self._current:
            raise KeyError(f"the store holds no document {doc_id!r} to delete")
        version = self._current.pop(doc_id).meta.version
        del self._chunks[doc_id]
        self.history.append(("delete", doc_id, version))
        self._rebuild()

    @staticmethod
    def _checked(document: OrgDocument) -> OrgDocument:
        if not isinstance(document, OrgDocument):
            raise TypeError(f"the store keeps OrgDocument objects (metadata and text), got {type(document).__name__}")
        return document

    def _store(self, document: OrgDocument, action: str) -> None:
        self._current[document.id] = document
        self._chunks[document.id] = self.chunker([document.document])
        self.history.append((action, document.id, document.meta.version))

    def _rebuild(self) -> None:
        start = time.perf_counter()
        chunks = [c for doc_id in self._current for c in self._chunks[doc_id]]
        self.chunks = [replace(c, id=i) for i, c in enumerate(chunks)]
        self.retriever = self.make_retriever([c.indexed_text for c in self.chunks]) if self.chunks else None
        self.rebuilds += 1
        self.rebuild_seconds = time.perf_counter() - start

    # -- searching ----------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, allowed: Iterable[int] | None = None) -> list[Hit]:
        """The top k of the current chunks, as hits (the contract of :mod:`ragbook.retrieval`).

        ``allowed`` holds ids of current chunks (:meth:`allowed` gives a user's); it filters before ranking.
        """
        query = validate.query(query)
        k = validate.k(k)
        if self.retriever is None:
            return []
        return self.retriever.search(query, k, allowed=allowed)

    def search_for(self, user: User, query: str, k: int = 10) -> list[StoreHit]:
        """The top k chunks among those ``user`` may read, with their documents' versions and access levels."""
        if not isinstance(user, User):
            raise TypeError(f"expected a User, got {type(user).__name__}")
        hits = self.search(query, k, allowed=self.allowed(user))
        meta = self.meta
        found = []
        for hit in hits:
            chunk = self.chunks[hit.chunk_id]
            found.append(StoreHit(hit.rank, hit.score, chunk, meta[chunk.doc_id].version, meta[chunk.doc_id].access))
        return found

    def answer(self, question: str, user: User, generator: Callable[[Prompt], str], k: int = 5,
               budget: int | None = None, count: Callable[[str], int] = count_tokens) -> Answer:
        """:func:`~ragbook.pipeline.answer_question` over the current chunks that ``user`` may read."""
        question = validate.query(question, "question", terms=False)
        if self.retriever is None:
            raise ValueError("the store holds no documents to answer from")
        return answer_question(question, self.chunks, self.retriever, generator, k, budget,
                               count, allowed=self.allowed(user))


# ---- hostile text and monitoring --------------------------------------------------------------------
_INSTRUCTION = re.compile(
    r"ignore (all |any )?(the )?(previous|prior|above|earlier) (instructions|rules)"
    r"|disregard (all |any )?(the )?(previous|prior|above|earlier|your) (instructions|rules)"
    r"|(tell|inform) the (customer|user)"
    r"|system prompt"
    r"|</?source\b",
    re.IGNORECASE,
)


def instruction_like(text: str) -> bool:
    """Whether a chunk's text addresses the model or imitates the prompt's delimiters.

    A cheap signal to log and alert on, not a defence: a pattern list misses any instruction phrased
    differently, and a plain false statement ("refunds are now unlimited") contains no instruction at all.
    """
    return bool(_INSTRUCTION.search(validate.text(text, "text")))


def _place(chunk: Chunk) -> tuple:
    return chunk.doc_id, chunk.section, chunk.start, chunk.end, chunk.text


def log_entry(answer: Answer, user: User, store: DocumentStore, count: Callable[[str], int] = count_tokens) -> dict:
    """What to record for one question (chapter 15): retrieval, cost, outcome and warning signs.

    ``unreadable`` counts prompt chunks the user may not read and ``superseded`` those whose document is no
    longer current in ``store`` (both must stay 0); ``instruction_like`` counts prompt chunks that match
    :func:`instruction_like`.
    """
    for value, name, kind in ((answer, "answer", Answer), (user, "user", User), (store, "store", DocumentStore)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
    meta = store.meta
    current = {_place(c) for c in store.chunks}
    chunks = [r.chunk for r in answer.retrieved]
    documents = [f"{c.doc_id}@v{meta[c.doc_id].version}" if c.doc_id in meta else f"{c.doc_id}@deleted"
                 for c in chunks]
    return {
        "question": answer.question,
        "user": user.name,
        "levels": sorted(user.levels),
        "chunk_ids": [c.id for c in chunks],
        "documents": documents,
        "scores": [round(r.score, 4) for r in answer.retrieved],
        "top_score": round(answer.retrieved[0].score, 4) if answer.retrieved else None,
        "prompt_tokens": count(answer.prompt.text),
        "answer_tokens": count(answer.answer),
        "abstained": answer.abstained,
        "failed_claims": sum(not c.supported for c in answer.checks),
        "unreadable": sum(c.doc_id not in meta or not user.can_read(meta[c.doc_id].access) for c in chunks),
        "superseded": sum(_place(c) not in current for c in chunks),
        "instruction_like": sum(instruction_like(c.text) for c in chunks),
    }


DEFAULT_LIMITS = {
    "abstention_rate": 0.3,       # more abstentions than usual: retrieval or the index may have broken
    "failed_claims_rate": 0.1,    # answers with a claim that fails the grounding checks
    "low_score_rate": 0.3,        # questions whose best retrieval score is below min_top_score
    "min_top_score": 1.0,         # for BM25 scores; a cosine retriever needs its own value
    "max_prompt_tokens": 4000,    # cost: the largest prompt allowed before an alert
}


def alerts(entries: Sequence[dict], limits: Mapping[str, float] | None = None) -> list[str]:
    """Alerts for a batch of :func:`log_entry` records: any unreadable, superseded or instruction-like chunk
    in a prompt, and rates of abstention, failed claims and low retrieval scores above their limits."""
    entries = validate.sequence(entries, "entries", "log entries (dicts)")
    if not entries:
        raise ValueError("there are no log entries to watch")
    if limits is not None and not isinstance(limits, Mapping):
        raise TypeError(f"limits must map limit names to numbers, got {type(limits).__name__}")
    for key, value in (limits or {}).items():
        if key not in DEFAULT_LIMITS:
            raise ValueError(f"unknown limit {key!r}; the limits are {', '.join(DEFAULT_LIMITS)}")
        validate.real(value, f"the limit {key}")
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    n = len(entries)
    messages = []
    for key, what in (("unreadable", "chunks the user may not read"), ("superseded", "superseded or deleted chunks"),
                      ("instruction_like", "chunks that address the model")):
        total = sum(e[key] for e in entries)
        if total:
            messages.append(f"{total} {what} reached a prompt")
    answered = [e for e in entries if not e["abstained"]]
    rates = {
        "abstention_rate": (n - len(answered)) / n,
        "failed_claims_rate": sum(e["failed_claims"] > 0 for e in answered) / len(answered) if answered else 0.0,
        "low_score_rate": sum(e["top_score"] is None or e["top_score"] < limits["min_top_score"] for e in entries) / n,
    }
    for key, rate in rates.items():
        if rate > limits[key]:
            messages.append(f"{key.replace('_', ' ')} {rate:.2f} is above its limit {limits[key]:.2f}")
    biggest = max(e["prompt_tokens"] for e in entries)
    if biggest > limits["max_prompt_tokens"]:
        messages.append(f"a prompt took {biggest} tokens, above the limit {int(limits['max_prompt_tokens'])}")
    return messages

