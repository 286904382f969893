"""The command-line tool: ``ragbook ask``, ``ragbook chat`` and ``ragbook evaluate``
(chapter 14).

    ragbook ask "How long is a year on Venus?"
    ragbook ask "Who wrote the refund policy?" --documents ./my-notes \
        --retriever hybrid --show-prompt
    printf 'How many moons does Mars have?\nWhat about Jupiter?\n' | ragbook chat
    ragbook evaluate --split dev --figure evaluation.png

``ask`` answers from the bundled corpus, or from any folder of Markdown files, with
citations; it prints the ranks and scores of the chunks it used and the result of the
grounding checks. ``evaluate`` measures retrieval and answers on the labelled questions
of the bundled corpus (``--split dev``, where choices are made, or ``test`` or
``holdout``), prints every answer measure of :mod:`ragbook.evaluation.answers` with its
bootstrap interval, and draws recall against k.

The defaults are the configuration the reader chapter measures best on its dev
questions: hybrid retrieval (BM25 fused with MiniLM), on the bundled corpus the
astronomy glossary, and the cited reader (below).
Where the language model cannot run, the default reader is the best without one,
semantic, and the output says so. (The readers ``--reader llm`` and ``--reader quote``,
measured below both there, use BM25 by default, the retrieval they were measured
with.) The MiniLM vectors of the chunks are computed on the first run (about 13 s for
the bundled corpus) and read from the cache afterwards (``--no-cache`` turns that off);
on a terminal, the work that takes more than a second reports on standard error what it
is doing and how far it is (:mod:`ragbook.progress`). ``--retriever bm25 --reader
lexical`` needs no model at all.

``--reader cited`` has the model answer in a few words and name its evidence sentences
under a grammar (:mod:`ragbook.generation.cited`): the words are printed as they are
generated, then their citations and the evidence sentences, or the refusal and its
reason.

``--reader llm`` answers with a local language model (``--model NAME|PATH``, default
:data:`ragbook.llm.DEFAULT_MODEL`; ``make llm`` installs it): the answer is printed as
it is generated, then the sources, the checks, and the time to the first token and in
total.

The model readers ask the model installed here and keep nothing. With
``RAGBOOK_LLM_RECORDS`` set they go through the book's recorded generations as the
chapters do: ``only`` replays them and makes a request without a record an error (the
model need not be installed), ``replay`` also makes and adds a missing one, ``off``
asks the model. The setup line then names the records. Why that is not the default:
:func:`ragbook.system.rag.pipeline_records`.
"""

from __future__ import annotations

import sys
from typing import Sequence

from .. import validate
from ..llm import ModelError, RecordMissing
from .ask import ask, chat
from .evaluate import evaluate
from .options import build_parser, resolve_defaults, with_store

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Run the tool; returns the exit status (0 on success, 2 for bad input)."""
    out = out or sys.stdout
    if argv is not None:
        argv = validate.texts(argv, "argv")
    args = build_parser().parse_args(argv)
    try:
        resolve_defaults(args)
        command = {"ask": ask, "chat": chat, "evaluate": evaluate}[args.command]
        return with_store(command, args, out)
    except KeyboardInterrupt:
        print("", file=out)
        return 130
    except (ValueError, ModelError, RuntimeError, ConnectionError) as error:
        print(f"ragbook: error: {error}", file=sys.stderr)
        return 2
    except RecordMissing as error:
        print(
            f"ragbook: error: {error}\n(without RAGBOOK_LLM_RECORDS=only the model "
            "answers it)",
            file=sys.stderr,
        )
        return 2
    except ImportError as error:
        print(
            f"ragbook: error: {error}\n(without the embedder: --retriever bm25 "
            "--reader lexical)",
            file=sys.stderr,
        )
        return 2
