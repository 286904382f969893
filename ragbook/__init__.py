"""ragbook: the package of the ragbook course on retrieval-augmented generation.

Its folders are the book's parts, in the order a question meets them; each module's
docstring names the chapter that derives it. An import goes from a later part to an
earlier one, never back (``tests/test_layers.py`` checks it):

1. :mod:`ragbook.corpus`: documents, answer keys, labelled questions, benchmark formats.
2. :mod:`ragbook.indexing`: the analyzer, chunking, the inverted index.
3. :mod:`ragbook.retrieval`: the retriever contract; sparse, dense and hybrid retrieval;
   exact and approximate vector search.
4. :mod:`ragbook.generation`: sampling, prompts, generators and readers, the cited
   reader, grounding checks, RAG-Sequence and RAG-Token.
5. :mod:`ragbook.llm`: a local language model, its files, its recorded requests, a chat
   server.
6. :mod:`ragbook.evaluation`: retrieval measures, intervals, answer scores, the judge,
   end-to-end evaluation.
7. :mod:`ragbook.system`: the whole pipeline, access levels, a store that stays current,
   monitoring, planted instructions.
8. :mod:`ragbook.postgres`: the store in PostgreSQL with pgvector.

Beside them, used by every part: :mod:`ragbook.validate` (checks on arguments, with
errors that say what is allowed), :mod:`ragbook.progress` (what long work is doing) and
:mod:`ragbook.show` (listings of the package's own source for the chapters). On top:
:mod:`ragbook.cli` (the ``ragbook`` tool) and :mod:`ragbook.exercises` (graded
exercises).
"""

__version__ = "0.1.0"
