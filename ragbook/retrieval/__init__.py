"""Finding the chunks that answer a question (chapters 5-8).

- :mod:`~ragbook.retrieval.contract`: what every retriever promises,
  ``search(query, k, allowed) -> list[Hit]``.
- Sparse (chapter 5): :mod:`~ragbook.retrieval.ranking` (top k, ties by id),
  :mod:`~ragbook.retrieval.tfidf`, :mod:`~ragbook.retrieval.bm25`,
  :mod:`~ragbook.retrieval.pruning` (exact top k by MaxScore).
- Dense (chapter 6): :mod:`~ragbook.retrieval.lsa`, :mod:`~ragbook.retrieval.embedder`
  (MiniLM), :mod:`~ragbook.retrieval.dense`.
- Vector search (chapter 7): :mod:`~ragbook.retrieval.vectors` (exact),
  :mod:`~ragbook.retrieval.ivf` (approximate), :mod:`~ragbook.retrieval.vector_kernels`
  (their compiled loops).
- Hybrid (chapter 8): :mod:`~ragbook.retrieval.fusion` (rank and score fusion,
  reranking); :mod:`~ragbook.retrieval.glossary` (questions rewritten with definitions,
  chapter 14).

Imports from :mod:`ragbook.corpus` and :mod:`ragbook.indexing`.
"""
