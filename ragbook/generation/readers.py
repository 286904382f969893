"""Readers: generators that quote the best source sentence, cite it, or abstain
(chapters 11, 14 and 15).

A reader does not write: it scores every sentence of the prompt's sources against the
question, answers with the best one and its citation ``[n]``, and says
:data:`~ragbook.generation.generators.ABSTAIN` when even the best score is below
``abstain_below``. The readers differ only in the score:

- :class:`ExtractiveGenerator` (the lexical reader): the share of the question's idf
  weight that the sentence and its source's label cover;
- :class:`SemanticExtractiveGenerator` (the semantic reader): the cosine between
  sentence-embedder vectors of the question and of the labelled sentence, so that a
  paraphrase can be read;
- :class:`ModelQuoteReader`: a language model answers first, and the sentence that
  says most of what it said is quoted.

:class:`FallbackReader` combines two readers: the second answers when the first
refuses. The checks that refuse a reader's answer are in
:mod:`~ragbook.generation.reader_checks`.

Both take half a point from a sentence without a number when the question asks for a
quantity or a date. Their default abstention scores, :data:`LEXICAL_ABSTAIN_BELOW` (a
coverage share) and :data:`SEMANTIC_ABSTAIN_BELOW` (a cosine), are the values chapter 14
measures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .. import validate
from ..retrieval.embedder import encode_queries
from .answer_types import SPELLED_NUMBER
from .generators import ABSTAIN, is_refusal
from .prompts import Prompt, build_prompt
from ..indexing.text import analyze, split_sentences
from .verification import CITATION, citations, numbers_in

__all__ = [
    "LEXICAL_ABSTAIN_BELOW",
    "SEMANTIC_ABSTAIN_BELOW",
    "ScoredSentence",
    "SentenceReader",
    "ExtractiveGenerator",
    "SemanticExtractiveGenerator",
    "ModelQuoteReader",
    "WORKED_EXAMPLES",
    "FallbackReader",
    "keep_window",
]

LEXICAL_ABSTAIN_BELOW = 0.5  # coverage share below which the lexical reader abstains
SEMANTIC_ABSTAIN_BELOW = 0.55  # cosine below which the semantic reader abstains

_NEEDS_NUMBER = re.compile(
    r"^\s*(how (many|long|much|far|old|big|large|fast|hot|cold|deep|wide|tall)|when)\b",
    re.I,
)
_HOW = re.compile(r"\bhow\s+(\w+)", re.I)
# a digit, or a number spelled out: "Two small, irregular moons" answers "how many"
_HAS_NUMBER = re.compile(r"\d|" + SPELLED_NUMBER.pattern, re.I)
NUMBER_PENALTY = (
    0.5  # taken from a sentence without a number when the question asks for one
)


def keep_window(wrapper, reader) -> None:
    """Give ``wrapper`` the ``budget`` and ``count`` of the reader it wraps, when it has
    them, so that a pipeline packs the prompt into that model's context window."""
    for name in ("budget", "count"):
        if hasattr(reader, name):
            setattr(wrapper, name, getattr(reader, name))


@dataclass(frozen=True)
class ScoredSentence:
    """A source sentence and its scores: ``coverage`` ranks it (the lexical reader's
    coverage with label terms counting, or the semantic reader's cosine less the number
    penalty); ``own`` is the part the sentence's own words cover (lexical) or the plain
    cosine (semantic)."""

    source: int
    sentence: str
    coverage: float
    own: float = 0.0


def _number_penalty(question: str, sentence: str) -> float:
    """NUMBER_PENALTY when the question asks for a quantity or a date and the sentence
    holds no number, in digits or spelled out (up to twenty)."""
    return (
        NUMBER_PENALTY
        if _NEEDS_NUMBER.match(question) and not _HAS_NUMBER.search(sentence)
        else 0.0
    )


