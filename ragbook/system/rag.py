"""The pipeline in the shape many tutorials use: ``index(documents)``, then
``query(question, k)`` (the CLI appendix; chapter 15 measures its readers).

:class:`RAGPipeline` is configured by name: a chunker, a retriever and a reader
(:data:`READERS`). The readers without a model quote a source sentence
(:mod:`ragbook.generation.readers`); the model's readers are the cited reader
(:mod:`ragbook.generation.cited`) and the free-text, quoting and combined readers. Each
question goes through :func:`~ragbook.system.pipeline.answer_question`.

A model the pipeline builds from a name replays the book's recorded generations only
when ``RAGBOOK_LLM_RECORDS`` asks for them (:func:`pipeline_records`).
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, Sequence

from .. import validate
from ..corpus.documents import Document, parse_markdown
from ..corpus.orgdocs import plain_title
from ..generation.answer import Answer
from ..generation.prompts import Prompt, count_tokens
from ..generation.readers import (
    LEXICAL_ABSTAIN_BELOW,
    SEMANTIC_ABSTAIN_BELOW,
    ExtractiveGenerator,
)
from ..indexing.chunking import Chunk
from ..retrieval.bm25 import BM25
from .pipeline import (
    CHUNKERS,
    RETRIEVERS,
    answer_question,
    idf_lookup,
    make_chunks,
    make_retriever,
)

__all__ = [
    "READERS",
    "MODEL_READERS",
    "RAGPipeline",
    "pipeline_records",
    "replayed_model",
]

READERS = ("lexical", "semantic", "llm", "quote", "combined", "cited")
# the readers that run a language model
MODEL_READERS = ("llm", "quote", "combined", "cited")


def replayed_model(model=None) -> str | None:
    """The known model (:data:`ragbook.llm.MODELS`) whose recorded generations a
    pipeline's ``model`` (a name, a path, or None for ``$RAGBOOK_GGUF`` or the default)
    replays, or None when it replays none; see :func:`pipeline_records`."""
    from ..llm import MODELS, ModelError, model_file, records_mode

    if "RAGBOOK_LLM_RECORDS" not in os.environ:
        return None
    mode = records_mode()  # a value other than replay, only or off is refused
    if mode == "off":
        return None
    spec = model_file(model).spec
    if spec is None and mode == "only":
        named = model or os.environ.get("RAGBOOK_GGUF")
        raise ModelError(
            "RAGBOOK_LLM_RECORDS=only replays the book's records, kept for "
            f"{', '.join(sorted(MODELS))}, and there are none for {named}; without "
            "RAGBOOK_LLM_RECORDS the model answers every request itself"
        )
    return None if spec is None else spec.name


def pipeline_records(model=None):
    """The records a language model built from a name goes through: the book's
    (:func:`ragbook.llm.book_records`) when ``RAGBOOK_LLM_RECORDS`` is set to
    ``replay`` or ``only``, else None, and the model answers every request itself.

    The chapters pass the book's records to their models, and so replay them by
    default; a pipeline built from a name, as ``ragbook ask`` builds it, replays them
    only when the variable is set, with the chapters' meanings: ``replay`` (replay a
    recorded request, make and add a missing one), ``only`` (replay, and a missing
    record is an error: the model never runs, so it need not be installed), ``off``
    (the model answers, nothing is kept). Left unset, because a user of the tool asks
    the model installed here about documents of their own: the book's default,
    ``replay``, would add each of their prompts to the records inside the installed
    package; a replayed answer carries the timings of the machine that recorded it
    (``--reader llm`` prints them); and a tool that answered the book's questions at
    once from a file and every other question in seconds would behave differently
    without saying so. A record is keyed by the model and the exact prompt, so what is
    replayed is what that model said to that prompt. Only the book's models
    (:data:`ragbook.llm.MODELS`) have records; with another GGUF file, ``replay`` runs
    the model and keeps nothing, and ``only`` is an error."""
    from ..llm import book_records

    name = replayed_model(model)
    return None if name is None else book_records(name)


class RAGPipeline:
    """index(documents, names) -> number of chunks; query(question, k) -> answer, prompt
    and retrieved chunks.

    Configured with any of the book's chunkers (:data:`CHUNKERS`), retrievers
    (:data:`RETRIEVERS`) and generators. Without a ``generator`` the offline reader
    named by ``reader`` answers (:data:`READERS`: ``lexical`` is
    :class:`~ragbook.generation.readers.ExtractiveGenerator`, ``semantic`` is
    :class:`~ragbook.generation.readers.SemanticExtractiveGenerator` with MiniLM); the
    reader abstains when its best sentence scores below ``abstain_below`` (a coverage
    share for the lexical reader, a cosine for the semantic one; each reader's own
    default if not given). ``llm`` is a local language model
    (:class:`~ragbook.llm.LLMGenerator`; ``model`` names it, see
    :func:`ragbook.llm.model_file`, replaying the book's records when
    ``RAGBOOK_LLM_RECORDS`` says so, see :func:`pipeline_records`; or is a
    :class:`~ragbook.llm.LocalModel`, records and all), whose prompts are packed into
    its context window, counted in its own tokens; ``quote``, ``combined`` and
    ``cited`` are chapter 15's readers built on it.
    ``glossary`` (any question rewrite) shapes the retrieval query and the semantic
    reader's question; ``cache`` keeps MiniLM chunk vectors on disk between runs;
    ``store`` puts them elsewhere (see :func:`make_retriever`).
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
            from ..retrieval.embedder import load_minilm
            from ..generation.readers import SemanticExtractiveGenerator

            self.reader_abstain_below = (
                SEMANTIC_ABSTAIN_BELOW
                if self.abstain_below is None
                else self.abstain_below
            )
            self._generate = SemanticExtractiveGenerator(
                load_minilm(), self.reader_abstain_below, rewrite=self.glossary
            )
        elif self.generator is None and self.reader in MODEL_READERS:
            from ..llm import LLMGenerator, LocalModel
            from ..generation.readers import WORKED_EXAMPLES, ModelQuoteReader

            local = (
                self.model
                if isinstance(self.model, LocalModel)
                else LocalModel(self.model, records=pipeline_records(self.model))
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
        """Chapter 15's cited reader: the model reads the six sentences of the sources
        that the semantic reader ranks best, answers in a few words and names its
        evidence under a grammar, may cite only sources about the question's subject
        (the documents' titles), refuses by its probability of answering "none", and
        quotes its evidence sentence when its words fail the grounding checks
        (:class:`~ragbook.generation.cited.CitedReader`). The closed-book reading is
        left out: only the lift needs it."""
        from ..generation.cited import REFUSE_BELOW, REFUSE_BY, CitedReader
        from ..retrieval.embedder import load_minilm
        from ..generation.readers import SemanticExtractiveGenerator

        self.reader_abstain_below = (
            REFUSE_BELOW if self.abstain_below is None else self.abstain_below
        )
        titles = [
            plain_title(d.title).removeprefix("The ") for d in self.documents if d.title
        ]
        return CitedReader(
            model,
            REFUSE_BY,
            self.reader_abstain_below,
            subjects=titles or None,
            ranker=SemanticExtractiveGenerator(load_minilm(), rewrite=self.glossary),
            closed_book=REFUSE_BY == "lift",
        )

    def _combined(self, quoting, model) -> Callable[[Prompt], str]:
        """Chapter 15's choice on dev: the model's answer (after the two worked
        examples) quoted, the semantic reader when the model refuses, each refused when
        it is about another subject than the question (the documents' titles are the
        subjects), and the answer refused when ``model`` says its sentence does not
        answer the question (:class:`~ragbook.generation.reader_checks.ModelCheck`)."""
        from ..retrieval.embedder import load_minilm
        from ..generation.reader_checks import ModelCheck, SubjectCheck
        from ..generation.readers import (
            FallbackReader,
            SemanticExtractiveGenerator,
        )

        self.reader_abstain_below = (
            SEMANTIC_ABSTAIN_BELOW if self.abstain_below is None else self.abstain_below
        )
        semantic = SemanticExtractiveGenerator(
            load_minilm(), self.reader_abstain_below, rewrite=self.glossary
        )
        titles = [
            plain_title(d.title).removeprefix("The ") for d in self.documents if d.title
        ]
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
