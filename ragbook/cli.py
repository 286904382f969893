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
``holdout``), prints every answer measure of :mod:`ragbook.answers` with its bootstrap
interval, and draws recall against k.

The defaults are the configuration chapter 14 measures best on its dev questions:
hybrid retrieval (BM25 fused with MiniLM), on the bundled corpus the astronomy
glossary, and the cited reader (below).
Where the language model cannot run, the default reader is the best without one,
semantic, and the output says so. (The readers ``--reader llm`` and ``--reader quote``,
measured below both there, use BM25 by default, the retrieval they were measured
with.) The MiniLM vectors of the chunks are computed on the first run (about 13 s for
the bundled corpus) and read from the cache afterwards (``--no-cache`` turns that off);
on a terminal, the work that takes more than a second reports on standard error what it
is doing and how far it is (:mod:`ragbook.progress`). ``--retriever bm25 --reader
lexical`` needs no model at all.

``--reader cited`` has the model answer in a few words and name its evidence sentences
under a grammar (:mod:`ragbook.cited`): the words are printed as they are generated,
then their citations and the evidence sentences, or the refusal and its reason.

``--reader llm`` answers with a local language model (``--model NAME|PATH``, default
:data:`ragbook.llm.DEFAULT_MODEL`; ``make llm`` installs it): the answer is printed as
it is generated, then the sources, the checks, and the time to the first token and in
total.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from . import validate
from .documents import load_corpus, read_folder
from .glossary import ASTRONOMY, Glossary
from .pipeline import CHUNKERS, MODEL_READERS, READERS, RETRIEVERS, RAGPipeline
from .progress import reporter
from .llm import ModelError
from .llm import missing as llm_missing
from .readers import LEXICAL_ABSTAIN_BELOW, SEMANTIC_ABSTAIN_BELOW

__all__ = ["main", "build_parser"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, got {text!r}"
        ) from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must lie between 0 and 1, got {value}")
    return value


