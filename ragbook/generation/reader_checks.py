"""Checks that guard a reader: each wraps a reader and refuses its answer when the
answer does not fit the question (chapter 15).

- :class:`SubjectCheck` refuses an answer about another subject than the question's;
- :class:`RelevanceCheck` one whose sentence is not close enough in meaning to the
  question;
- :class:`ModelCheck` one that a language model says does not answer it.

A refusal passes every check unchanged. :func:`labelled_answer` shows an answer as the
relevance and model checks read it.
"""

from __future__ import annotations

import re
from typing import Callable

from .. import validate
from .generators import ABSTAIN, is_refusal
from .prompts import Prompt
from .readers import SemanticExtractiveGenerator, keep_window
from .verification import CITATION, citations

__all__ = [
    "SubjectCheck",
    "RelevanceCheck",
    "ModelCheck",
    "labelled_answer",
]


class SubjectCheck:
    """A reader's answer, refused when it is about another subject than the question.

    ``subjects`` are names a question can be about (chapter 15 passes the corpus's
    article titles: "Mars", "Moon"). When the question names some of them, the answer
    stands only if it, or the label of a source it cites, names one of those too;
    otherwise the reader says :data:`~ragbook.generation.generators.ABSTAIN`. A
    question naming no subject, and a refusal, pass unchanged. Names match as whole
    words, ignoring case.

    It catches the error of answering an unanswerable question with a neighbouring fact
    (another planet's escape velocity) and citing it; it cannot catch a wrong fact
    about the right subject. ``refused`` counts the answers it refused.
    """

    def __init__(self, reader: Callable[[Prompt], str], subjects):
        if not callable(reader):
            raise TypeError(
                f"reader must be callable (a prompt in, an answer out), got {reader!r}"
            )
        names = validate.texts(subjects, "subjects")
        if not names or any(not n.strip() for n in names):
            raise ValueError(
                "subjects must be a non-empty list of non-empty names, such as the "
                "articles' titles"
            )
        self.reader = reader
        self.subjects = tuple(dict.fromkeys(n.strip() for n in names))
        self._patterns = [
            (name, re.compile(rf"\b{re.escape(name)}\b", re.I))
            for name in self.subjects
        ]
        self.refused = 0
        keep_window(self, reader)

    def __repr__(self) -> str:
        return f"SubjectCheck({self.reader!r}, {len(self.subjects)} subjects)"

    def named(self, text: str, cased: bool = False) -> set[str]:
        """The subjects ``text`` names; with ``cased``, only those it writes as the
        subject is written ("which moon is bigger" does not name the Moon), unless
        ``text`` is all in lower case."""
        text = validate.text(text, "text")
        found = {name for name, pattern in self._patterns if pattern.search(text)}
        if cased and text != text.lower():
            found = {n for n in found if re.search(rf"\b{re.escape(n)}\b", text)}
        return found

    def __call__(self, prompt: Prompt) -> str:
        answer = self.reader(prompt)
        wanted = self.named(prompt.question)
        if is_refusal(answer) or not wanted:
            return answer
        said = self.named(answer)
        for number in citations(answer):
            if 1 <= number <= len(prompt.sources):
                said |= self.named(prompt.sources[number - 1].label)
        if wanted & said:
            return answer
        self.refused += 1
        return ABSTAIN


_END_AFTER_CITATION = re.compile(r"\s+([.!?])$")


def labelled_answer(prompt: Prompt, answer: str) -> str:
    """An answer as a reader of it sees a source sentence: citations removed, after
    the label of the first source it cites (``"Mercury: It takes 87.969 days."``)."""
    cited = [n for n in citations(answer) if 1 <= n <= len(prompt.sources)]
    sentence = _END_AFTER_CITATION.sub(
        r"\1", " ".join(CITATION.sub(" ", answer).split())
    )
    return f"{prompt.sources[cited[0] - 1].label}: {sentence}" if cited else sentence


