"""``ragbook ask`` and ``ragbook chat``: a question answered with citations, or a
conversation of them (chapter 14), and how an answer and its checks are printed.
"""

from __future__ import annotations

import sys
import time

from ..corpus.documents import load_corpus
from ..corpus.orgdocs import plain_title, read_current_folder
from .options import build_pipeline, describe_setup

__all__ = ["ask", "chat", "print_checks", "print_cited"]


def print_checks(result, out, indent: str = "") -> None:
    if result.abstained:
        print(f"{indent}checks: the generator abstained; nothing to check", file=out)
        return
    claims = len(result.checks)
    for n, check in enumerate(result.checks, start=1):
        label = "checks" if claims == 1 else f"checks, claim {n} of {claims}"
        verdict = "supported" if check.supported else "NOT supported"
        details = [
            f"cites {list(check.cited) or 'nothing'}",
            f"support {check.support:.2f}",
        ]
        if check.missing_sources:
            details.append(f"missing sources {list(check.missing_sources)}")
        if check.unsupported_numbers:
            details.append(
                f"numbers not in its sources {list(check.unsupported_numbers)}"
            )
        print(f"{indent}{label}: {verdict} ({', '.join(details)})", file=out)


def print_cited(reading, out, drafted: bool = False) -> None:
    """The cited reader's answer once its checks have run: ``answer:`` and the answer
    with its citations (the evidence quoted when the draft's words failed the checks),
    or ``refused`` and why; then each evidence sentence under its id, and the scores.
    ``drafted``: the model's words were printed as they came, after ``draft:``, on
    the line above; a draft is not an answer until this line says so."""
    if drafted:
        print(file=out)
    if reading.refused:
        print(f"refused ({reading.why}): {reading.answer}", file=out)
    else:
        if reading.quoted:
            print(
                "(the draft's words cannot be checked; its evidence, quoted)", file=out
            )
        print(f"answer: {reading.answer}", file=out)
    if not reading.refused:
        for sentence in reading.evidence:
            print(f"  [{sentence.id}] {sentence.text}", file=out)
        if reading.followed:
            print(
                f"  (the sources are dated: the answer follows the newest, of "
                f"{reading.followed})",
                file=out,
            )
    if reading.scores is not None:
        # a score that was not computed (the lift, without the closed-book pass) is
        # -inf: left out rather than printed
        shown = ", ".join(
            f"{k} {v:.2f}" for k, v in reading.scores.items() if v > float("-inf")
        )
        print(f"  scores: {shown}", file=out)


def read_documents(args, out) -> list:
    """The documents to index: the bundled corpus, or ``--documents``, of which the
    superseded versions and the documents above ``--access`` are left out, each named
    on ``out`` (:func:`~ragbook.corpus.orgdocs.read_current_folder`)."""
    if not args.documents:
        return load_corpus()
    folder = read_current_folder(args.documents, args.access)
    for old in folder.superseded:
        print(
            f"left out: {old.id} version {old.meta.version} of {old.meta.date} "
            "(a later version is indexed)",
            file=out,
        )
    for held in folder.withheld:
        print(
            f"left out: {held.id} (access {held.meta.access}; --access "
            f"{held.meta.access} to read it)",
            file=out,
        )
    return folder.documents


def chat(args, out) -> int:
    """One question per line of standard input; the last three
    exchanges are kept, an elliptical follow-up ("What about Saturn?") is rewritten
    into a standalone question, and the llm reader also reads the exchanges. Ends at
    the end of input, or on a line "quit" or "exit"."""
    from ..generation.generators import Conversation

    documents = read_documents(args, out)
    pipeline = build_pipeline(args)
    pipeline.index(documents)
    conversation = Conversation([plain_title(d.title) for d in documents], size=3)
    interactive = sys.stdin.isatty()
    print(
        f"{len(documents)} documents, {describe_setup(args)}; one question per line, "
        "end of input to stop",
        file=out,
    )
    while True:
        if interactive:
            out.write("> ")
            out.flush()
        line = sys.stdin.readline()
        if not line or line.strip().lower() in ("quit", "exit"):  # "" at the end
            return 0
        question = line.strip()
        if not question:
            continue
        asked = conversation.rewrite(question)
        if asked != question:
            print(f"(asked as: {asked})", file=out)
        history = list(conversation.history) if args.reader == "llm" else []
        result = pipeline.answer(asked, history=history)
        print(result.answer, file=out)
        for r in result.retrieved:
            print(f"  [{r.rank}] {r.source}", file=out)
        print_checks(result, out, indent="  ")
        conversation.add(asked, result.answer)


def ask(args, out) -> int:
    documents = read_documents(args, out)
    pipeline = build_pipeline(args)
    started = time.perf_counter()
    n = pipeline.index(documents)
    indexed = time.perf_counter()
    streaming = args.reader in ("llm", "cited")
    drafted = []
    if args.reader == "cited":  # the model's words as it writes them: a draft

        def draft(piece: str) -> None:
            out.write(piece if drafted else f"draft: {piece}")
            out.flush()
            drafted.append(piece)

        pipeline._generate.on_text = draft
    elif streaming:  # the answer as the model writes it
        pipeline._generate.on_text = lambda piece: (out.write(piece), out.flush())
    result = pipeline.answer(args.question)
    answered = time.perf_counter()
    if args.reader == "cited":
        print_cited(pipeline._generate.last, out, bool(drafted))
    else:
        print("" if streaming else result.answer, file=out)
    print(
        f"\n{len(documents)} documents, {n} chunks, {describe_setup(args)}, "
        f"top {args.k}; indexed in {indexed - started:.2f} s, "
        f"answered in {answered - indexed:.2f} s",
        file=out,
    )
    for r in result.retrieved:
        print(
            f"  [{r.rank}] score {r.score:.4f}  {r.source}  (chunk {r.chunk.id})",
            file=out,
        )
    print_checks(result, out)
    if args.reader == "llm":
        made = pipeline._generate.last
        print(
            f"model {pipeline._generate.model.name}: prompt {made.prompt_tokens} "
            f"tokens, answer {made.completion_tokens} tokens; first token after "
            f"{made.seconds_to_first_token:.2f} s, answer in {made.seconds:.2f} s",
            file=out,
        )
    if args.show_prompt:
        print("\n--- prompt ---\n" + result.prompt.text, file=out)
    return 0
