"""An answer with everything it rests on: the question, the prompt, the retrieved chunks
and the grounding checks of each claim.

:func:`ragbook.system.pipeline.answer_question` makes one; the measures of
:mod:`ragbook.evaluation.end_to_end` and the tool read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..indexing.chunking import Chunk
from .generators import is_refusal
from .prompts import Prompt
from .verification import ClaimCheck

__all__ = ["Retrieved", "Answer"]


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk: its rank, score, the source label shown in the prompt, and
    the chunk."""

    rank: int
    score: float
    source: str
    chunk: Chunk


@dataclass(frozen=True)
class Answer:
    """Everything :func:`~ragbook.system.pipeline.answer_question` did: the answer, its
    prompt, what was retrieved, and the checks."""

    question: str
    answer: str
    prompt: Prompt
    retrieved: tuple[Retrieved, ...]
    checks: tuple[ClaimCheck, ...]

    @property
    def abstained(self) -> bool:
        """The generator refused: :data:`~ragbook.generation.generators.ABSTAIN`, or a
        model saying the sources do not contain the answer
        (:func:`~ragbook.generation.generators.is_refusal`)."""
        return is_refusal(self.answer)

    @property
    def supported(self) -> bool:
        """Not an abstention, at least one claim, and every claim passes
        :func:`ragbook.generation.verification.check_claim`."""
        return (
            not self.abstained
            and bool(self.checks)
            and all(c.supported for c in self.checks)
        )
