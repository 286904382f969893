"""The whole system: from a question to a checked, cited answer (chapter 14).

:func:`answer_question` runs one question through retrieval, prompt assembly, generation
and the grounding checks. :class:`RAGPipeline` wraps the same steps in the shape many
tutorials use: ``index(documents)`` then ``query(question, k)``.
:func:`evaluate_answers` and the other names of :mod:`ragbook.evaluation` are importable
from here as well.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence


from . import validate
from .bm25 import BM25, lucene_idf
from .chunking import (
    Chunk,
    recursive_chunks,
    section_chunks,
    sentence_chunks,
    word_windows,
)
from .documents import Document, parse_markdown
from .evaluation import (  # importable from here too, where chapters first meet them
    CRITERIA,
    MEASURES,
    AnswerEvaluation,
    evaluate_answers,
    quotes_evidence,
)
from .generators import is_refusal
from .prompts import (
    Prompt,
    build_prompt,
    count_tokens,
    pack_prompt,
    sources_from_chunks,
)
from .readers import LEXICAL_ABSTAIN_BELOW, SEMANTIC_ABSTAIN_BELOW, ExtractiveGenerator
from .retrieval import Retriever
from .verification import SUPPORT_THRESHOLD, ClaimCheck, check_answer

__all__ = [
    "RETRIEVERS",
    "CHUNKERS",
    "READERS",
    "Retrieved",
    "Answer",
    "make_chunks",
    "make_retriever",
    "idf_lookup",
    "answer_question",
    "RAGPipeline",
    "AnswerEvaluation",
    "CRITERIA",
    "MEASURES",
    "evaluate_answers",
    "quotes_evidence",
]

RETRIEVERS = ("bm25", "tfidf", "lsa", "embedder", "hybrid")
CHUNKERS = ("sentences", "windows", "sections", "recursive")
READERS = ("lexical", "semantic", "llm", "quote", "combined", "cited")
# the readers that run a language model
MODEL_READERS = ("llm", "quote", "combined", "cited")


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
    """Everything :func:`answer_question` did: the answer, its prompt, what was
    retrieved, and the checks."""

    question: str
    answer: str
    prompt: Prompt
    retrieved: tuple[Retrieved, ...]
    checks: tuple[ClaimCheck, ...]

    @property
    def abstained(self) -> bool:
        """The generator refused: :data:`~ragbook.generators.ABSTAIN`, or a model
        saying the sources do not contain the answer
        (:func:`~ragbook.generators.is_refusal`)."""
        return is_refusal(self.answer)

    @property
    def supported(self) -> bool:
        """Not an abstention, at least one claim, and every claim passes
        :func:`ragbook.verification.check_claim`."""
        return (
            not self.abstained
            and bool(self.checks)
            and all(c.supported for c in self.checks)
        )


def make_chunks(
    documents: Sequence[Document],
    chunker: str = "sentences",
    words: int = 100,
    overlap: int = 0,
    headers: bool = True,
) -> list[Chunk]:
    """Chunk ``documents`` with one of :data:`CHUNKERS` (``words`` is the limit or the
    window size)."""
    validate.text(chunker, "chunker")
    if chunker == "sentences":
        return sentence_chunks(documents, words, headers=headers)
    if chunker == "windows":
        return word_windows(documents, words, overlap, headers=headers)
    if chunker == "sections":
        return section_chunks(documents, headers=headers)
    if chunker == "recursive":
        return recursive_chunks(documents, words, headers=headers)
    raise ValueError(
        f"unknown chunker {chunker!r}; choose one of {', '.join(CHUNKERS)}"
    )


def make_retriever(
    name: str,
    chunks: Sequence[Chunk],
    dimensions: int = 128,
    lists: int | None = None,
    probes: int = 1,
    depth: int = 50,
    cache: bool = False,
    store: Callable | None = None,
) -> Retriever:
    """A retriever over the chunks' indexed text: one of :data:`RETRIEVERS`.

    ``lsa`` and ``embedder`` are dense (exact search, or IVF with ``lists`` and
    ``probes``); ``hybrid`` fuses BM25 with the MiniLM embedder by reciprocal rank
    fusion of their top ``depth``. With ``cache`` the MiniLM vectors of the chunks are
    kept on disk (:class:`~ragbook.embedder.CachedEncoder`).
    ``store(encoder, chunks)`` puts the MiniLM vectors elsewhere, e.g. in
    PostgreSQL (:class:`~ragbook.pgstore.PostgresStore`, chapter 15).
    """
    validate.text(name, "name")
    if name not in RETRIEVERS:
        raise ValueError(
            f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}"
        )
    validate.flag(cache, "cache")
    texts = [c.indexed_text for c in _chunks(chunks)]
    if name == "bm25":
        return BM25.from_texts(texts)
    if name == "tfidf":
        from .tfidf import TfIdf

        return TfIdf.from_texts(texts)
    if name in ("lsa", "embedder", "hybrid"):
        from .dense import DenseRetriever

        if name == "lsa":
            from .lsa import LSA

            return DenseRetriever(
                LSA(texts, dimensions), texts, lists=lists, probes=probes
            )
        from .embedder import CachedEncoder, load_minilm

        encoder = CachedEncoder(load_minilm()) if cache else load_minilm()
        if store is not None:
            if lists is not None:
                raise ValueError("a store keeps its own index: no lists")
            dense = store(encoder, _chunks(chunks))
        else:
            dense = DenseRetriever(encoder, texts, lists=lists, probes=probes)
        if name == "embedder":
            return dense
        from .fusion import HybridRetriever

        return HybridRetriever([BM25.from_texts(texts), dense], depth=depth)
    raise ValueError(
        f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}"
    )


def idf_lookup(chunks: Sequence[Chunk] | BM25) -> Callable[[str], float]:
    """Lucene's idf of a term over the chunks (a term no chunk contains gets the idf of
    n = 0).

    Given a :class:`~ragbook.bm25.BM25` index already built over the chunks, its idf is
    read, not rebuilt.
    """
    index = (
        chunks
        if isinstance(chunks, BM25)
        else BM25.from_texts([c.indexed_text for c in _chunks(chunks)])
    )
    unseen = float(lucene_idf(0, index.n_chunks))
    return lambda term: (
        float(index.idf[index.vocabulary[term]]) if term in index.vocabulary else unseen
    )


def answer_question(
    question: str,
    chunks: Sequence[Chunk],
    retriever: Retriever,
    generator: Callable[[Prompt], str],
    k: int = 5,
    budget: int | None = None,
    count: Callable[[str], int] = count_tokens,
    allowed: Iterable[int] | None = None,
    support_threshold: float = SUPPORT_THRESHOLD,
    rewrite: Callable[[str], str] | None = None,
    history: Sequence[tuple[str, str]] = (),
) -> Answer:
    """Retrieve the top k chunks, build the prompt (packed into ``budget`` tokens if
    given), generate, check.

    ``allowed`` restricts retrieval to the chunks a user may read, before ranking
    (chapter 15). ``rewrite`` (a :class:`~ragbook.glossary.Glossary`, say) turns the
    question into the retrieval query; the prompt keeps the question as asked.
    ``history``, earlier (question, answer) exchanges, goes to a generator that takes
    it (a language model's, in a conversation); its tokens come off the budget.
    ``support_threshold`` is the support share each claim needs
    (:func:`ragbook.verification.check_claim`). The sources' labels come from the
    chunks' headers.
    """
    question = validate.query(question, "question", terms=False)
    support_threshold = validate.real(
        support_threshold, "support_threshold", minimum=0, maximum=1
    )
    query = rewrite(question) if rewrite is not None else question
    history = [
        (validate.text(q, "a history question"), validate.text(a, "a history answer"))
        for q, a in validate.sequence(history, "history", "(question, answer) pairs")
    ]
    if history and "history" not in inspect.signature(generator).parameters:
        raise ValueError(
            "this generator takes no conversation history (a language model's does: "
            "reader llm)"
        )
    if history and budget is not None:
        budget -= sum(count(q) + count(a) for q, a in history)
        if budget < 1:
            raise ValueError("the history leaves no room for sources in the budget")
    hits = retriever.search(
        query, k, allowed=None if allowed is None else list(allowed)
    )
    chosen = [chunks[hit.chunk_id] for hit in hits]
    sources = sources_from_chunks(chosen)
    prompt = (
        pack_prompt(question, sources, budget, count)
        if budget is not None
        else build_prompt(question, sources)
    )
    used = len(prompt.sources)
    retrieved = tuple(
        Retrieved(hit.rank, hit.score, label, chunk)
        for hit, (label, _), chunk in zip(hits[:used], sources, chosen)
    )
    if history:
        text = generator(prompt, history=history)
    else:
        text = generator(prompt)
    checks = (
        ()
        if is_refusal(text)
        else tuple(
            check_answer(text, [s.text for s in prompt.sources], support_threshold)
        )
    )
    return Answer(question, text, prompt, retrieved, checks)


class RAGPipeline:
    """index(documents, names) -> number of chunks; query(question, k) -> answer, prompt
    and retrieved chunks.

    Configured with any of the book's chunkers (:data:`CHUNKERS`), retrievers
    (:data:`RETRIEVERS`) and generators. Without a ``generator`` the offline reader
    named by ``reader`` answers (:data:`READERS`: ``lexical`` is
    :class:`~ragbook.readers.ExtractiveGenerator`, ``semantic`` is
    :class:`~ragbook.readers.SemanticExtractiveGenerator` with MiniLM); the reader
    abstains when its best sentence scores below ``abstain_below`` (a coverage share for
    the lexical reader, a cosine for the semantic one; each reader's own default if not
    given). ``llm`` is a local language model (:class:`~ragbook.llm.LLMGenerator`;
    ``model`` names it, see :func:`ragbook.llm.model_file`, or is a
    :class:`~ragbook.llm.LocalModel`, records and all), whose prompts are packed into
    its context window, counted in its own tokens; ``quote``, ``combined`` and
    ``cited`` are chapter 14's readers built on it. ``glossary`` (any question
    rewrite) shapes the retrieval query and the semantic reader's question; ``cache``
    keeps MiniLM chunk vectors on disk between runs; ``store`` puts them elsewhere (see
    :func:`make_retriever`).
    """

    def __init__(
        self,
        chunker: str = "sentences",
        words: int = 100,
        overlap: int = 0,
        retriever: str = "bm25",
        generator: Callable[[Prompt], str] | None = None,
        k: int = 5,
        dimensions: int = 128,
        lists: int | None = None,
        probes: int = 1,
        abstain_below: float | None = None,
        headers: bool = True,
        reader: str = "lexical",
        glossary: Callable[[str], str] | None = None,
        cache: bool = False,
        model=None,
        store: Callable | None = None,
    ):
        for name, value in (
            ("chunker", chunker),
            ("retriever", retriever),
            ("reader", reader),
        ):
            validate.text(value, name)
        words, overlap, k = (
            validate.k(words, "words"),
            validate.count(overlap, "overlap"),
            validate.k(k),
        )
        dimensions, probes = (
            validate.k(dimensions, "dimensions"),
            validate.k(probes, "probes"),
        )
        lists = None if lists is None else validate.k(lists, "lists")
        abstain_below = (
            None
            if abstain_below is None
            else validate.real(abstain_below, "abstain_below")
        )
        headers, cache = (
            validate.flag(headers, "headers"),
            validate.flag(cache, "cache"),
        )
        for name, value in (("generator", generator), ("glossary", glossary)):
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be a function or None, got {value!r}")
        if chunker not in CHUNKERS:
            raise ValueError(
                f"unknown chunker {chunker!r}; choose one of {', '.join(CHUNKERS)}"
            )
        if retriever not in RETRIEVERS:
            raise ValueError(
                f"unknown retriever {retriever!r}; choose one of "
                f"{', '.join(RETRIEVERS)}"
            )
        if reader not in READERS:
            raise ValueError(
                f"unknown reader {reader!r}; choose one of {', '.join(READERS)}"
            )
        self.chunker, self.words, self.overlap, self.headers = (
            chunker,
            words,
            overlap,
            headers,
        )
        self.retriever_name, self.dimensions, self.lists, self.probes = (
            retriever,
            dimensions,
            lists,
            probes,
        )
        self.generator, self.k, self.abstain_below = generator, k, abstain_below
        self.reader, self.glossary, self.cache = reader, glossary, cache
        if model is not None and reader not in MODEL_READERS:
            raise ValueError(
                f"a model applies to the {', '.join(MODEL_READERS)} readers only, not "
                f"to the {reader} reader"
            )
        if model is not None and not isinstance(model, str):
            if not callable(getattr(model, "structured_reply", None)):
                raise TypeError(
                    "model must be a model's name or a ragbook.llm.LocalModel, got "
                    f"{model!r}"
                )
        self.model = model
        self.store = store  # store(encoder, chunks): dense retriever
        # the offline reader's abstention score, once indexed
        self.reader_abstain_below: float | None = None
        self.documents: list[Document] = []
        self.chunks: list[Chunk] = []
        self.retriever = None

    def index(
        self, documents: Sequence[Document | str], names: Sequence[str] | None = None
    ) -> int:
        """Chunk and index the documents (Document objects, or Markdown texts named by
        ``names``)."""
        documents = validate.sequence(
            documents, "documents", "Document objects or Markdown texts"
        )
        names = None if names is None else validate.texts(names, "names")
        if not documents:
            raise ValueError("there are no documents to index")
        if names is not None and len(names) != len(documents):
            raise ValueError(f"got {len(documents)} documents but {len(names)} names")
        parsed = []
        for i, document in enumerate(documents):
            if isinstance(document, Document):
                parsed.append(document)
            else:
                parsed.append(
                    parse_markdown(document, names[i] if names else f"doc{i + 1}")
                )
        ids = [d.id for d in parsed]
        if len(set(ids)) != len(ids):
            raise ValueError("two documents have the same name")
        self.documents = parsed
        self.chunks = make_chunks(
            parsed, self.chunker, self.words, self.overlap, self.headers
        )
        self.retriever = make_retriever(
            self.retriever_name,
            self.chunks,
            self.dimensions,
            self.lists,
            self.probes,
            cache=self.cache,
            store=self.store,
        )
        if self.generator is None and self.reader == "semantic":
            from .embedder import load_minilm
            from .readers import SemanticExtractiveGenerator

            self.reader_abstain_below = (
                SEMANTIC_ABSTAIN_BELOW
                if self.abstain_below is None
                else self.abstain_below
            )
            self._generate = SemanticExtractiveGenerator(
                load_minilm(), self.reader_abstain_below, rewrite=self.glossary
            )
        elif self.generator is None and self.reader in MODEL_READERS:
            from .llm import LLMGenerator, LocalModel
            from .readers import WORKED_EXAMPLES, ModelQuoteReader

            local = (
                self.model
                if isinstance(self.model, LocalModel)
                else LocalModel(self.model, records=None)
            )
            if self.reader == "cited":
                self._generate = self._cited(local)
            elif self.reader == "llm":
                self._generate = LLMGenerator(local)
            elif self.reader == "quote":
                self._generate = ModelQuoteReader(LLMGenerator(local))
            else:
                self._generate = self._combined(
                    ModelQuoteReader(LLMGenerator(local, examples=WORKED_EXAMPLES)),
                    local,
                )
        elif self.generator is None:
            self.reader_abstain_below = (
                LEXICAL_ABSTAIN_BELOW
                if self.abstain_below is None
                else self.abstain_below
            )
            bm25 = (
                self.retriever if isinstance(self.retriever, BM25) else None
            )  # built once, read for its idf
            self._generate = ExtractiveGenerator(
                idf_lookup(bm25 or self.chunks), self.reader_abstain_below
            )
        else:
            self._generate = self.generator
        return len(self.chunks)

    def _cited(self, model) -> Callable[[Prompt], str]:
        """Chapter 14's cited reader: the model reads the six sentences of the sources
        that the semantic reader ranks best, answers in a few words and names its
        evidence under a grammar, may cite only sources about the question's subject
        (the documents' titles), refuses by its probability of answering "none", and
        quotes its evidence sentence when its words fail the grounding checks
        (:class:`~ragbook.cited.CitedReader`). The closed-book reading is left out:
        only the lift needs it."""
        from .cited import REFUSE_BELOW, REFUSE_BY, CitedReader
        from .embedder import load_minilm
        from .readers import SemanticExtractiveGenerator

        self.reader_abstain_below = (
            REFUSE_BELOW if self.abstain_below is None else self.abstain_below
        )
        titles = [d.title.removeprefix("The ") for d in self.documents if d.title]
        return CitedReader(
            model,
            REFUSE_BY,
            self.reader_abstain_below,
            subjects=titles or None,
            ranker=SemanticExtractiveGenerator(load_minilm(), rewrite=self.glossary),
            closed_book=REFUSE_BY == "lift",
        )

    def _combined(self, quoting, model) -> Callable[[Prompt], str]:
        """Chapter 14's choice on dev: the model's answer (after the two worked
        examples) quoted, the semantic reader when the model refuses, each refused when
        it is about another subject than the question (the documents' titles are the
        subjects), and the answer refused when ``model`` says its sentence does not
        answer the question (:class:`~ragbook.readers.ModelCheck`)."""
        from .embedder import load_minilm
        from .readers import (
            FallbackReader,
            ModelCheck,
            SemanticExtractiveGenerator,
            SubjectCheck,
        )

        self.reader_abstain_below = (
            SEMANTIC_ABSTAIN_BELOW if self.abstain_below is None else self.abstain_below
        )
        semantic = SemanticExtractiveGenerator(
            load_minilm(), self.reader_abstain_below, rewrite=self.glossary
        )
        titles = [d.title.removeprefix("The ") for d in self.documents if d.title]
        if not titles:
            return ModelCheck(FallbackReader(quoting, semantic), model)
        return ModelCheck(
            FallbackReader(
                SubjectCheck(quoting, titles), SubjectCheck(semantic, titles)
            ),
            model,
        )

    def answer(
        self,
        question: str,
        k: int | None = None,
        budget: int | None = None,
        allowed: Iterable[int] | None = None,
        history: Sequence[tuple[str, str]] = (),
    ) -> Answer:
        if self.retriever is None:
            raise RuntimeError("nothing is indexed yet: call index(documents) first")
        k = self.k if k is None else validate.k(k)
        budget = None if budget is None else validate.count(budget, "budget")
        count = count_tokens
        generate = self._generate
        if hasattr(generate, "budget") and hasattr(generate, "count"):
            # a model with a context window: pack the prompt into it, in its tokens
            fits = generate.budget()
            budget = fits if budget is None else min(budget, fits)
            count = generate.count
        return answer_question(
            question,
            self.chunks,
            self.retriever,
            self._generate,
            k,
            budget,
            count,
            allowed=allowed,
            rewrite=self.glossary,
            history=history,
        )

    def query(self, question: str, k: int | None = None) -> dict:
        """The tutorial shape: question, answer, prompt, and retrieved chunks with
        source, score and index."""
        result = self.answer(question, k)
        return {
            "question": question,
            "answer": result.answer,
            "prompt": result.prompt.text,
            "retrieved": [
                {
                    "chunk": r.chunk.text,
                    "source": r.source,
                    "score": r.score,
                    "index": r.chunk.id,
                }
                for r in result.retrieved
            ],
        }


def _chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    chunks = validate.sequence(chunks, "chunks", "Chunk objects")
    for position, chunk in enumerate(chunks):
        if not isinstance(chunk, Chunk):
            raise TypeError(
                f"chunks must hold Chunk objects, got {type(chunk).__name__} at "
                f"position {position}"
            )
    return chunks