class RelevanceCheck:
    """A reader's answer, refused when its sentence is not close enough in meaning to
    the question (chapter 15).

    Every reader of :mod:`~ragbook.generation.readers` answers with a source sentence
    and its citation. The check asks of that sentence what the semantic reader asks of
    its own answers: its cosine with the question, shown as
    ``"<cited source's label>: <sentence>"`` and measured by ``judge`` (a
    :class:`~ragbook.generation.readers.SemanticExtractiveGenerator`, with its embedder
    and question rewrite), must reach ``refuse_below`` (by default the judge's own
    ``abstain_below``); otherwise the answer becomes
    :data:`~ragbook.generation.generators.ABSTAIN`. A refusal passes unchanged.

    The model quotes a sentence for every question it does not refuse, a neighbouring
    fact for one the sources cannot answer; this check refuses the quotes that are far
    from the question. ``last_similarity`` is the last answer's cosine (None after a
    refusal); ``refused`` counts the answers it refused.
    """

    def __init__(
        self,
        reader: Callable[[Prompt], str],
        judge: SemanticExtractiveGenerator,
        refuse_below: float | None = None,
    ):
        if not callable(reader):
            raise TypeError(
                f"reader must be callable (a prompt in, an answer out), got {reader!r}"
            )
        if not isinstance(judge, SemanticExtractiveGenerator):
            raise TypeError(
                "judge must be a SemanticExtractiveGenerator (its embedder measures "
                f"the answer against the question), got {judge!r}"
            )
        self.reader, self.judge = reader, judge
        self.refuse_below = (
            judge.abstain_below
            if refuse_below is None
            else validate.real(
                refuse_below, "refuse_below (a cosine)", minimum=-1, maximum=1
            )
        )
        self.last_similarity: float | None = None
        self.refused = 0
        keep_window(self, reader)

    def __repr__(self) -> str:
        return f"RelevanceCheck({self.reader!r}, refuse_below={self.refuse_below})"

    def similarity(self, prompt: Prompt, answer: str) -> float:
        """The cosine between the question and the answer's sentence, labelled with the
        first source it cites."""
        return self.judge.similarity(prompt.question, labelled_answer(prompt, answer))

    def __call__(self, prompt: Prompt) -> str:
        answer = self.reader(prompt)
        self.last_similarity = None
        if is_refusal(answer):
            return answer
        self.last_similarity = self.similarity(prompt, answer)
        if self.last_similarity < self.refuse_below:
            self.refused += 1
            return ABSTAIN
        return answer


class ModelCheck:
    """A reader's answer, kept only when a language model says it answers the question
    (chapter 15: answer, then verify).

    The answer's sentence, labelled as :func:`labelled_answer` shows it, goes to
    ``model.relevance(question, passage)`` (a :class:`~ragbook.llm.LocalModel`'s
    logit(Yes) - logit(No) for "does the passage answer the question?"); below
    ``refuse_below`` the answer becomes :data:`~ragbook.generation.generators.ABSTAIN`.
    The default, 0, refuses exactly when the model finds No likelier than Yes, a
    threshold fixed before any measurement. A refusal passes unchanged.

    The subject check asks whether the sentence is about the question's subject, the
    relevance check how close in meaning it is; this one asks whether it states the fact
    asked for, which a neighbouring fact about the right subject does not.
    ``last_score`` is the last answer's score (None after a refusal); ``refused``
    counts the answers it refused.
    """

    def __init__(
        self, reader: Callable[[Prompt], str], model, refuse_below: float = 0.0
    ):
        if not callable(reader):
            raise TypeError(
                f"reader must be callable (a prompt in, an answer out), got {reader!r}"
            )
        if not callable(getattr(model, "relevance", None)):
            raise TypeError(
                "model must have a relevance(question, passage) method that scores "
                f"whether the passage answers (a LocalModel), got {model!r}"
            )
        self.reader, self.model = reader, model
        self.refuse_below = validate.real(
            refuse_below, "refuse_below (a difference of logits)"
        )
        self.last_score: float | None = None
        self.refused = 0
        keep_window(self, reader)

    def __repr__(self) -> str:
        return f"ModelCheck({self.reader!r}, refuse_below={self.refuse_below})"

    def __call__(self, prompt: Prompt) -> str:
        answer = self.reader(prompt)
        self.last_score = None
        if is_refusal(answer):
            return answer
        self.last_score = float(
            self.model.relevance(prompt.question, labelled_answer(prompt, answer))
        )
        if self.last_score < self.refuse_below:
            self.refused += 1
            return ABSTAIN
        return answer
