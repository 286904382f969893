"""One cited answer followed from question to verdict (chapter 15).

:func:`trace_answer` asks a pipeline whose reader is a
:class:`~ragbook.generation.cited.CitedReader` one question and keeps every step: the
chunks retrieved, the numbered sentences the model read and those it may cite, its raw
reply under the grammar, what the reader did with the reply (kept it, moved the
citation, quoted the evidence, or refused, and why), the rendered answer, the grounding
checks' verdict on each claim (:func:`~ragbook.generation.verification.check_answer`),
and, for a labelled question, the key's verdict
(:func:`~ragbook.evaluation.answers.score_answer`). :meth:`Trace.render` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import validate
from ..generation.cited import CitedReader
from ..generation.cited_prompt import Sentence, parse_claims
from ..generation.verification import ClaimCheck
from ..show import WIDTH, wrap
from .answers import score_answer

__all__ = ["ACTIONS", "Trace", "trace_answer"]

# what the reader can do with the model's reply
ACTIONS = {
    "kept": "kept the model's words and the sentences it named",
    "moved": (
        "moved the citation: another sentence it may cite holds more of the "
        "answer's words than the one the model named"
    ),
    "quoted": (
        "quoted the evidence: the model's words failed the support check, so the "
        "answer is the sentence it cited"
    ),
    "refused": "refused",
}


@dataclass(frozen=True)
class Trace:
    """Every step of one cited answer (see the module's description). ``named`` are
    the sentence ids of the model's reply, ``evidence`` those the answer rests on;
    ``correct`` is None for a question without a key."""

    question: str
    retrieved: tuple[str, ...]
    shown: tuple[Sentence, ...]
    citable: tuple[str, ...]
    reply: str | None
    named: tuple[str, ...]
    action: str
    why: str
    answer: str
    evidence: tuple[str, ...]
    checks: tuple[ClaimCheck, ...]
    correct: bool | None

    @property
    def supported(self) -> bool:
        """Answered, with at least one claim, and every claim passes the checks."""
        return (
            self.action != "refused"
            and bool(self.checks)
            and all(c.supported for c in self.checks)
        )

    def steps(self) -> list[tuple[str, str]]:
        """The trace as (step, what happened), in the order of the pipeline."""
        out = [("question", self.question)]
        out.append(("retrieved", "; ".join(self.retrieved)))
        read = [
            f"[{s.id}]{'' if s.id in self.citable else ' (may not cite)'} {s.text}"
            for s in self.shown
        ]
        out.append(("model read", "\n".join(read)))
        out.append(
            ("model wrote", "(not asked)" if self.reply is None else repr(self.reply))
        )
        did = ACTIONS[self.action]
        if self.action == "refused":
            did = f"refused: {self.why}"
        elif self.action == "moved":
            did = (
                f"{did} (named {', '.join(self.named)}, cites "
                f"{', '.join(self.evidence)})"
            )
        out.append(("reader", did))
        out.append(("answer", self.answer))
        if self.action != "refused":
            for n, check in enumerate(self.checks, start=1):
                out.append((f"check {n}", _verdict(check)))
        if self.correct is not None:
            if not self.correct:
                verdict = "not correct"
            elif self.action == "refused":
                verdict = "correct: the sources do not hold the answer"
            else:
                verdict = (
                    "correct and supported"
                    if self.supported
                    else ("correct, but not supported")
                )
            out.append(("key", verdict))
        return out

    def render(self, width: int = WIDTH) -> str:
        """The steps as lines of at most ``width`` characters."""
        label = max(len(step) for step, _ in self.steps()) + 2
        lines = []
        for step, text in self.steps():
            for n, line in enumerate(text.split("\n")):
                head = f"{step:{label}}" if n == 0 else " " * label
                lines.append(wrap(head + line, " " * (label + 2), width))
        return "\n".join(lines)


def _verdict(check: ClaimCheck) -> str:
    cites = " ".join(f"[{n}]" for n in check.cited) or "nothing"
    parts = [
        f"{check.claim!r} cites {cites}",
        f"support {check.support:.2f} (at least {check.support_threshold:.2f})",
    ]
    if check.missing_sources:
        parts.append(f"no source {check.missing_sources}")
    if check.unsupported_numbers:
        parts.append(
            f"numbers in no cited source: {', '.join(check.unsupported_numbers)}"
        )
    if check.unsupported_quotes:
        parts.append("a quotation in no cited source")
    parts.append("supported" if check.supported else "NOT supported")
    return "; ".join(parts)


def _action(reading) -> str:
    if reading.refused:
        return "refused"
    if reading.quoted:
        return "quoted"
    return "moved" if reading.moved else "kept"


def trace_answer(system, question) -> Trace:
    """``question`` (a labelled :class:`~ragbook.corpus.labels.Question`, or its text)
    asked of ``system``, a :class:`~ragbook.system.rag.RAGPipeline` (anything with
    ``answer(text)`` and a ``generator``) whose reader is a
    :class:`~ragbook.generation.cited.CitedReader`, with every step kept."""
    reader = getattr(system, "generator", None)
    if not isinstance(reader, CitedReader):
        raise TypeError(
            "trace_answer follows a cited answer: the system's generator must be a "
            f"CitedReader, got {type(reader).__name__}"
        )
    text = question if isinstance(question, str) else question.text
    text = validate.text(text, "question")
    result = system.answer(text)
    reading = reader.last
    shown = reader.shown(result.prompt)
    citable = {s.id for s in reader.citable(result.prompt, shown)}
    named: list[str] = []
    if reading.reply is not None:
        for _, sentences in parse_claims(reading.reply, shown):
            named.extend(s.id for s in sentences if s.id not in named)
    correct = None
    if not isinstance(question, str):
        sources = [s.text for s in result.prompt.sources]
        correct = score_answer(result.answer, question, sources).correct
    return Trace(
        question=text,
        retrieved=tuple(
            f"[{r.rank}] {r.source} (chunk {r.chunk.id})" for r in result.retrieved
        ),
        shown=tuple(shown),
        citable=tuple(s.id for s in shown if s.id in citable),
        reply=reading.reply,
        named=tuple(named),
        action=_action(reading),
        why=reading.why,
        answer=result.answer,
        evidence=tuple(s.id for s in reading.evidence),
        checks=tuple(result.checks),
        correct=correct,
    )
