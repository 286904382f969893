"""Access rules: users hold access levels, and the chunks they may read are chosen
before ranking (chapter 16).

Each document carries an access level (:data:`~ragbook.corpus.orgdocs.ACCESS_LEVELS`:
``public``, ``staff``, ``finance``); a :class:`User` holds some of them, and no level
implies another. The chunks a user may read are computed *before* ranking
(:func:`allowed_chunks`) and passed to the retriever as ``allowed``, so the top k is
taken among readable chunks only. Filtering a global top k afterwards can leave fewer
than k chunks, or none, even when readable evidence exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .. import validate
from ..indexing.chunking import Chunk
from ..corpus.orgdocs import ACCESS_LEVELS, DocumentMeta

__all__ = ["User", "allowed_chunks"]


@dataclass(frozen=True)
class User:
    """A user and the access levels they hold; a document is readable when they hold its
    level."""

    name: str
    levels: frozenset[str]

    def __init__(self, name: str, levels: Iterable[str]):
        name = validate.text(name, "name")
        if isinstance(levels, str):
            raise TypeError(
                "levels is a collection of access levels, not one string; write "
                "['public']"
            )
        held = frozenset(validate.texts(levels, "levels"))
        unknown = sorted(held - set(ACCESS_LEVELS))
        if unknown:
            raise ValueError(
                f"user {name!r}: unknown access level {unknown[0]!r}; "
                f"choose among {', '.join(ACCESS_LEVELS)}"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "levels", held)

    def can_read(self, access: str) -> bool:
        return access in self.levels


def _access_of(meta: DocumentMeta | str) -> str:
    access = meta.access if isinstance(meta, DocumentMeta) else meta
    if access not in ACCESS_LEVELS:
        raise ValueError(
            f"unknown access level {access!r}; choose one of {', '.join(ACCESS_LEVELS)}"
        )
    return access


def allowed_chunks(
    chunks: Sequence[Chunk],
    documents_meta: Mapping[str, DocumentMeta | str],
    user: User,
) -> list[int]:
    """The ids of the chunks whose document's access level ``user`` holds, in id order
    (chapter 16).

    Pass them as ``allowed`` to a retriever, so it ranks readable chunks only.
    ``documents_meta`` maps a document id to its :class:`DocumentMeta` (or directly to
    its access level). A chunk whose document has no metadata is an error, not a guess:
    an unlabelled document must not become readable by default.
    """
    if not isinstance(user, User):
        raise TypeError(f"expected a User, got {type(user).__name__}")
    if not isinstance(documents_meta, Mapping):
        raise TypeError(
            "documents_meta must map document ids to metadata, got "
            f"{type(documents_meta).__name__}"
        )
    allowed = []
    for chunk in validate.sequence(chunks, "chunks", "chunks"):
        meta = documents_meta.get(chunk.doc_id)
        if meta is None:
            raise ValueError(
                f"chunk {chunk.id} comes from document {chunk.doc_id!r}, which "
                "has no access level"
            )
        if user.can_read(_access_of(meta)):
            allowed.append(chunk.id)
    return allowed