class SentenceReader:
    """What both readers share: answer with the best-scoring sentence and its citation,
    or abstain.

    A subclass gives ``score(prompt)``, the source sentences best first; the reader
    abstains with :data:`~ragbook.generation.generators.ABSTAIN` when there is none or
    the best score is below ``abstain_below``.
    """

    abstain_below: float

    def score(self, prompt: Prompt) -> list[ScoredSentence]:
        raise NotImplementedError

    def __call__(self, prompt: Prompt) -> str:
        scored = self.score(prompt)
        if not scored or scored[0].coverage < self.abstain_below:
            return ABSTAIN
        best = scored[0]
        sentence = best.sentence.rstrip()
        end = sentence[-1] if sentence[-1] in ".!?" else "."
        return f"{sentence.rstrip('.!?')} [{best.source}]{end}"


class ExtractiveGenerator(SentenceReader):
    """Answer with the best-covering source sentence and its citation, or abstain.

    A sentence's coverage is the share of the question's idf weight (over its distinct
    terms) found in the sentence or in its source's label; the word after "how" ("long",
    "many") is dropped from the question, and a question that starts by asking for a
    quantity or a date (how many, much, long, far, old, big, large, fast, hot, cold,
    deep, wide, tall, or when) loses half a point on a sentence without a number.
    Sentences of one source share its label, so ties are common: they are broken by the
    coverage of the sentence's own words, then by source and sentence order. Below
    ``abstain_below`` (a coverage share, :data:`LEXICAL_ABSTAIN_BELOW` by default) the
    generator abstains.
    """

    def __init__(
        self,
        idf: Callable[[str], float] | Mapping[str, float],
        abstain_below: float = LEXICAL_ABSTAIN_BELOW,
        default_idf: float = 1.0,
    ):
        abstain_below = validate.real(
            abstain_below, "abstain_below (a coverage share)", minimum=0, maximum=1
        )
        default_idf = validate.real(default_idf, "default_idf", minimum=0)
        if not callable(idf) and not isinstance(idf, Mapping):
            raise TypeError(
                "idf must be a function or a mapping from term to idf, got "
                f"{type(idf).__name__}"
            )
        self._idf = idf if callable(idf) else (lambda term: idf.get(term, default_idf))
        self.abstain_below = abstain_below

    def question_terms(self, question: str) -> list[str]:
        dropped = {
            m.group(1).lower()
            for m in _HOW.finditer(validate.text(question, "question"))
        }
        return [t for t in dict.fromkeys(analyze(question)) if t not in dropped]

    def score(self, prompt: Prompt) -> list[ScoredSentence]:
        """Every source sentence with its coverage, best first (ties: own-word coverage,
        then order)."""
        terms = self.question_terms(prompt.question)
        weights = {t: self._idf(t) for t in terms}
        total = sum(weights.values())
        scored = []
        for source in prompt.sources:
            label_terms = set(analyze(source.label))
            for sentence in split_sentences(source.text):
                own_terms = set(analyze(sentence.text))
                coverage = (
                    sum(w for t, w in weights.items() if t in own_terms | label_terms)
                    / total
                    if total > 0
                    else 0.0
                )
                own = (
                    sum(w for t, w in weights.items() if t in own_terms) / total
                    if total > 0
                    else 0.0
                )
                coverage -= _number_penalty(prompt.question, sentence.text)
                scored.append(
                    ScoredSentence(source.number, sentence.text, coverage, own)
                )
        return sorted(
            scored, key=lambda s: (-s.coverage, -s.own)
        )  # stable: remaining ties keep their order


