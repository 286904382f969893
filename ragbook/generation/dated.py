"""Sources with dates (chapter 15): where the sources that disagree
(:mod:`~ragbook.generation.conflicts`) all carry a version and a date, as an
organisation's documents do (the tool puts them in the sources' labels), the newer
source is preferred (:func:`newest`, :func:`settle`), and the answer says that it
was.
"""

from __future__ import annotations

from .cited_prompt import Sentence, quote
from .conflicts import DISAGREE
from .prompts import Prompt
from ..corpus.orgdocs import label_date

__all__ = ["OLDER", "newest", "settle"]

OLDER = "Older source:"  # before the other side, when the answer follows the newer


def newest(sentences: list[Sentence], prompt: Prompt):
    """The sentence of the newest source among ``sentences`` and the date of each
    sentence's source, (sentence, dates), when every source is dated (a label that
    names a version and a date; :func:`~ragbook.corpus.orgdocs.label_date`) and one
    date is later than all the others; else None: undated sources, or two sources of
    the newest date, leave the disagreement to the reader of the answer."""
    dates = [label_date(prompt.sources[s.source - 1].label) for s in sentences]
    if not sentences or None in dates:
        return None
    latest = max(dates)
    if dates.count(latest) > 1:
        return None
    return sentences[dates.index(latest)], dates


def settle(
    answer: str, evidence: tuple[Sentence, ...], against: list[Sentence], prompt
) -> tuple[str, tuple[Sentence, ...], list[Sentence], str]:
    """An answer, its evidence and the sentences that disagree with it, with the note
    that says so: (answer, evidence, the other side, the date the answer follows or
    ``""``).

    When the sources of the first evidence sentence and of every sentence against it
    are dated and one is the newest (:func:`newest`), the answer follows that one
    (quoted, when it was against the model's evidence) and quotes each older side
    after :data:`OLDER`; else the sentences against it are quoted after
    :data:`DISAGREE`. The dates are in the sources' labels, not in the answer, so that
    the grounding checks read the answer against the sources' texts as they read any
    other."""
    settled = newest([evidence[0], *against], prompt)
    if not settled:
        notes = " ".join(quote(s) for s in against)
        return f"{answer} {DISAGREE} {notes}", evidence, against, ""
    chosen, dates = settled
    older = [s for s in [evidence[0], *against] if s != chosen]
    if chosen != evidence[0]:  # the model's evidence is the older side
        answer, evidence = quote(chosen), (chosen,)
    notes = " ".join(f"{OLDER} {quote(s)}" for s in older)
    return f"{answer} {notes}", evidence, older, max(dates).isoformat()
