"""Readers: generators that quote the best source sentence, cite it, or abstain
(chapters 11 and 14).

A reader does not write: it scores every sentence of the prompt's sources against the
question, answers with the best one and its citation ``[n]``, and says
:data:`~ragbook.generators.ABSTAIN` when even the best score is below ``abstain_below``.
The readers differ only in the score:

- :class:`ExtractiveGenerator` (the lexical reader): the share of the question's idf
  weight that the sentence and its source's label cover;
- :class:`SemanticExtractiveGenerator` (the semantic reader): the cosine between
  sentence-embedder vectors of the question and of the labelled sentence, so that a
  paraphrase can be read;
- :class:`ModelQuoteReader`: a language model answers first, and the sentence that
  says most of what it said is quoted.

:class:`FallbackReader` combines two readers: the second answers when the first
refuses. :class:`SubjectCheck` refuses an answer about another subject than the
question's; :class:`RelevanceCheck` one whose sentence is not close enough in meaning to
the question; :class:`ModelCheck` one that a language model says does not answer it.

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

from . import validate
from .embedder import encode_queries
from .generators import ABSTAIN, is_refusal
from .prompts import Prompt, build_prompt
from .text import analyze, split_sentences
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
    "SubjectCheck",
    "RelevanceCheck",
    "ModelCheck",
    "labelled_answer",
]

LEXICAL_ABSTAIN_BELOW = 0.5  # coverage share below which the lexical reader abstains
SEMANTIC_ABSTAIN_BELOW = 0.55  # cosine below which the semantic reader abstains

_NEEDS_NUMBER = re.compile(
    r"^\s*(how (many|long|much|far|old|big|large|fast|hot|cold|deep|wide|tall)|when)\b",
    re.I,
)
_HOW = re.compile(r"\bhow\s+(\w+)", re.I)
_HAS_NUMBER = re.compile(r"\d")
NUMBER_PENALTY = (
    0.5  # taken from a sentence without a number when the question asks for one
)


def _keep_window(wrapper, reader) -> None:
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
    holds no digit."""
    return (
        NUMBER_PENALTY
        if _NEEDS_NUMBER.match(question) and not _HAS_NUMBER.search(sentence)
        else 0.0
    )


class SentenceReader:
    """What both readers share: answer with the best-scoring sentence and its citation,
    or abstain.

    A subclass gives ``score(prompt)``, the source sentences best first; the reader
    abstains with :data:`~ragbook.generators.ABSTAIN` when there is none or the best
    score is below ``abstain_below``.
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
    :class:`~ragbook.glossary.Glossary`) turns the question into the text that is
    embedded. Below ``abstain_below`` (a cosine, :data:`SEMANTIC_ABSTAIN_BELOW` by
    default) the generator abstains. Ties keep source and sentence order.

    ``encoder`` is anything with ``encode(texts)`` returning unit row vectors, such as
    :func:`~ragbook.embedder.load_minilm`; sentence vectors are remembered between
    calls.
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


# Two worked examples for a model that reads (chapter 14): earlier turns of the
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
    """The model reads, a source sentence answers (chapter 14).

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
        _keep_window(self, generator)

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

    Chapter 14 pairs a language model, which refuses answerable questions whose
    evidence it was given, with a sentence picker, which answers those and abstains by
    its own score. Each is asked with the same prompt; the second only when the first
    refuses (:func:`~ragbook.generators.is_refusal`). ``used`` says which answered the
    last prompt (0 or 1). The first reader's ``budget`` and ``count``, when it has them,
    are kept, so a pipeline packs the prompt into its model's context window.
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
        _keep_window(self, first)

    def __repr__(self) -> str:
        return f"FallbackReader({self.first!r}, {self.second!r})"

    def __call__(self, prompt: Prompt) -> str:
        answer = self.first(prompt)
        self.used = 0
        if is_refusal(answer):
            answer = self.second(prompt)
            self.used = 1
        return answer


class SubjectCheck:
    """A reader's answer, refused when it is about another subject than the question.

    ``subjects`` are names a question can be about (chapter 14 passes the corpus's
    article titles: "Mars", "Moon"). When the question names some of them, the answer
    stands only if it, or the label of a source it cites, names one of those too;
    otherwise the reader says :data:`~ragbook.generators.ABSTAIN`. A question naming no
    subject, and a refusal, pass unchanged. Names match as whole words, ignoring case.

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
        _keep_window(self, reader)

    def __repr__(self) -> str:
        return f"SubjectCheck({self.reader!r}, {len(self.subjects)} subjects)"

    def named(self, text: str) -> set[str]:
        """The subjects ``text`` names."""
        text = validate.text(text, "text")
        return {name for name, pattern in self._patterns if pattern.search(text)}

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
    the question (chapter 14).

    Every reader here answers with a source sentence and its citation. The check asks of
    that sentence what the semantic reader asks of its own answers: its cosine with the
    question, shown as ``"<cited source's label>: <sentence>"`` and measured by
    ``judge`` (a :class:`SemanticExtractiveGenerator`, with its embedder and question
    rewrite), must reach ``refuse_below`` (by default the judge's own
    ``abstain_below``); otherwise the answer becomes
    :data:`~ragbook.generators.ABSTAIN`. A refusal passes unchanged.

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
        _keep_window(self, reader)

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
    (chapter 14: answer, then verify).

    The answer's sentence, labelled as :func:`labelled_answer` shows it, goes to
    ``model.relevance(question, passage)`` (a :class:`~ragbook.llm.LocalModel`'s
    logit(Yes) - logit(No) for "does the passage answer the question?"); below
    ``refuse_below`` the answer becomes :data:`~ragbook.generators.ABSTAIN`. The
    default, 0, refuses exactly when the model finds No likelier than Yes, a threshold
    fixed before any measurement. A refusal passes unchanged.

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
        _keep_window(self, reader)

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