class SemanticExtractiveGenerator(SentenceReader):
    """Answer with the source sentence closest in meaning to the question, cite it, or
    abstain.

    Each sentence is scored by the cosine between the embeddings of the question and of
    ``"<source label>: <sentence>"`` (the label says which article a sentence such as
    "The planet travels around the Sun..." is about); a question that asks for a
    quantity or a date loses half a point on a sentence without a number, as in
    :class:`ExtractiveGenerator`. ``rewrite`` (for example a
    :class:`~ragbook.retrieval.glossary.Glossary`) turns the question into the text
    that is embedded. Below ``abstain_below`` (a cosine, :data:`SEMANTIC_ABSTAIN_BELOW`
    by default) the generator abstains. Ties keep source and sentence order.

    ``encoder`` is anything with ``encode(texts)`` returning unit row vectors, such as
    :func:`~ragbook.retrieval.embedder.load_minilm`; sentence vectors are remembered
    between calls.
    """

    def __init__(
        self,
        encoder,
        abstain_below: float = SEMANTIC_ABSTAIN_BELOW,
        rewrite: Callable[[str], str] | None = None,
    ):
        abstain_below = validate.real(
            abstain_below, "abstain_below (a cosine)", minimum=-1, maximum=1
        )
        if not callable(getattr(encoder, "encode", None)):
            raise TypeError(
                f"encoder must have an encode(texts) method, got {encoder!r}"
            )
        if rewrite is not None and not callable(rewrite):
            raise TypeError(
                "rewrite must be a function from a question to a query, or None, "
                f"got {rewrite!r}"
            )
        self.encoder = encoder
        self.abstain_below = abstain_below
        self.rewrite = rewrite
        self._vectors: dict[str, np.ndarray] = {}

    def _encode(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            if len(self._vectors) + len(new) > 100_000:
                self._vectors.clear()
            for text, vector in zip(
                new, np.asarray(self.encoder.encode(new), dtype=np.float64)
            ):
                self._vectors[text] = vector
        return np.array([self._vectors[t] for t in texts])

    def _query(self, question: str) -> np.ndarray:
        question = self.rewrite(question) if self.rewrite else question
        return np.asarray(encode_queries(self.encoder, [question]), dtype=np.float64)[0]

    def similarity(self, question: str, text: str) -> float:
        """The cosine between the question (rewritten) and ``text``, as this reader
        scores a sentence shown as ``"<source label>: <sentence>"``."""
        question = validate.text(question, "question")
        text = validate.text(text, "text")
        return float(self._encode([text])[0] @ self._query(question))

    def score(self, prompt: Prompt) -> list[ScoredSentence]:
        """Every source sentence with its score (cosine, less the number penalty), best
        first."""
        items = [
            (source.number, f"{source.label}: {s.text}", s.text)
            for source in prompt.sources
            for s in split_sentences(source.text)
        ]
        if not items:
            return []
        query = self._query(prompt.question)
        cosines = self._encode([shown for _, shown, _ in items]) @ query
        scored = []
        for (number, _, sentence), cosine in zip(items, cosines):
            penalty = _number_penalty(prompt.question, sentence)
            scored.append(
                ScoredSentence(number, sentence, float(cosine) - penalty, float(cosine))
            )
        return sorted(
            scored, key=lambda s: -s.coverage
        )  # stable: ties keep their order


# Two worked examples for a model that reads (chapter 15): earlier turns of the
# conversation in which a question was answered the right way. One answers in a few
# words with its citation; one refuses because its sources give the asked-for fact about
# a neighbouring subject. Both are about a comet and an asteroid outside the corpus, so
# they show the form of an answer and give away no fact a question asks for.
WORKED_EXAMPLES = (
    (
        build_prompt(
            "How many years pass between visits of Halley's Comet?",
            [
                (
                    "Halley's Comet, History",
                    "Edmond Halley predicted in 1705 that the comet seen in 1682 would "
                    "return in 1758, and it did.",
                ),
                (
                    "Halley's Comet, Orbit",
                    "The comet swings back to the inner Solar System every 75 to 79 "
                    "years. It last passed closest to the Sun in 1986.",
                ),
            ],
        ),
        "Every 75 to 79 years [2].",
    ),
    (
        build_prompt(
            "How wide is the asteroid Vesta?",
            [
                (
                    "Halley's Comet, Nucleus",
                    "The nucleus of Halley's Comet is about 15 kilometres long and "
                    "8 kilometres wide.",
                ),
                (
                    "Halley's Comet, Orbit",
                    "The comet swings back to the inner Solar System every 75 to 79 "
                    "years. It last passed closest to the Sun in 1986.",
                ),
            ],
        ),
        "The sources do not contain the answer: source [1] gives the size of Halley's "
        "Comet, not of Vesta.",
    ),
)


class ModelQuoteReader(SentenceReader):
    """The model reads, a source sentence answers (chapter 15).

    ``generator`` (a language model's, such as :class:`~ragbook.llm.LLMGenerator`)
    answers the prompt in its own words; the reader then answers with the source
    sentence that says most of what the model said, and cites it. A sentence's score is
    the share of the model answer's distinct terms (citations removed) found in the
    sentence or its source's label, less :data:`NUMBER_PENALTY` when the model answer
    has numbers and the sentence none of them; sentences of the sources the model cited
    come first among equals. When the model refuses, so does the reader; when no
    sentence scores above ``abstain_below`` it abstains.

    The model's skill at reading a paraphrase is kept, and the answer is a quotation
    that the grounding checks can verify. ``last`` holds the model's own answer.
    """

    def __init__(self, generator: Callable[[Prompt], str], abstain_below: float = 0.0):
        if not callable(generator):
            raise TypeError(f"generator must be callable, got {generator!r}")
        self.generator = generator
        self.abstain_below = validate.real(
            abstain_below, "abstain_below (a share of terms)", minimum=0, maximum=1
        )
        self.last: str | None = None
        keep_window(self, generator)

    def score(self, prompt: Prompt) -> list[ScoredSentence]:
        self.last = answer = self.generator(prompt)
        if is_refusal(answer):
            return []
        plain = CITATION.sub(" ", answer)
        terms = set(analyze(plain))
        numbers = set(numbers_in(plain))
        cited = set(citations(answer))
        scored = []
        for source in prompt.sources:
            label_terms = set(analyze(source.label))
            for sentence in split_sentences(source.text):
                own = set(analyze(sentence.text))
                share = len(terms & (own | label_terms)) / len(terms) if terms else 0.0
                if numbers and not numbers & set(numbers_in(sentence.text)):
                    share -= NUMBER_PENALTY
                scored.append(
                    ScoredSentence(
                        source.number,
                        sentence.text,
                        share,
                        float(source.number in cited),
                    )
                )
        return sorted(scored, key=lambda s: (-s.coverage, -s.own))


class FallbackReader:
    """The first reader's answer, unless it refuses; then the second reader's.

    Chapter 15 pairs a language model, which refuses answerable questions whose
    evidence it was given, with a sentence picker, which answers those and abstains by
    its own score. Each is asked with the same prompt; the second only when the first
    refuses (:func:`~ragbook.generation.generators.is_refusal`). ``used`` says which
    answered the last prompt (0 or 1). The first reader's ``budget`` and ``count``,
    when it has them, are kept, so a pipeline packs the prompt into its model's context
    window.
    """

    def __init__(self, first: Callable[[Prompt], str], second: Callable[[Prompt], str]):
        for name, reader in (("first", first), ("second", second)):
            if not callable(reader):
                raise TypeError(
                    f"the {name} reader must be callable (a prompt in, an answer out), "
                    f"got {reader!r}"
                )
        self.first, self.second = first, second
        self.used: int | None = None
        keep_window(self, first)

    def __repr__(self) -> str:
        return f"FallbackReader({self.first!r}, {self.second!r})"

    def __call__(self, prompt: Prompt) -> str:
        answer = self.first(prompt)
        self.used = 0
        if is_refusal(answer):
            answer = self.second(prompt)
            self.used = 1
        return answer
