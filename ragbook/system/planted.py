"""A suite of false figures planted in copies of the corpus (chapter 15).

Each case of ``ragbook/data/conflicts.json`` contradicts a figure an article states: in
a new short document (kind ``file``, an old fact sheet, say) or in a sentence planted
right after the true one that claims to correct it (kind ``after``). Its question asks
for that figure. :func:`run_conflicts` answers every question over its planted copy of
the corpus and records whether the answer names the planted figure, the true one, and
whether it says that the sources disagree. A reader fails a case when it gives the
planted figure and says nothing of the disagreement (:attr:`ConflictResult.silent`).
The ``dev`` cases served to build the disagreement check
(:mod:`ragbook.generation.conflicts`); the ``test`` cases were written after its first
form, the ``holdout`` cases later still, without sight of its rules (:data:`SPLITS`).
More cases, written later still in the same format and kept apart in another file for
one reading, are loaded by giving that file's ``path`` (split ``later``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Callable, Sequence

from .. import validate
from ..corpus.documents import Document, load_corpus, parse_markdown
from ..corpus.keys import normalize_answer
from ..generation.conflicts import DISAGREE

__all__ = [
    "SPLITS",
    "Conflict",
    "ConflictResult",
    "load_conflicts",
    "plant_conflict",
    "run_conflicts",
]

KINDS = ("file", "after")
# dev: used while building the check; test: written after its first form, read once;
# holdout: written later by someone who had not seen its rules, read once at the end;
# later: written after that, in a file of its own, read once by the reader chapter
SPLITS = ("dev", "test", "holdout", "later")


@dataclass(frozen=True)
class Conflict:
    """One planted false figure: see the module's description and the suite's file."""

    id: str
    kind: str
    host: str
    question: str
    true: tuple[str, ...]
    false: tuple[str, ...]
    text: str
    after: str = ""
    title: str = ""
    split: str = "dev"


def load_conflicts(
    documents: Sequence[Document] | None = None, path: str | os.PathLike | None = None
) -> list[Conflict]:
    """The bundled suite (or the suite in the file ``path``, of the same format), every
    case checked against ``documents`` (by default the bundled corpus): its host
    exists, its ``after`` sentence occurs once there, and no form of its false figure
    occurs there."""
    if path is None:
        file = resources.files("ragbook") / "data" / "conflicts.json"
        raw = json.loads(file.read_text("utf-8"))
    else:
        with open(os.fspath(path), encoding="utf-8") as handle:
            raw = json.load(handle)
    by_id = {d.id: d for d in documents or load_corpus()}
    cases = []
    for entry in raw["cases"]:
        case = Conflict(
            entry["id"],
            entry["kind"],
            entry["host"],
            entry["question"],
            tuple(entry["true"]),
            tuple(entry["false"]),
            entry["text"],
            entry.get("after", ""),
            entry.get("title", ""),
            entry.get("split", ""),
        )
        if case.split not in SPLITS:
            raise ValueError(
                f"case {case.id}: split must be one of {', '.join(SPLITS)}, got "
                f"{case.split!r}"
            )
        if case.kind not in KINDS:
            raise ValueError(
                f"case {case.id}: kind must be one of {KINDS}, got {case.kind!r}"
            )
        if case.host not in by_id:
            raise ValueError(f"case {case.id}: no article {case.host!r}")
        host = by_id[case.host].text
        if case.kind == "after" and host.count(case.after) != 1:
            raise ValueError(
                f"case {case.id}: its 'after' sentence is not once in {case.host}"
            )
        if case.kind == "file" and not case.title:
            raise ValueError(f"case {case.id}: a planted file needs a title")
        if _names(host, case.false):
            raise ValueError(
                f"case {case.id}: its false figure is in {case.host} already"
            )
        cases.append(case)
    return cases


def plant_conflict(
    case: Conflict, documents: Sequence[Document] | None = None
) -> list[Document]:
    """A copy of the corpus with the case's false figure planted: a new document last,
    or the sentence after the true one in its host."""
    out = []
    for document in documents or load_corpus():
        if case.kind == "after" and document.id == case.host:
            cut = document.text.index(case.after) + len(case.after)
            text = f"{document.text[:cut]} {case.text}{document.text[cut:]}"
            document = parse_markdown(text, document.id)
        out.append(document)
    if case.kind == "file":
        out.append(
            parse_markdown(f"# {case.title}\n\n{case.text}\n", f"{case.id}-note")
        )
    return out


def _names(answer: str, forms: Sequence[str]) -> bool:
    """Whether the answer's normalised words hold one of the forms' words in a row."""
    words = f" {' '.join(normalize_answer(answer))} "
    return any(f" {' '.join(normalize_answer(form))} " in words for form in forms)


@dataclass(frozen=True)
class ConflictResult:
    """What the reader answered to one case: whether the answer names the ``planted``
    figure, the ``true`` one, and whether it says the sources ``disagree``."""

    case: Conflict
    answer: str
    planted: bool
    true: bool
    disagree: bool

    @property
    def silent(self) -> bool:
        """The planted figure given, and no word of the disagreement."""
        return self.planted and not self.disagree


def run_conflicts(
    make_answer: Callable[[list[Document]], Callable[[str], str]],
    cases: Sequence[Conflict] | None = None,
) -> list[ConflictResult]:
    """Every case answered: ``make_answer(documents)`` builds a system over the planted
    copy of the corpus and returns a function from a question to its answer."""
    if not callable(make_answer):
        raise TypeError("make_answer must be a function of a list of documents")
    results = []
    for case in load_conflicts() if cases is None else cases:
        answer = validate.text(
            make_answer(plant_conflict(case))(case.question), "answer"
        )
        results.append(
            ConflictResult(
                case,
                answer,
                _names(answer, case.false),
                _names(answer, case.true),
                DISAGREE in answer,
            )
        )
    return results
