"""The corpus: documents and the questions asked of them (chapter 3).

- :mod:`~ragbook.corpus.documents`: Markdown documents, their sections, the bundled
  corpus.
- :mod:`~ragbook.corpus.orgdocs`: an organisation's documents, with access levels,
  versions and dates (chapter 16).
- :mod:`~ragbook.corpus.keys`: answer keys, the accepted answers of a question, and
  the normal form answers are compared in.
- :mod:`~ragbook.corpus.labels`: labelled questions, their evidence spans and splits.
- :mod:`~ragbook.corpus.beir`, :mod:`~ragbook.corpus.trec`: public benchmark formats
  (BEIR folders; TREC run and qrels files).

The first layer: it imports nothing of ragbook but :mod:`ragbook.validate`.
"""
