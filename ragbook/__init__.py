"""ragbook: the package of the ragbook course on retrieval-augmented generation.

One module per idea; each docstring names the chapter that derives it.

- :mod:`ragbook.text`: the analyzer (normalisation, tokens, stopwords, sentences).
- :mod:`ragbook.sampling`: next-token probabilities with a temperature.
- :mod:`ragbook.composition`: end-to-end accuracy from retrieval and generation.
- :mod:`ragbook.documents`, :mod:`ragbook.labels`: the corpus, its sections and labelled questions.
- :mod:`ragbook.chunking`: five chunkers and the count and cut-probability formulas.
- :mod:`ragbook.formats`: BEIR folders and TREC run and qrels files.
- :mod:`ragbook.index`, :mod:`ragbook.tfidf`, :mod:`ragbook.bm25`, :mod:`ragbook.ranking`: sparse retrieval.
- :mod:`ragbook.metrics`: recall, precision, reciprocal rank, nDCG, bootstrap intervals, evaluation.
- :mod:`ragbook.exercises`: graded exercises.
- :mod:`ragbook.show`: listings of ragbook's own source for the chapters.
"""
__version__ = "0.1.0"
