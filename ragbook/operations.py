"""RAG in operation, re-exported in one place from its four modules:
:mod:`ragbook.orgdocs` (the organisation's document format), :mod:`ragbook.access`
(users and the chunks they may read), :mod:`ragbook.store` (the document store) and
:mod:`ragbook.monitoring` (hostile text, log entries and alerts). Import from those
modules."""

from __future__ import annotations

from .access import User, allowed_chunks
from .monitoring import DEFAULT_LIMITS, alerts, instruction_like, log_entry
from .orgdocs import (
    ACCESS_LEVELS,
    DocumentMeta,
    OrgDocument,
    load_org_corpus,
    parse_org_document,
    read_org_document,
    read_org_folder,
)
from .store import DocumentStore, StoreHit

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
