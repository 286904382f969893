"""Measuring retrieval and answers (chapters 1, 9, 12, 14 and 15).

- :mod:`~ragbook.evaluation.measures`: recall, precision, reciprocal rank, nDCG
  (chapter 9); :mod:`~ragbook.evaluation.metrics`: a retriever evaluated on labelled
  questions, with TREC runs.
- :mod:`~ragbook.evaluation.intervals`: bootstrap and paired-bootstrap intervals.
- :mod:`~ragbook.evaluation.answers`: an answer scored against its key (exact match,
  token F1, correct, correct and grounded).
- :mod:`~ragbook.evaluation.judging`: a judge's verdicts against the key, and their
  agreement (Cohen's kappa).
- :mod:`~ragbook.evaluation.end_to_end`: whole answers measured, and accuracy split
  into retrieval and reading; :mod:`~ragbook.evaluation.composition`: the identity
  behind that split (chapter 1).

Imports from every stage it measures (corpus to llm), never from :mod:`ragbook.system`.
"""