DEFAULT_PROBES = 4  # IVF lists probed by default: chapter 7, on the dev questions
GLOSSARIES = {"astronomy": ASTRONOMY, "none": None}
_MEASURES = (  # what evaluate prints, in the words of ragbook.answers
    ("exact_match", "exact match"),
    ("f1", "token F1"),
    ("contains", "contains an accepted answer"),
    ("correct", "correct (refusals for unanswerable)"),
    ("grounded", "correct and grounded"),
)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chunker",
        choices=CHUNKERS,
        default="sentences",
        help="how documents are cut (default: sentences)",
    )
    parser.add_argument(
        "--chunk-words",
        type=_positive,
        default=100,
        help="word limit of a chunk, or window size (default: 100)",
    )
    parser.add_argument(
        "--retriever",
        choices=RETRIEVERS,
        default=None,
        help="default: bm25 for the llm and quote readers, hybrid (BM25 + MiniLM) "
        "for the others",
    )
    parser.add_argument(
        "--reader",
        choices=READERS,
        default=None,
        help="cited (the language model answers in a few words and names the "
        "sentences it rests on, under a grammar; citations from those sentences; "
        "refuses by the model's probabilities), semantic (MiniLM cosine), lexical "
        "(idf coverage), llm (the model answers in free text), quote (the model "
        "reads, the source sentence that says what it said answers) or combined "
        "(quote, after two worked examples, with the semantic reader when the model "
        "refuses, a subject check, and the model asked whether the answer's sentence "
        "answers the question); default: cited when the language model is "
        "installed, else semantic",
    )
    parser.add_argument(
        "--glossary",
        metavar="NAME|FILE",
        default=None,
        help="definitions appended to the question: astronomy, none, or a JSON file of "
        "term: definition pairs (default: astronomy for the semantic, lexical, "
        "combined and cited readers on the bundled corpus, else none)",
    )
    parser.add_argument(
        "-k", type=_positive, default=5, help="chunks put into the prompt (default: 5)"
    )
    parser.add_argument(
        "--dimensions",
        type=_positive,
        default=128,
        help="LSA dimensions (default: 128)",
    )
    parser.add_argument(
        "--lists",
        type=_positive,
        default=None,
        help="IVF lists for dense retrievers (default: exact search)",
    )
    parser.add_argument(
        "--probes",
        type=_positive,
        default=None,
        help="IVF lists probed per query (default: 4, or every list when there are "
        "fewer; chapter 7's choice on dev)",
    )
    parser.add_argument(
        "--abstain-below",
        type=_share,
        default=None,
        metavar="SCORE",
        help="the reader abstains when its best sentence scores below this: coverage "
        "for the "
        f"lexical reader (default {LEXICAL_ABSTAIN_BELOW}), cosine for the "
        f"semantic one and the semantic half of the combined one (default "
        f"{SEMANTIC_ABSTAIN_BELOW})",
    )
    parser.add_argument(
        "--refuse-below",
        type=float,
        default=None,
        metavar="LOGODDS",
        help="the cited reader refuses when the log-odds against its answer starting "
        "with 'none' are below this (default: none, chapter 14's choice on dev)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="do not keep MiniLM chunk vectors on disk",
    )
    parser.add_argument(
        "--model",
        metavar="NAME|PATH",
        default=None,
        help="the language model of --reader llm: qwen2.5-1.5b (default), "
        "qwen2.5-0.5b, or a .gguf file (also $RAGBOOK_GGUF)",
    )
    parser.add_argument(
        "--store",
        choices=("memory", "postgres"),
        default="memory",
        help="where the MiniLM vectors live: memory, or PostgreSQL with "
        "pgvector (--dsn or RAGBOOK_PG_DSN, else a throwaway local "
        "server)",
    )
    parser.add_argument(
        "--dsn",
        default=None,
        help="PostgreSQL connection string for --store postgres "
        "(default: RAGBOOK_PG_DSN)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragbook",
        description="Retrieval-augmented answers with citations, offline.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    ask = commands.add_parser("ask", help="answer a question with citations")
    ask.add_argument("question")
    ask.add_argument(
        "--documents",
        metavar="DIR",
        help="a folder of Markdown files (default: the bundled corpus)",
    )
    ask.add_argument(
        "--show-prompt",
        action="store_true",
        help="print the prompt sent to the generator",
    )
    _common(ask)
    chat = commands.add_parser(
        "chat",
        help="a conversation: one question per line, follow-ups rewritten, until the "
        "end of input",
    )
    chat.add_argument(
        "--documents",
        metavar="DIR",
        help="a folder of Markdown files (default: the bundled corpus)",
    )
    _common(chat)
    evaluate = commands.add_parser(
        "evaluate", help="evaluate retrieval and answers on the labelled questions"
    )
    evaluate.add_argument(
        "--split",
        choices=("dev", "test", "holdout"),
        default="dev",
        help="the labelled questions to answer: dev (where choices are made; the "
        "default), test or holdout (for reporting a configuration chosen on dev)",
    )
    evaluate.add_argument(
        "--figure",
        metavar="PATH",
        default="ragbook-evaluation.png",
        help="where to write the figure",
    )
    _common(evaluate)
    return parser


def _pipeline(args) -> RAGPipeline:
    if args.probes is not None and args.lists is None:
        raise ValueError(
            "--probes needs --lists (IVF); without --lists search is exact"
        )
    probes = (
        min(DEFAULT_PROBES, args.lists or 1) if args.probes is None else args.probes
    )
    if args.lists is not None and args.retriever not in ("lsa", "embedder", "hybrid"):
        raise ValueError(
            "--lists applies to dense retrievers (lsa, embedder, hybrid), not "
            f"{args.retriever}"
        )
    if args.reader in ("llm", "quote") and args.abstain_below is not None:
        raise ValueError(
            "--abstain-below applies to the lexical, semantic and combined readers "
            "(in the last, to its semantic reader); the llm and quote readers refuse "
            "when the model does"
        )
    if args.refuse_below is not None and args.reader != "cited":
        raise ValueError(
            f"--refuse-below applies to the cited reader, not to --reader {args.reader}"
        )
    if args.reader == "cited" and args.abstain_below is not None:
        raise ValueError(
            "--abstain-below applies to the sentence pickers; the cited reader "
            "refuses by --refuse-below"
        )
    if args.model is not None and args.reader not in MODEL_READERS:
        raise ValueError(
            "--model applies to --reader cited, llm, quote or combined, not to "
            f"--reader {args.reader}"
        )
    choice = _glossary_choice(args)
    glossary = (
        GLOSSARIES[choice] if choice in GLOSSARIES else Glossary.from_json(choice)
    )
    return RAGPipeline(
        chunker=args.chunker,
        words=args.chunk_words,
        retriever=args.retriever,
        k=args.k,
        dimensions=args.dimensions,
        lists=args.lists,
        probes=probes,
        abstain_below=(
            args.refuse_below if args.reader == "cited" else args.abstain_below
        ),
        reader=args.reader,
        glossary=glossary,
        cache=not args.no_cache,
        model=args.model,
        store=getattr(args, "pg_store", None),
    )


def _glossary_choice(args) -> str:
    """--glossary as given, else astronomy on the bundled corpus for the readers chapter
    14 measured with it (the sentence pickers, combined and cited), and none for a
    folder of documents or the llm and quote readers."""
    if args.glossary:
        return args.glossary
    bundled = getattr(args, "documents", None) is None
    sentence_pickers = ("semantic", "lexical", "combined", "cited")
    return "astronomy" if bundled and args.reader in sentence_pickers else "none"


def resolve_defaults(args) -> None:
    """Fill in what the user left out. The reader: cited, chapter 14's choice on dev,
    when the language model can run here, else the best reader without one,
    semantic, with the reason kept in ``args.fallback`` for the output to name. The
    retriever: BM25 for the llm and quote readers (the retrieval chapter 14 measured
    them with), hybrid for the others."""
    args.fallback = None
    if args.reader is None:
        why = llm_missing(getattr(args, "model", None))
        args.reader = "cited" if why is None else "semantic"
        if why is not None:
            args.fallback = (
                "the default reader, cited, needs the language model, which cannot "
                f"run here ({why}): answering with the semantic reader, the best "
                "without a model"
            )
    if args.retriever is None:
        args.retriever = "bm25" if args.reader in ("llm", "quote") else "hybrid"


def _setup(args) -> str:
    if args.reader in MODEL_READERS:
        reader = f"{args.reader} reader ({args.model or 'the default model'})"
    else:
        reader = f"{args.reader} reader"
    where = ", vectors in PostgreSQL" if args.store == "postgres" else ""
    setup = f"{args.retriever}{where}, {reader}, glossary {_glossary_choice(args)}"
    fallback = getattr(args, "fallback", None)
    return f"{setup} [{fallback}]" if fallback else setup


def _with_store(run, args, out) -> int:
    """Run a command; with --store postgres, its vectors in PostgreSQL."""
    if args.store != "postgres":
        if args.dsn is not None:
            raise ValueError("--dsn needs --store postgres")
        return run(args, out)
    if args.retriever not in ("embedder", "hybrid"):
        raise ValueError(
            "--store postgres holds MiniLM vectors: use "
            "--retriever embedder or hybrid, not "
            f"{args.retriever}"
        )
    from .pgstore import store_factory

    with store_factory(args.dsn) as args.pg_store:
        return run(args, out)


def _print_checks(result, out, indent: str = "") -> None:
    if result.abstained:
        print(f"{indent}checks: the generator abstained; nothing to check", file=out)
        return
    for check in result.checks:
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
        print(f"{indent}checks: {verdict} ({', '.join(details)})", file=out)


def _print_cited(reading, out) -> None:
    """The cited reader's answer: after the words it streamed, their citations, or
    the refusal and why, or the evidence sentence quoted when the words failed the
    checks; then each evidence sentence under its id."""
    if reading.reply is not None and not reading.refused and reading.quoted:
        print(" (words the checks cannot verify; the evidence, quoted:)", file=out)
        print(reading.answer, file=out)
    elif reading.reply is not None and not reading.refused:
        print(reading.answer[len(reading.words.rstrip(".")) :], file=out)
    elif reading.reply is not None:
        print(f"\n{reading.answer} (refused: {reading.why})", file=out)
    else:
        print(f"{reading.answer} (refused: {reading.why})", file=out)
    if not reading.refused:
        for sentence in reading.evidence:
            print(f"  [{sentence.id}] {sentence.text}", file=out)
    if reading.scores is not None:
        # a score that was not computed (the lift, without the closed-book pass) is
        # -inf: left out rather than printed
        shown = ", ".join(
            f"{k} {v:.2f}" for k, v in reading.scores.items() if v > float("-inf")
        )
        print(f"  scores: {shown}", file=out)


def _chat(args, out) -> int:
    """One question per line of standard input; the last three
    exchanges are kept, an elliptical follow-up ("What about Saturn?") is rewritten
    into a standalone question, and the llm reader also reads the exchanges. Ends at
    the end of input, or on a line "quit" or "exit"."""
    from .generators import Conversation

    documents = read_folder(args.documents) if args.documents else load_corpus()
    pipeline = _pipeline(args)
    pipeline.index(documents)
    conversation = Conversation([d.title for d in documents], size=3)
    interactive = sys.stdin.isatty()
    print(
        f"{len(documents)} documents, {_setup(args)}; one question per line, "
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
        _print_checks(result, out, indent="  ")
        conversation.add(asked, result.answer)


def _ask(args, out) -> int:
    documents = read_folder(args.documents) if args.documents else load_corpus()
    pipeline = _pipeline(args)
    started = time.perf_counter()
    n = pipeline.index(documents)
    indexed = time.perf_counter()
    streaming = args.reader in ("llm", "cited")
    if streaming:  # the answer as the model writes it
        pipeline._generate.on_text = lambda piece: (out.write(piece), out.flush())
    result = pipeline.answer(args.question)
    answered = time.perf_counter()
    if args.reader == "cited":
        _print_cited(pipeline._generate.last, out)
    else:
        print("" if streaming else result.answer, file=out)
    print(
        f"\n{len(documents)} documents, {n} chunks, {_setup(args)}, top {args.k}; "
        f"indexed in {indexed - started:.2f} s, answered in {answered - indexed:.2f} s",
        file=out,
    )
    for r in result.retrieved:
        print(
            f"  [{r.rank}] score {r.score:.4f}  {r.source}  (chunk {r.chunk.id})",
            file=out,
        )
    _print_checks(result, out)
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


def _evaluate(args, out) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .labels import load_questions
    from .metrics import bootstrap_interval, evaluate_retrieval
    from .pipeline import evaluate_answers

    documents = load_corpus()
    questions = load_questions(documents, split=args.split)
    pipeline = _pipeline(args)
    pipeline.index(documents)
    ks = tuple(range(1, 11))
    rewrite = pipeline.glossary or (lambda question: question)
    report = evaluate_retrieval(
        questions,
        lambda q, k: pipeline.retriever.search(rewrite(q), k),
        pipeline.chunks,
        ks=ks,
    )
    print(
        f"retrieval ({_setup(args)}, {args.chunker} chunks of {args.chunk_words} "
        f"words, {len(pipeline.chunks)} chunks)",
        file=out,
    )
    print(report.table(), file=out)
    what = f"answering {len(questions)} labelled questions"
    with reporter(None, what, len(questions)) as progress:

        def answer(question: str):
            result = pipeline.answer(question)
            progress.update(progress.done + 1)
            return result

        answers = evaluate_answers(questions, answer)
    print(
        f"\nanswers ({args.reader} reader, "
        + (
            f"abstaining below {pipeline.reader_abstain_below}, "
            if pipeline.reader_abstain_below is not None
            else ""
        )
        + f"k = {args.k}), {answers.questions} {args.split} questions, "
        "95% bootstrap intervals:",
        file=out,
    )
    for measure, label in _MEASURES:
        low, high = bootstrap_interval(answers.values(measure))
        print(
            f"  {label:36} {answers.mean(measure):.3f}  [{low:.3f}, {high:.3f}]",
            file=out,
        )
    print(
        f"  evidence in the prompt r = {answers.r:.3f}; correct and grounded with it "
        f"a = {answers.a:.3f}, without it b = {answers.b:.3f}",
        file=out,
    )
    print(
        f"  measured {answers.accuracy:.3f} = r a + (1 - r) b = {answers.composed:.3f}",
        file=out,
    )
    print(
        f"  answered {answers.answered}; refused {answers.refused_unanswerable} "
        f"of {answers.unanswerable} unanswerable",
        file=out,
    )
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(ks, [report.mean(f"recall@{k}") for k in ks], "-o")
    ax.set_xlabel("k")
    ax.set_ylabel("recall@k")
    ax.set_ylim(0, 1)
    ax.set_title(f"{args.retriever} on the labelled questions")
    fig.tight_layout()
    fig.savefig(args.figure, dpi=120)
    print(f"\nfigure written to {args.figure}", file=out)
    return 0


def main(argv: Sequence[str] | None = None, out=None) -> int:
    """Run the tool; returns the exit status (0 on success, 2 for bad input)."""
    out = out or sys.stdout
    if argv is not None:
        argv = validate.texts(argv, "argv")
    args = build_parser().parse_args(argv)
    try:
        resolve_defaults(args)
        command = {"ask": _ask, "chat": _chat, "evaluate": _evaluate}[args.command]
        return _with_store(command, args, out)
    except KeyboardInterrupt:
        print("", file=out)
        return 130
    except (ValueError, ModelError, RuntimeError, ConnectionError) as error:
        print(f"ragbook: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        print(
            f"ragbook: error: {error}\n(without the embedder: --retriever bm25 "
            "--reader lexical)",
            file=sys.stderr,
        )
        return 2
