"""The tool's options: the parser of ``ask``, ``chat`` and ``evaluate``, the defaults
filled in from what can run here, and the pipeline the options describe (chapter 14;
the CLI appendix lists every option).
"""

from __future__ import annotations

import argparse

from ..corpus.orgdocs import ACCESS_LEVELS
from ..generation.readers import LEXICAL_ABSTAIN_BELOW, SEMANTIC_ABSTAIN_BELOW
from ..llm import ModelError, model_file, records_mode
from ..llm import missing as llm_missing
from ..retrieval.glossary import ASTRONOMY, Glossary
from ..system.pipeline import CHUNKERS, RETRIEVERS
from ..system.rag import MODEL_READERS, READERS, RAGPipeline, replayed_model

__all__ = [
    "DEFAULT_PROBES",
    "GLOSSARIES",
    "add_common_options",
    "build_parser",
    "build_pipeline",
    "glossary_choice",
    "model_unavailable",
    "resolve_defaults",
    "describe_setup",
    "with_store",
]


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


def add_common_options(parser: argparse.ArgumentParser) -> None:
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
        "with 'none' are below this (default: none, chapter 15's choice on dev)",
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


def add_document_options(parser: argparse.ArgumentParser) -> None:
    """The documents to read and the access levels their reader holds (ask, chat)."""
    parser.add_argument(
        "--documents",
        metavar="DIR",
        help="a folder of Markdown files (default: the bundled corpus); a file that "
        "opens with a metadata block (id, access, version, date) is indexed in its "
        "latest version, when --access allows it",
    )
    parser.add_argument(
        "--access",
        nargs="+",
        choices=ACCESS_LEVELS,
        default=["public"],
        metavar="LEVEL",
        help="the access levels the reader holds, among "
        f"{', '.join(ACCESS_LEVELS)} (default: public); a document of another "
        "level is left out",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragbook",
        description="Retrieval-augmented answers with citations, offline.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    ask = commands.add_parser("ask", help="answer a question with citations")
    ask.add_argument("question")
    add_document_options(ask)
    ask.add_argument(
        "--show-prompt",
        action="store_true",
        help="print the prompt sent to the generator",
    )
    add_common_options(ask)
    chat = commands.add_parser(
        "chat",
        help="a conversation: one question per line, follow-ups rewritten, until the "
        "end of input",
    )
    add_document_options(chat)
    add_common_options(chat)
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
    add_common_options(evaluate)
    return parser


def build_pipeline(args) -> RAGPipeline:
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
    choice = glossary_choice(args)
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


def glossary_choice(args) -> str:
    """--glossary as given, else astronomy on the bundled corpus for the readers chapter
    14 measured with it (the sentence pickers, combined and cited), and none for a
    folder of documents or the llm and quote readers."""
    if args.glossary:
        return args.glossary
    bundled = getattr(args, "documents", None) is None
    sentence_pickers = ("semantic", "lexical", "combined", "cited")
    return "astronomy" if bundled and args.reader in sentence_pickers else "none"


def model_unavailable(model=None) -> str | None:
    """Why the model readers cannot answer with ``model`` here, or None when they can:
    the runtime and the model installed (:func:`ragbook.llm.missing`), or, with
    ``RAGBOOK_LLM_RECORDS=only``, where the model never runs, the model named (a known
    model, or a GGUF file that is there)."""
    if records_mode() != "only":
        return llm_missing(model)
    try:
        model_file(model)
    except ModelError as error:
        return str(error).splitlines()[0]
    return None


def resolve_defaults(args) -> None:
    """Fill in what the user left out. The reader: cited, the reader chapter's choice
    on dev, when the language model can answer here (:func:`model_unavailable`), else
    the best reader without one, semantic, with the reason kept in ``args.fallback`` for
    the output to name; but a model named with ``--model`` that cannot answer is an
    error, since the user asked for it. The retriever: BM25 for the llm and quote
    readers (the retrieval the reader chapter measured them with), hybrid for the
    others."""
    args.fallback = None
    if args.reader is None:
        model = getattr(args, "model", None)
        why = model_unavailable(model)
        if why is not None and model is not None:
            raise ValueError(f"--model {model} cannot answer here: {why}")
        args.reader = "cited" if why is None else "semantic"
        if why is not None:
            args.fallback = (
                "the default reader, cited, needs the language model, which cannot "
                f"run here ({why}): answering with the semantic reader, the best "
                "without a model"
            )
    if args.retriever is None:
        args.retriever = "bm25" if args.reader in ("llm", "quote") else "hybrid"


def describe_setup(args) -> str:
    if args.reader in MODEL_READERS:
        replayed = replayed_model(args.model)
        records = f", replayed from the book's {replayed} records" if replayed else ""
        reader = f"{args.reader} reader ({args.model or 'the default model'}{records})"
    else:
        reader = f"{args.reader} reader"
    where = ", vectors in PostgreSQL" if args.store == "postgres" else ""
    setup = f"{args.retriever}{where}, {reader}, glossary {glossary_choice(args)}"
    fallback = getattr(args, "fallback", None)
    return f"{setup} [{fallback}]" if fallback else setup


def with_store(run, args, out) -> int:
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
    from ..postgres.store import store_factory

    with store_factory(args.dsn) as args.pg_store:
        return run(args, out)
