"""The whole system: from a question to a checked, cited answer (chapter 14).

:func:`answer_question` runs one question through retrieval, prompt assembly, generation
and the grounding checks, with the chunker and retriever chosen by name
(:func:`make_chunks`, :func:`make_retriever`). :class:`~ragbook.system.rag.RAGPipeline`
wraps the same steps in the shape many tutorials use.
"""

from __future__ import annotations

import inspect
from typing import Callable, Iterable, Sequence


from .. import validate
from ..retrieval.bm25 import BM25, lucene_idf
from ..indexing.chunking import (
    Chunk,
    recursive_chunks,
    section_chunks,
    sentence_chunks,
    word_windows,
)
from ..corpus.documents import Document
from ..generation.answer import Answer, Retrieved
from ..generation.generators import is_refusal
from ..generation.prompts import (
    Prompt,
    build_prompt,
    count_tokens,
    pack_prompt,
    sources_from_chunks,
)
from ..retrieval.contract import Retriever
from ..generation.verification import SUPPORT_THRESHOLD, check_answer

__all__ = [
    "RETRIEVERS",
    "CHUNKERS",
    "make_chunks",
    "make_retriever",
    "idf_lookup",
    "answer_question",
]

RETRIEVERS = ("bm25", "tfidf", "lsa", "embedder", "hybrid")
CHUNKERS = ("sentences", "windows", "sections", "recursive")


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
    kept on disk (:class:`~ragbook.retrieval.embedder.CachedEncoder`).
    ``store(encoder, chunks)`` puts the MiniLM vectors elsewhere, e.g. in
    PostgreSQL (:class:`~ragbook.postgres.store.PostgresStore`, chapter 16).
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
        from ..retrieval.tfidf import TfIdf

        return TfIdf.from_texts(texts)
    if name in ("lsa", "embedder", "hybrid"):
        from ..retrieval.dense import DenseRetriever

        if name == "lsa":
            from ..retrieval.lsa import LSA

            return DenseRetriever(
                LSA(texts, dimensions), texts, lists=lists, probes=probes
            )
        from ..retrieval.embedder import CachedEncoder, load_minilm

        encoder = CachedEncoder(load_minilm()) if cache else load_minilm()
        if store is not None:
            if lists is not None:
                raise ValueError("a store keeps its own index: no lists")
            dense = store(encoder, _chunks(chunks))
        else:
            dense = DenseRetriever(encoder, texts, lists=lists, probes=probes)
        if name == "embedder":
            return dense
        from ..retrieval.fusion import HybridRetriever

        return HybridRetriever([BM25.from_texts(texts), dense], depth=depth)
    raise ValueError(
        f"unknown retriever {name!r}; choose one of {', '.join(RETRIEVERS)}"
    )


def idf_lookup(chunks: Sequence[Chunk] | BM25) -> Callable[[str], float]:
    """Lucene's idf of a term over the chunks (a term no chunk contains gets the idf of
    n = 0).

    Given a :class:`~ragbook.retrieval.bm25.BM25` index already built over the chunks,
    its idf is read, not rebuilt.
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
    (chapter 16). ``rewrite`` (a :class:`~ragbook.retrieval.glossary.Glossary`, say)
    turns the question into the retrieval query; the prompt keeps the question as asked.
    ``history``, earlier (question, answer) exchanges, goes to a generator that takes
    it (a language model's, in a conversation); its tokens come off the budget.
    ``support_threshold`` is the support share each claim needs
    (:func:`ragbook.generation.verification.check_claim`). The sources' labels come from
    the chunks' headers.
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


def _chunks(chunks: Sequence[Chunk]) -> list[Chunk]:
    chunks = validate.sequence(chunks, "chunks", "Chunk objects")
    for position, chunk in enumerate(chunks):
        if not isinstance(chunk, Chunk):
            raise TypeError(
                f"chunks must hold Chunk objects, got {type(chunk).__name__} at "
                f"position {position}"
            )
    return chunks
