"""The whole system (chapters 14, 15 and 16).

- :mod:`~ragbook.system.pipeline`: the pipeline's parts by name (chunkers, retrievers)
  and :func:`~ragbook.system.pipeline.answer_question`;
  :mod:`~ragbook.system.rag`: :class:`~ragbook.system.rag.RAGPipeline`, index then
  query, with the reader chosen by name.
- :mod:`~ragbook.system.access`: users, access levels, the chunks a user may see.
- :mod:`~ragbook.system.store`: a document store that stays current (add, replace,
  delete).
- :mod:`~ragbook.system.monitoring`: what to log, and alerts.
- :mod:`~ragbook.system.injection`: instructions planted in documents, and the suite
  that measures them; :mod:`~ragbook.system.planted`: false figures planted in
  documents, and the suite that measures whether an answer says the sources disagree
  (chapter 15).

Imports from every layer before it; only :mod:`ragbook.postgres` and the tool
(:mod:`ragbook.cli`) import it.
"""
