"""From retrieved chunks to a checked answer (chapters 1 and 10-13).

- :mod:`~ragbook.generation.sampling`: next-token probabilities with a temperature and
  top-p (chapter 1).
- :mod:`~ragbook.generation.prompts`: numbered, delimited sources, token budgets and
  packing (chapter 10).
- :mod:`~ragbook.generation.generators`: scripted, extractive, trigram and chat
  generators; what counts as a refusal (chapter 11).
- :mod:`~ragbook.generation.readers`: readers that answer with a source sentence
  (chapters 11, 14 and 15); :mod:`~ragbook.generation.reader_checks`: the checks that
  guard them (chapter 15).
- :mod:`~ragbook.generation.cited`: the cited reader, a model's words under a grammar,
  every claim cited (chapters 11 and 15); :mod:`~ragbook.generation.cited_prompt`: its
  numbered sentences, messages, grammar and the reading of its reply;
  :mod:`~ragbook.generation.cited_checks`: the checks on its answer's words
  (chapter 11).
- What an answer must be (chapter 15): :mod:`~ragbook.generation.answer_types`, the
  kind of answer a question asks for and the kind an answer is;
  :mod:`~ragbook.generation.parts`, questions in two parts and comparisons;
  :mod:`~ragbook.generation.figures`, figures read in one unit for their kind;
  :mod:`~ragbook.generation.conflicts`, sources that give different figures;
  :mod:`~ragbook.generation.requests`, requests that are not questions about the
  documents.
- :mod:`~ragbook.generation.verification`: citation, support, number and quote checks
  (chapter 12); :mod:`~ragbook.generation.answer`: an answer with what it rests on.
- :mod:`~ragbook.generation.rag_models`: RAG-Sequence and RAG-Token (chapter 13).

Imports from the layers before it (corpus, indexing, retrieval), never from
:mod:`ragbook.llm`: a reader is handed its model.
"""
