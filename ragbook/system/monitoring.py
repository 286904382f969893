"""Monitoring a deployed system: hostile text, what to log for each question, and when
to alert (chapter 16).

Retrieved text is data written by others; :func:`instruction_like` flags chunks that
address the model. :func:`log_entry` records what each question retrieved, how many
tokens it cost, and whether it abstained or failed the grounding checks, and
:func:`alerts` watches a batch of entries against :data:`DEFAULT_LIMITS`.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

from .. import validate
from .access import User
from ..indexing.chunking import Chunk
from ..generation.answer import Answer
from ..generation.prompts import count_tokens
from .store import DocumentStore

__all__ = ["instruction_like", "log_entry", "alerts", "DEFAULT_LIMITS"]

_INSTRUCTION = re.compile(
    r"ignore (all |any )?(the )?(previous|prior|above|earlier) (instructions|rules)"
    r"|disregard (all |any )?(the )?(previous|prior|above|earlier|your) "
    r"(instructions|rules)"
    r"|(tell|inform) the (customer|user)"
    r"|system prompt"
    r"|</?source\b",
    re.IGNORECASE,
)


def instruction_like(text: str) -> bool:
    """Whether a chunk's text addresses the model or imitates the prompt's delimiters.

    A cheap signal to log and alert on, not a defence: a pattern list misses any
    instruction phrased differently, and a plain false statement ("refunds are now
    unlimited") contains no instruction at all.
    """
    return bool(_INSTRUCTION.search(validate.text(text, "text")))


def _place(chunk: Chunk) -> tuple:
    return chunk.doc_id, chunk.section, chunk.start, chunk.end, chunk.text


def log_entry(
    answer: Answer,
    user: User,
    store: DocumentStore,
    count: Callable[[str], int] = count_tokens,
) -> dict:
    """What to record for one question (chapter 16): retrieval, cost, outcome and
    warning signs.

    ``unreadable`` counts prompt chunks the user may not read and ``superseded`` those
    whose document is no longer current in ``store`` (both must stay 0);
    ``instruction_like`` counts prompt chunks that match :func:`instruction_like`.
    """
    for value, name, kind in (
        (answer, "answer", Answer),
        (user, "user", User),
        (store, "store", DocumentStore),
    ):
        if not isinstance(value, kind):
            raise TypeError(
                f"{name} must be a {kind.__name__}, got {type(value).__name__}"
            )
    meta = store.meta
    current = {_place(c) for c in store.chunks}
    chunks = [r.chunk for r in answer.retrieved]
    documents = [
        f"{c.doc_id}@v{meta[c.doc_id].version}"
        if c.doc_id in meta
        else f"{c.doc_id}@deleted"
        for c in chunks
    ]
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
        "unreadable": sum(
            c.doc_id not in meta or not user.can_read(meta[c.doc_id].access)
            for c in chunks
        ),
        "superseded": sum(_place(c) not in current for c in chunks),
        "instruction_like": sum(instruction_like(c.text) for c in chunks),
    }


DEFAULT_LIMITS = {
    # more abstentions than usual: retrieval or the index may have broken
    "abstention_rate": 0.3,
    "failed_claims_rate": 0.1,  # answers with a claim that fails the grounding checks
    # questions whose best retrieval score is below min_top_score
    "low_score_rate": 0.3,
    "min_top_score": 1.0,  # for BM25 scores; a cosine retriever needs its own value
    "max_prompt_tokens": 4000,  # cost: the largest prompt allowed before an alert
}


def alerts(
    entries: Sequence[dict], limits: Mapping[str, float] | None = None
) -> list[str]:
    """Alerts for a batch of :func:`log_entry` records: any unreadable, superseded or
    instruction-like chunk in a prompt, and rates of abstention, failed claims and low
    retrieval scores above their limits."""
    entries = validate.sequence(entries, "entries", "log entries (dicts)")
    if not entries:
        raise ValueError("there are no log entries to watch")
    if limits is not None and not isinstance(limits, Mapping):
        raise TypeError(
            f"limits must map limit names to numbers, got {type(limits).__name__}"
        )
    for key, value in (limits or {}).items():
        if key not in DEFAULT_LIMITS:
            raise ValueError(
                f"unknown limit {key!r}; the limits are {', '.join(DEFAULT_LIMITS)}"
            )
        validate.real(value, f"the limit {key}")
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    n = len(entries)
    messages = []
    for key, what in (
        ("unreadable", "chunks the user may not read"),
        ("superseded", "superseded or deleted chunks"),
        ("instruction_like", "chunks that address the model"),
    ):
        total = sum(e[key] for e in entries)
        if total:
            messages.append(f"{total} {what} reached a prompt")
    answered = [e for e in entries if not e["abstained"]]
    rates = {
        "abstention_rate": (n - len(answered)) / n,
        "failed_claims_rate": sum(e["failed_claims"] > 0 for e in answered)
        / len(answered)
        if answered
        else 0.0,
        "low_score_rate": sum(
            e["top_score"] is None or e["top_score"] < limits["min_top_score"]
            for e in entries
        )
        / n,
    }
    for key, rate in rates.items():
        if rate > limits[key]:
            messages.append(
                f"{key.replace('_', ' ')} {rate:.2f} is above its limit "
                f"{limits[key]:.2f}"
            )
    biggest = max(e["prompt_tokens"] for e in entries)
    if biggest > limits["max_prompt_tokens"]:
        messages.append(
            f"a prompt took {biggest} tokens, above the limit "
            f"{int(limits['max_prompt_tokens'])}"
        )
    return messages
