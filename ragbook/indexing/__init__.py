"""From documents to searchable pieces (chapters 4 and 5).

- :mod:`~ragbook.indexing.text`: the analyzer (normalisation, tokens, stopwords,
  stemming) and the sentence splitter.
- :mod:`~ragbook.indexing.chunking`: five chunkers, and the formulas for how many
  chunks and how often an answer is cut.
- :mod:`~ragbook.indexing.index`: the inverted index, postings and document
  frequencies.

Imports from :mod:`ragbook.corpus` only.
"""
