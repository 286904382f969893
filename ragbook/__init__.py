"""ragbook: the package of the ragbook course on retrieval-augmented generation.

One module per idea; each docstring names the chapter that derives it.

- :mod:`ragbook.text`: the analyzer (normalisation, tokens, stopwords, sentences).
- :mod:`ragbook.sampling`: next-token probabilities with a temperature.
- :mod:`ragbook.composition`: end-to-end accuracy from retrieval and generation.
- :mod:`ragbook.documents`, :mod:`ragbook.labels`: the corpus, its sections and labelled
  questions.
- :mod:`ragbook.chunking`: five chunkers and the count and cut-probability formulas.
- :mod:`ragbook.formats`: BEIR folders and TREC run and qrels files.
- :mod:`ragbook.retrieval`: the retriever contract
  (``search(query, k, allowed) -> list[Hit]``).
- :mod:`ragbook.index`, :mod:`ragbook.tfidf`, :mod:`ragbook.bm25`,
  :mod:`ragbook.pruning`, :mod:`ragbook.ranking`: sparse retrieval, and exact top k by
  MaxScore.
- :mod:`ragbook.lsa`, :mod:`ragbook.embedder`, :mod:`ragbook.dense`: dense retrieval
  (LSA, MiniLM).
- :mod:`ragbook.vectors`, :mod:`ragbook.ivf`, :mod:`ragbook.vector_kernels`: exact and
  IVF vector search, and their compiled loops.
- :mod:`ragbook.fusion`: reciprocal rank fusion, score fusion, hybrid retrieval,
  reranking.
- :mod:`ragbook.metrics`: recall, precision, reciprocal rank, nDCG, bootstrap intervals,
  evaluation.
- :mod:`ragbook.prompts`: numbered, delimited sources, budgets and packing.
- :mod:`ragbook.generators`: scripted, extractive (lexical and semantic), trigram and
  chat generators.
- :mod:`ragbook.readers`, :mod:`ragbook.cited`: readers that quote a sentence, and the
  reader that answers in a model's words under a grammar, every claim cited.
- :mod:`ragbook.llm`: a local language model, its files and its recorded requests.
- :mod:`ragbook.verification`: citation, support, number and quote checks.
- :mod:`ragbook.rag_models`: RAG-Sequence and RAG-Token likelihoods.
- :mod:`ragbook.glossary`: question rewriting with definitions.
- :mod:`ragbook.pipeline`, :mod:`ragbook.cli`: the whole system and the ``ragbook``
  command.
- :mod:`ragbook.operations`: access levels, document versions, a store that stays
  current, what to log.
- :mod:`ragbook.pgserver`, :mod:`ragbook.pgstore`, :mod:`ragbook.pgtables`,
  :mod:`ragbook.pgroles`, :mod:`ragbook.pgerrors`, :mod:`ragbook.pgshards`: PostgreSQL
  with pgvector: a local server, the store, its tables, its roles and row-level
  security, its errors, and shards over several servers.
- :mod:`ragbook.exercises`: graded exercises.
- :mod:`ragbook.show`: listings of ragbook's own source for the chapters.
- :mod:`ragbook.progress`: what long work is doing and how far it is.
"""

__version__ = "0.1.0"
