"""Sparse retrieval benchmark: ragbook's BM25 against bm25s and rank_bm25.

Run from the project root:

    .venv/bin/python benchmarks/sparse.py /path/to/beir/scifact
        [--synthetic 100000 1000000] [--skip-synthetic]
        [--output benchmarks/results/sparse.json | --no-output] [--note TEXT]
    .venv/bin/python benchmarks/sparse.py --quick [--output PATH]

It prints plain-text tables and writes every figure to a JSON file (default
benchmarks/results/sparse.json, structure in benchmarks/README.md); the BEIR folder is
only read, and no bytecode is written. ragbook is timed three times, each a batch of
every query in one call (BM25.search_batch, arrays of ids and scores): its default,
which chooses for each query between MaxScore and scoring every posting; pruning=True
(MaxScore for every query); and pruning=False (every posting scored). bm25s runs with
its numpy backend (its fastest documented path) and its numba backend (its batch call,
with one thread or all of them, whichever is faster here).

1. effectiveness on the BEIR test split (nDCG@10, R@100, RR@10 with ir_measures on
   top-1000 runs), beside published figures (hard-coded, taken from the dataset's
   PROVENANCE.md);
2. speed and memory on that corpus, with the same tokens for every library: index build
   time, query throughput at k=10 and k=1000, array bytes, memory retained by the index
   and peak memory while building;
3. the same on seeded synthetic Zipf corpora (100,000 and 1,000,000 documents by
   default).

--quick runs every part in seconds on small synthetic data (a BEIR folder of 1,500
synthetic documents written to a temporary folder, then 2,000 and 4,000 documents), one
repeat each, so that a test can check that the script still runs and writes every
documented key; its timings say nothing about speed.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the project

from harness import (  # noqa: E402  (the benchmarks' shared harness)
    RESULTS_DIR,
    load,
    load_average,
    note,
    run_info,
    table,
    take_turns,
    time_calls,
    verdict,
    write_results,
)

import argparse
import gc
import json
import os
import platform
import tempfile
import time
import tracemalloc
from datetime import datetime, timezone
from importlib import metadata

import numba
import numpy as np

import bm25s
import ir_measures
import rank_bm25
import Stemmer
from ir_measures import RR, R, nDCG

from ragbook.retrieval.bm25 import BM25
from ragbook.corpus.beir import read_beir
from ragbook.retrieval.ranking import top_k
from ragbook.retrieval.contract import Hit
from ragbook.indexing.text import Analyzer

K1, B = 1.5, 0.75
MEASURES = [nDCG @ 10, R @ 100, RR @ 10]
RUN_DEPTH = 1000
SYNTHETIC_BUDGET_SECONDS = (
    180.0  # the largest synthetic size is reduced if it is predicted to take longer
)
RANK_BM25_BUDGET_SECONDS = (
    60.0  # rank_bm25 on a synthetic corpus only if it fits in this
)
RANK_BM25_QUERIES = 30
BUILD_REPEATS = 3  # builds on SciFact (and synthetic sizes up to 100,000): best of 3
CHOICE_REPEATS = 5  # passes when choosing bm25s's retrieval path

# Published BM25 figures on SciFact's 300 test queries, flat documents (title + " " +
# text). Source: /work/shared/data/scifact/PROVENANCE.md (which cites
# Pyserini/Anserini's BEIR regressions, the BEIR paper, Thakur et al. 2021, and bm25s
# 0.3.16). They are published numbers, NOT computed by this script.
PUBLISHED = [
    # (system, nDCG@10, recall@100); None where no figure is published
    (
        "Pyserini/Anserini BM25 flat (k1=0.9, b=0.4, Porter, Lucene stopwords)",
        0.6789,
        0.9253,
    ),
    ("Pyserini/Anserini BM25 multifield", 0.6647, 0.9076),
    ("BEIR paper, Elasticsearch BM25", 0.665, None),
    (
        "bm25s 0.3.16 default (lucene, k1=1.5, b=0.75, en stopwords, Snowball)",
        0.6863,
        None,
    ),
    ("bm25s, stopwords only, no stemmer", 0.6617, None),
]


# --- printing -------------------------------------------------------------------------


def mib(n: float | None) -> float | None:
    return None if n is None else n / 2**20


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


# --- measuring ------------------------------------------------------------------------


def traced(fn) -> tuple[object, int, int]:
    """Run ``fn`` under tracemalloc: (result, bytes still held afterwards, peak bytes
    while running)."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = fn()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, current - base, peak - base


def build_ragbook(token_lists):
    return BM25.from_tokens(token_lists, k1=K1, b=B)


def build_bm25s(token_lists):
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene", backend="numpy")
    retriever.index(token_lists, show_progress=False)
    return retriever


def build_bm25s_numba(token_lists):
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene", backend="numba")
    retriever.index(token_lists, show_progress=False)
    return retriever


def numba_missing() -> str | None:
    """Why bm25s's numba backend cannot run here, or None when it can."""
    try:
        import numba  # noqa: F401
    except ImportError as error:
        return f"bm25s's numba backend not run: numba does not import ({error})"
    return None


def build_rank_bm25(token_lists):
    return rank_bm25.BM25Okapi(token_lists, k1=K1, b=B)


def bm25s_nbytes(retriever) -> int:
    return sum(retriever.scores[key].nbytes for key in ("data", "indices", "indptr"))


def ragbook_queries(query_lists):
    # BM25.search refuses an empty term list; a query with no tokens at all gets a term
    # no chunk has.
    return [q if q else ["\x00"] for q in query_lists]


def bm25s_batch(retriever, query_lists, k, n_threads):
    return retriever.retrieve(
        query_lists, k=k, n_threads=n_threads, show_progress=False
    )


def bm25s_one_by_one(retriever, query_lists, k):
    return [retriever.retrieve([q], k=k, show_progress=False) for q in query_lists]


def distinct(tokens):
    return list(dict.fromkeys(tokens))


def choose_numba_threads(retriever, query_lists) -> int:
    """bm25s's numba batch with n_threads=1 or 0 (all threads): the faster on these
    queries at k=10 and k=1000 together, taking turns."""
    for threads in (1, 0):
        bm25s_batch(retriever, query_lists[:5], 10, threads)  # compiles
    turns = take_turns(
        {
            threads: (
                lambda t=threads: [
                    bm25s_batch(retriever, query_lists, k, t) for k in (10, 1000)
                ]
            )
            for threads in (1, 0)
        },
        CHOICE_REPEATS,
    )
    return min(turns, key=lambda t: turns[t].best)


def same_as_scoring_everything(model, queries, k, results) -> int:
    """How many queries get, in every one of ``results`` (batches of (ids, scores)),
    the ids and scores of ranking every chunk's score from BM25.scores (the top k of
    the float32 scores by numpy's lexsort: score descending, then id)."""
    same = 0
    for row, query in enumerate(queries):
        scores = model.scores(query)
        order = np.lexsort((np.arange(scores.size), -scores))[:k]
        same += all(
            np.array_equal(ids[row], order)
            and np.array_equal(values[row], scores[order])
            for ids, values in results
        )
    return same


# --- part 1: effectiveness ------------------------------------------------------------


def pairs(ranking) -> list[tuple[int, float]]:
    """A ranking as (document index, score) pairs: ragbook's retrievers return
    :class:`~ragbook.retrieval.contract.Hit` records, bm25s two arrays zipped into
    pairs."""
    return [
        (hit.chunk_id, hit.score) if isinstance(hit, Hit) else (int(hit[0]), hit[1])
        for hit in ranking
    ]


def evaluate(qrels, qids, doc_ids, rankings) -> dict:
    """ir_measures aggregates of a run given as, per query, a list of hits or of
    (document index, score) pairs."""
    run = {
        q: {doc_ids[int(i)]: float(s) for i, s in pairs(ranking)}
        for q, ranking in zip(qids, rankings)
    }
    values = ir_measures.calc_aggregate(MEASURES, qrels, run)
    return {str(m): float(values[m]) for m in MEASURES}


def load_beir(folder):
    data = read_beir(folder, split="test")
    doc_ids = list(data.corpus)
    texts = [data.corpus[d]["title"] + " " + data.corpus[d]["text"] for d in doc_ids]
    qids = [q for q in data.queries if q in data.qrels]
    qtexts = [data.queries[q] for q in qids]
    return data, doc_ids, texts, qids, qtexts


def bm25s_token_strings(texts, stemmer):
    """bm25s's default pipeline, with its ids turned back into token strings through the
    returned vocab."""
    tokenized = bm25s.tokenize(
        texts, stopwords="en", stemmer=stemmer, show_progress=False
    )
    words = {i: w for w, i in tokenized.vocab.items()}
    return tokenized, [[words[i] for i in ids] for ids in tokenized.ids]


def part1(folder):
    print("=" * 100)
    print(
        "1. EFFECTIVENESS on the BEIR test split (documents = title + ' ' + text, "
        "'flat')"
    )
    print("=" * 100)
    data, doc_ids, texts, qids, qtexts = load_beir(folder)
    judgements = sum(len(v) for v in data.qrels.values())
    print(
        f"corpus: {folder}  ({len(doc_ids):,} documents, {len(qids)} test "
        f"queries, {judgements} judgements)"
    )
    print(
        f"scored with ir_measures {metadata.version('ir-measures')} (pytrec_eval, "
        f"as trec_eval does) on top-{RUN_DEPTH} runs"
    )
    print()

    # Tokenization, timed once each.
    analyzer = Analyzer(stemmer="english")
    t0 = time.perf_counter()
    ragbook_docs = [analyzer(t) for t in texts]
    t_ragbook_tok = time.perf_counter() - t0
    stemmer = Stemmer.Stemmer("english")
    t0 = time.perf_counter()
    corpus_tokenized = bm25s.tokenize(
        texts, stopwords="en", stemmer=stemmer, show_progress=False
    )
    t_bm25s_tok = time.perf_counter() - t0
    t0 = time.perf_counter()
    words = {i: w for w, i in corpus_tokenized.vocab.items()}
    doc_tokens = [[words[i] for i in ids] for ids in corpus_tokenized.ids]
    t_to_strings = time.perf_counter() - t0
    _, query_tokens = bm25s_token_strings(qtexts, stemmer)
    n_tokens = sum(map(len, doc_tokens))

    # a. ragbook with its own English analyzer + Snowball stemmer.
    model_a = BM25.from_tokens(ragbook_docs, analyzer=analyzer, k1=K1, b=B)
    run_a = [model_a.search(q, RUN_DEPTH) for q in qtexts]
    res_a = evaluate(data.qrels, qids, doc_ids, run_a)

    # b. ragbook and bm25s on exactly bm25s's tokens; ragbook's default search (the
    # index's choice), MaxScore for every query, and every posting scored.
    model_b = BM25.from_tokens(doc_tokens, k1=K1, b=B)
    rq = ragbook_queries(query_tokens)
    run_b = [model_b.search(q, RUN_DEPTH) for q in rq]
    res_b = evaluate(data.qrels, qids, doc_ids, run_b)
    run_bp = [model_b.search(q, RUN_DEPTH, pruning=True) for q in rq]
    run_bx = [model_b.search(q, RUN_DEPTH, pruning=False) for q in rq]
    res_bx = evaluate(data.qrels, qids, doc_ids, run_bx)
    identical = {
        depth: sum(
            a[:depth] == b[:depth] == c[:depth]
            for a, b, c in zip(run_b, run_bp, run_bx)
        )
        for depth in (10, RUN_DEPTH)
    }

    retriever = build_bm25s(doc_tokens)
    docs, scores = bm25s_batch(retriever, query_tokens, RUN_DEPTH, 0)
    run_s = [list(zip(d, s)) for d, s in zip(docs, scores)]
    res_s = evaluate(data.qrels, qids, doc_ids, run_s)

    # b'. ragbook with count_repeats=True: a repeated query token counts once per
    # occurrence, as bm25s does.
    model_d = BM25.from_tokens(doc_tokens, k1=K1, b=B, count_repeats=True)

    def with_repeats(q):
        return model_d.scores(q)

    dup_scores = [with_repeats(q) for q in query_tokens]
    run_d = [top_k(s, RUN_DEPTH) for s in dup_scores]
    res_d = evaluate(data.qrels, qids, doc_ids, run_d)
    # Scores: ragbook's are bm25s's times (k1 + 1); check on the top 10 of every query.
    rel_err = 0.0
    for s_rb, d, s in zip(dup_scores, docs, scores):
        top = np.asarray(d[:10])
        expected = np.asarray(s[:10], dtype=np.float64) * (K1 + 1)
        rel_err = max(
            rel_err,
            float(np.max(np.abs(s_rb[top] - expected) / np.maximum(expected, 1e-9))),
        )
    same_top10 = sum(
        [hit.chunk_id for hit in r[:10]] == [int(x) for x in d[:10]]
        for r, d in zip(run_d, docs)
    )
    with_rep = sum(len(set(q)) < len(q) for q in query_tokens)
    n_empty = sum(not q for q in query_tokens)

    # c. rank_bm25 (BM25Okapi, its idf with the epsilon floor) on the same tokens.
    okapi = build_rank_bm25(doc_tokens)
    run_r = [top_k(okapi.get_scores(q), RUN_DEPTH) for q in query_tokens]
    res_r = evaluate(data.qrels, qids, doc_ids, run_r)

    keys = [str(m) for m in MEASURES]
    rows = [
        ["a. ragbook BM25, Analyzer(stemmer='english')"] + [res_a[k] for k in keys],
        ["b. ragbook BM25 on bm25s tokens (distinct query terms)"]
        + [res_b[k] for k in keys],
        ["b. the same, pruning=False (every posting scored)"]
        + [res_bx[k] for k in keys],
        ["b. bm25s 0.3.16 lucene on the same tokens"] + [res_s[k] for k in keys],
        ["b. ragbook on bm25s tokens, BM25(count_repeats=True)"]
        + [res_d[k] for k in keys],
        ["c. rank_bm25 BM25Okapi on the same tokens"] + [res_r[k] for k in keys],
    ]
    table(["computed here (k1=1.5, b=0.75)", "nDCG@10", "R@100", "RR@10"], rows)
    table(
        [
            "PUBLISHED, not computed here (source: scifact/PROVENANCE.md)",
            "nDCG@10",
            "R@100",
            "RR@10",
        ],
        [[name, ndcg, rec, None] for name, ndcg, rec in PUBLISHED],
    )
    diff = res_b["nDCG@10"] - res_s["nDCG@10"]
    diff_d = res_d["nDCG@10"] - res_s["nDCG@10"]
    print("Targets")
    print(
        f"  a. ragbook analyzer nDCG@10 >= 0.675: {res_a['nDCG@10']:.4f}  "
        f"{verdict(res_a['nDCG@10'] >= 0.675)}"
        f"  (Pyserini flat 0.6789, bm25s default 0.6863: published)"
    )
    print(
        "  b. |nDCG@10 ragbook - bm25s| <= 0.001 on the same tokens and the same "
        "query model: "
        f"{diff_d:+.4f}  {verdict(abs(diff_d) <= 0.001)}"
    )
    print(
        f"     (BM25(count_repeats=True): {with_rep} of {len(qids)} queries "
        f"repeat a token ({n_empty} have none), and bm25s"
    )
    print(
        "     adds a term once per occurrence; with ragbook's default, a sum over "
        "distinct query terms as in the"
    )
    print(
        f"     formula, the difference is {diff:+.4f}: a different query model, "
        "not a different BM25)"
    )
    print(
        f"     with the same top 10 for {same_top10} of {len(qids)} queries; max "
        "relative difference between ragbook's"
    )
    print(
        f"     score and bm25s's score x (k1+1) = {K1 + 1} over those top 10s: "
        f"{rel_err:.1e} (float32 rounding)."
    )
    print(f"     ragbook's scores are bm25s's times k1+1, which changes no ranking.")
    same = identical[RUN_DEPTH] == len(qids)
    print(
        f"  b. the default and MaxScore give the exhaustive top {RUN_DEPTH} (ids, "
        "scores, order) for "
        f"{identical[RUN_DEPTH]} of {len(qids)} queries: {verdict(same)}"
    )
    print()
    tok = {
        "ragbook Analyzer(stemmer='english')": t_ragbook_tok,
        "bm25s.tokenize(stopwords='en', Snowball)": t_bm25s_tok,
        "  + bm25s ids back to token strings": t_to_strings,
    }
    table(
        ["tokenization of the corpus, timed once", "seconds"],
        [[k, v] for k, v in tok.items()],
    )
    key = {"nDCG@10": "ndcg_at_10", "R@100": "recall_at_100", "RR@10": "rr_at_10"}
    record = {
        "dataset": os.path.basename(os.path.normpath(folder)),
        "split": "test",
        "documents": len(doc_ids),
        "queries": len(qids),
        "judgements": judgements,
        "run_depth": RUN_DEPTH,
        "systems": {
            name: {key[m]: v for m, v in res.items()}
            for name, res in (
                ("ragbook_analyzer", res_a),
                ("ragbook_bm25s_tokens", res_b),
                ("ragbook_bm25s_tokens_exhaustive", res_bx),
                ("bm25s", res_s),
                ("ragbook_bm25s_tokens_count_repeats", res_d),
                ("rank_bm25", res_r),
            )
        },
        "ragbook_count_repeats_minus_bm25s_ndcg_at_10": diff_d,
        "ragbook_distinct_terms_minus_bm25s_ndcg_at_10": diff,
        "pruned_minus_exhaustive_ndcg_at_10": res_b["nDCG@10"] - res_bx["nDCG@10"],
        "pruned_runs_identical_to_exhaustive": {
            f"top_{depth}": count for depth, count in identical.items()
        },
        "queries_repeating_a_token": with_rep,
        "queries_without_tokens": n_empty,
        "same_top10_count_repeats_vs_bm25s": same_top10,
        "max_relative_score_difference_top10": rel_err,
        "published": [
            {"system": name, "ndcg_at_10": ndcg, "recall_at_100": rec}
            for name, ndcg, rec in PUBLISHED
        ],
        "tokenization_s": {
            "ragbook_analyzer": t_ragbook_tok,
            "bm25s_tokenize": t_bm25s_tok,
            "bm25s_ids_to_strings": t_to_strings,
        },
    }
    return doc_tokens, query_tokens, corpus_tokenized, n_tokens, record


# --- parts 2 and 3: speed and memory --------------------------------------------------


class Clock:
    """Predicted cost of a section: one build of each kind, one traced build,
    QUERY_REPEATS query passes."""

    def __init__(self):
        self.single_pass = 0.0


QUERY_REPEATS = (
    3  # query passes are always best of 3: they are the most sensitive to other load
)


def choose_bm25s_mode(retriever, query_lists) -> tuple[str, dict]:
    """Time bm25s's documented retrieval paths on the SciFact queries; return the
    fastest and all timings."""
    modes = {
        "retrieve(batch, n_threads=0)": lambda k: bm25s_batch(
            retriever, query_lists, k, 0
        ),
        "retrieve(batch, n_threads=1)": lambda k: bm25s_batch(
            retriever, query_lists, k, 1
        ),
        "retrieve([q]) one query at a time": lambda k: bm25s_one_by_one(
            retriever, query_lists, k
        ),
    }
    for fn in modes.values():
        fn(10)  # warm-up
    timings = {name: {} for name in modes}
    for k in (10, 1000):
        turns = take_turns(
            {name: (lambda fn=fn: fn(k)) for name, fn in modes.items()},
            CHOICE_REPEATS,
        )
        best = {name: t.best for name, t in turns.items()}
        for name, t in best.items():
            timings[name][k] = len(query_lists) / t
    best = max(timings, key=lambda m: timings[m][10] + timings[m][1000])
    return best, timings


BM25S_MODES = {
    "retrieve(batch, n_threads=0)": lambda r, q, k: bm25s_batch(r, q, k, 0),
    "retrieve(batch, n_threads=1)": lambda r, q, k: bm25s_batch(r, q, k, 1),
    "retrieve([q]) one query at a time": lambda r, q, k: bm25s_one_by_one(r, q, k),
}


def speed(label, doc_tokens, query_tokens, bm25s_mode, repeats, rank_plan, clock=None):
    """Build, query and memory measurements; prints the tables and returns the numbers.

    ``repeats``: builds are best of that many; query passes are best of QUERY_REPEATS,
    the systems taking turns pass by pass so that a burst of load from elsewhere hits
    them alike. "ragbook" is BM25.search_batch as it is (the index chooses MaxScore or
    every posting for each query), "ragbook_maxscore" the same with pruning=True and
    "ragbook_exhaustive" with pruning=False: one call for every query, ids and scores
    as arrays.
    """
    n_docs, n_q = len(doc_tokens), len(query_tokens)
    rq = ragbook_queries(query_tokens)
    numba_note = numba_missing()
    out = {
        "ragbook": {},
        "ragbook_maxscore": {},
        "ragbook_exhaustive": {},
        "bm25s": {},
        "bm25s_numba": {},
        "rank_bm25": {},
    }
    single = 0.0

    # Build time (best of `repeats`), then a separate build under tracemalloc for the
    # memory.
    for name, build in (("ragbook", build_ragbook), ("bm25s", build_bm25s)):
        note(f"{label}: building {name} x{repeats}")
        built = time_calls(lambda: build(doc_tokens), repeats)
        t, model = built.best, built.result
        del built
        out[name]["build"] = t
        single += t
        del model
        gc.collect()
        note(f"{label}: building {name} under tracemalloc")
        t0 = time.perf_counter()
        model, held, peak = traced(lambda: build(doc_tokens))
        single += time.perf_counter() - t0
        out[name]["held"], out[name]["peak"] = held, peak
        if name == "ragbook":
            out[name]["arrays"] = model.nbytes
            out[name]["arrays+idf"] = model.nbytes + model.idf.nbytes
            ragbook_model = model
        else:
            out[name]["arrays"] = bm25s_nbytes(model)
            out[name]["arrays+idf"] = None
            bm25s_model = model
        del model
    numba_model = None
    if numba_note is None:
        note(f"{label}: building bm25s (numba backend), timed once")
        t0 = time.perf_counter()
        numba_model = build_bm25s_numba(doc_tokens)
        out["bm25s_numba"]["build"] = time.perf_counter() - t0
        out["bm25s_numba"]["arrays"] = bm25s_nbytes(numba_model)

    # Query throughput, and the postings each ragbook search reads.
    run = BM25S_MODES[bm25s_mode]
    systems = {
        "ragbook": lambda k: ragbook_model.search_batch(rq, k),
        "ragbook_maxscore": lambda k: ragbook_model.search_batch(rq, k, pruning=True),
        "ragbook_exhaustive": lambda k: ragbook_model.search_batch(
            rq, k, pruning=False
        ),
        "bm25s": lambda k: run(bm25s_model, query_tokens, k),
    }
    numba_threads = None
    if numba_model is not None:
        numba_threads = choose_numba_threads(numba_model, query_tokens)
        systems["bm25s_numba"] = lambda k: bm25s_batch(
            numba_model, query_tokens, k, numba_threads
        )
    identical, postings, chosen = {}, {}, {}
    for k in (10, 1000):
        note(f"{label}: queries k={k}")
        # warm-up (the numba code is compiled, or loaded from its cache, on first use)
        for pruning in (None, True, False):
            ragbook_model.search_batch(rq[:5], k, pruning=pruning)
        run(bm25s_model, query_tokens[:5], k)
        if numba_model is not None:
            bm25s_batch(numba_model, query_tokens[:5], k, numba_threads)
        turns = take_turns(
            {name: (lambda fn=fn: fn(k)) for name, fn in systems.items()},
            QUERY_REPEATS,
        )
        for name, timing in turns.items():
            out[name][f"qps{k}"] = n_q / timing.best
            single += QUERY_REPEATS * timing.best
        identical[f"k{k}"] = same_as_scoring_everything(
            ragbook_model,
            rq,
            k,
            [turns[name].result for name in ("ragbook", "ragbook_maxscore")]
            + [turns["ragbook_exhaustive"].result],
        )
        del turns
        read = [ragbook_model.postings_read(q, k) for q in rq]
        chosen[f"k{k}"] = {
            "maxscore": sum(ragbook_model.prunes(q, k) for q in rq),
            "queries": n_q,
        }
        postings[f"k{k}"] = {
            "pruned": sum(r for r, _ in read),
            "exhaustive": sum(x for _, x in read),
        }
        postings[f"k{k}"]["share"] = postings[f"k{k}"]["pruned"] / max(
            1, postings[f"k{k}"]["exhaustive"]
        )
    del ragbook_model, bm25s_model, numba_model, systems
    gc.collect()

    # rank_bm25: build once or best of `repeats`, throughput on a subset of queries,
    # extrapolated.
    rank_note = None
    if rank_plan is not None:
        rank_repeats, n_sub = rank_plan
        note(f"{label}: rank_bm25 build")
        built = time_calls(lambda: build_rank_bm25(doc_tokens), rank_repeats)
        t, okapi = built.best, built.result
        del built
        out["rank_bm25"]["build"] = t
        del okapi
        gc.collect()
        okapi, held, peak = traced(lambda: build_rank_bm25(doc_tokens))
        out["rank_bm25"]["held"], out["rank_bm25"]["peak"] = held, peak
        out["rank_bm25"]["arrays"] = out["rank_bm25"]["arrays+idf"] = None
        subset = query_tokens[:n_sub]
        ids = list(range(n_docs))
        for k in (10, 1000):
            note(f"{label}: rank_bm25 queries k={k}")
            t = time_calls(
                lambda: [okapi.get_top_n(q, ids, n=k) for q in subset], rank_repeats
            ).best
            out["rank_bm25"][f"qps{k}"] = len(subset) / t
        del okapi
        gc.collect()
        rank_note = (
            f"rank_bm25 query throughput measured on the first {len(subset)} of "
            f"the {n_q} queries "
            f"(get_top_n, best of {rank_repeats}) and extrapolated: queries/s = "
            f"{len(subset)} / time."
        )
    if clock is not None:
        clock.single_pass = single

    has_n, has_o = numba_note is None, rank_plan is not None
    names = (
        ["ragbook", "ragbook_maxscore", "ragbook_exhaustive", "bm25s"]
        + (["bm25s_numba"] if has_n else [])
        + (["rank_bm25"] if has_o else [])
    )
    r, x, s = out["ragbook"], out["ragbook_exhaustive"], out["bm25s"]
    n, o = out["bm25s_numba"], out["rank_bm25"]
    headers = ["", *names] + [f"ragbook/{other}" for other in names[1:]]

    def row(title, key, scale=lambda x: x):
        vals = [scale(out[name].get(key)) for name in names]
        ratios = [ratio(r.get(key), out[other].get(key)) for other in names[1:]]
        return [title, *vals, *ratios]

    table(
        headers,
        [
            row("index build, s (lower is better)", "build"),
            row("queries/s, k=10 (higher is better)", "qps10"),
            row("queries/s, k=1000 (higher is better)", "qps1000"),
            row("index arrays, MiB", "arrays", mib),
            row("  ragbook arrays + its idf array, MiB", "arrays+idf", mib),
            row("held after build (tracemalloc), MiB", "held", mib),
            row("peak during build (tracemalloc), MiB", "peak", mib),
        ],
        title=f"{label}: {n_docs:,} documents, {sum(map(len, doc_tokens)):,} tokens, "
        f"{n_q:,} queries; "
        f"build best of {repeats}, queries best of {QUERY_REPEATS} passes",
    )
    if rank_note:
        print("  " + rank_note)
    if numba_note:
        print("  " + numba_note)
    print(
        f"  bm25s retrieval path: {bm25s_mode}, backend='numpy', sorted=True, "
        "show_progress=False;"
    )
    if numba_threads is not None:
        print(
            "  bm25s_numba: backend='numba', retrieve(batch, "
            f"n_threads={numba_threads}) (the faster of 1 and 0, all threads), built "
            "once (its build is not a target)."
        )
    print(
        "  ragbook: BM25.search_batch(token lists, k), every query in one call "
        "(arrays of ids and scores, as bm25s"
    )
    print(
        "           returns), the index choosing MaxScore or every posting per "
        f"query, on {numba.get_num_threads()} threads; ragbook_maxscore and"
    )
    print(
        "           ragbook_exhaustive: the same call with pruning=True and "
        "pruning=False."
    )
    for k in (10, 1000):
        p, c = postings[f"k{k}"], chosen[f"k{k}"]
        print(
            f"  k={k}: MaxScore read {p['pruned']:,} of the {p['exhaustive']:,} "
            f"postings of the query terms ({p['share']:.1%}); the default chose it "
            f"for {c['maxscore']} of {n_q} queries;"
        )
        print(
            f"         the same ids and scores in all three and in scoring every "
            f"chunk for {identical[f'k{k}']} of {n_q} queries"
        )
    print(
        "  index arrays: ragbook BM25.nbytes (doc_ids + weights + indptr + upper "
        "bounds); bm25s scores data + indices + indptr."
    )
    print(
        "  held = bytes tracemalloc still counts after the build (arrays, "
        "vocabulary dict, per-document objects);"
    )
    print(
        "  peak = the most bytes traced at once during the build; the input token "
        "lists existed before and are excluded."
    )
    print()
    targets = [  # (target, met, ragbook's figure, the other system's figure)
        (
            "identical hits: default, MaxScore, exhaustive",
            all(identical[f"k{k}"] == n_q for k in (10, 1000)),
            sum(identical.values()),
            2 * n_q,
        ),
        (
            "query throughput >= 2x bm25s numpy, k=10",
            r["qps10"] >= 2 * s["qps10"],
            r["qps10"],
            s["qps10"],
        ),
        (
            "query throughput >= bm25s numpy, k=1000",
            r["qps1000"] >= s["qps1000"],
            r["qps1000"],
            s["qps1000"],
        ),
        (
            "index build <= 1.5x bm25s",
            r["build"] <= 1.5 * s["build"],
            r["build"],
            s["build"],
        ),
        (
            "index memory (arrays) <= bm25s",
            r["arrays"] <= s["arrays"],
            r["arrays"],
            s["arrays"],
        ),
    ]
    for k in (10, 1000):
        faster = max(x[f"qps{k}"], out["ragbook_maxscore"][f"qps{k}"])
        targets.append(
            (
                f"default >= 0.95x its faster way, k={k}",
                r[f"qps{k}"] >= 0.95 * faster,
                r[f"qps{k}"],
                faster,
            )
        )
    if has_n:
        targets += [
            (
                f"query throughput >= bm25s numba, k={k}",
                r[f"qps{k}"] >= n[f"qps{k}"],
                r[f"qps{k}"],
                n[f"qps{k}"],
            )
            for k in (10, 1000)
        ]
    if has_o:
        targets += [
            (
                "throughput >= 20x rank_bm25, k=10",
                r["qps10"] >= 20 * o["qps10"],
                r["qps10"],
                o["qps10"],
            ),
            (
                "throughput >= 20x rank_bm25, k=1000",
                r["qps1000"] >= 20 * o["qps1000"],
                r["qps1000"],
                o["qps1000"],
            ),
        ]
    print(f"Targets ({label})")
    for text, met, mine, other in targets:
        print(f"  {text:<42} ragbook/other = {ratio(mine, other):>8}  {verdict(met)}")
    m = out["ragbook_maxscore"]
    print(
        f"  (ragbook's own ways: MaxScore / exhaustive k=10 "
        f"{ratio(m['qps10'], x['qps10'])}, k=1000 {ratio(m['qps1000'], x['qps1000'])})"
    )
    print()
    out["record"] = speed_record(
        out,
        names,
        n_docs,
        sum(map(len, doc_tokens)),
        n_q,
        repeats,
        bm25s_mode,
        [text for text in (rank_note, numba_note) if text],
        targets,
    )
    out["record"]["postings_read"] = postings
    out["record"]["identical_hits"] = identical
    out["record"]["default_chose_maxscore"] = chosen
    out["record"]["ragbook_threads"] = numba.get_num_threads()
    out["record"]["bm25s_numba_threads"] = numba_threads
    return out


SYSTEM_KEYS = {  # speed() key -> results-file key, and the scale from the measured unit
    "build": ("build_s", lambda x: x),
    "qps10": ("queries_per_s_k10", lambda x: x),
    "qps1000": ("queries_per_s_k1000", lambda x: x),
    "arrays": ("index_arrays_mib", mib),
    "arrays+idf": ("index_arrays_with_idf_mib", mib),
    "held": ("held_after_build_mib", mib),
    "peak": ("peak_build_mib", mib),
}


def speed_record(
    out, names, n_docs, n_tokens, n_q, repeats, bm25s_mode, notes, targets
) -> dict:
    """The results-file form of one speed() section: figures per system, ratios of
    ragbook to each other."""
    systems = {
        name: {
            new: scale(out[name].get(old)) for old, (new, scale) in SYSTEM_KEYS.items()
        }
        for name in names
    }
    ratios = {}
    for other in names[1:]:
        ratios[f"ragbook/{other}"] = {
            new: (
                None
                if out["ragbook"].get(old) is None or not out[other].get(old)
                else out["ragbook"][old] / out[other][old]
            )
            for old, (new, _) in SYSTEM_KEYS.items()
        }
    return {
        "documents": n_docs,
        "tokens": n_tokens,
        "queries": n_q,
        "build_repeats": repeats,
        "query_repeats": QUERY_REPEATS,
        "bm25s_retrieval_path": bm25s_mode,
        "systems": systems,
        "ratios": ratios,
        "targets": [
            {"target": text, "met": bool(met), "ratio": mine / other if other else None}
            for text, met, mine, other in targets
        ],
        "notes": list(notes),
    }


def part2(doc_tokens, query_tokens, corpus_tokenized, dataset="SciFact"):
    print("=" * 100)
    print(
        f"2. SPEED AND MEMORY on {dataset}, same tokens for all (bm25s default "
        "pipeline, as token strings)"
    )
    print("=" * 100)
    note(f"{dataset}: choosing bm25s's fastest retrieval path")
    retriever = build_bm25s(doc_tokens)
    mode, timings = choose_bm25s_mode(retriever, query_tokens)
    table(
        [
            f"bm25s retrieval path (single worker), {len(query_tokens)} queries, "
            f"best of {CHOICE_REPEATS}",
            "q/s k=10",
            "q/s k=1000",
        ],
        [[m, t[10], t[1000]] for m, t in timings.items()],
        title="bm25s's documented retrieval paths, taking turns; the fastest, "
        f"'{mode}', is used below",
    )
    t_ids = time_calls(
        lambda: bm25s.BM25(k1=K1, b=B, method="lucene", backend="numpy").index(
            corpus_tokenized, show_progress=False
        ),
        BUILD_REPEATS,
    ).best
    del retriever
    out = speed(
        dataset,
        doc_tokens,
        query_tokens,
        mode,
        BUILD_REPEATS,
        (BUILD_REPEATS, RANK_BM25_QUERIES),
    )
    print(
        "  for reference, bm25s indexing its own Tokenized ids (skipping the "
        f"string -> id step): {t_ids:.3f} s "
        f"(ragbook/that = {out['ragbook']['build'] / t_ids:.2f}x)"
    )
    print()
    breakdown = search_breakdown(doc_tokens, query_tokens)
    record = out["record"]
    record["bm25s_paths_queries_per_s"] = {
        m: {"k10": t[10], "k1000": t[1000]} for m, t in timings.items()
    }
    record["bm25s_index_own_ids_build_s"] = t_ids
    record["ragbook_search_breakdown_us_per_query"] = breakdown
    return mode, out


def search_breakdown(doc_tokens, query_tokens):
    """Where BM25.search spends its time: the batch call, one call per query, scoring,
    selecting the top k, and building the list of pairs."""
    model = build_ragbook(doc_tokens)
    rq = ragbook_queries(query_tokens)
    all_scores = [model.scores(q) for q in rq]

    def arrays_only(
        s, k
    ):  # top_k's selection and order, without turning the result into Python pairs
        kth = s[np.argpartition(-s, k - 1)[k - 1]]
        above = np.flatnonzero(s > kth)
        keep = np.concatenate([above, np.flatnonzero(s == kth)[: k - above.size]])
        values = s[keep]
        order = np.lexsort((keep, -values))
        return keep[order], values[order]

    rows, breakdown = [], {}
    per_query = lambda fn: time_calls(fn, BUILD_REPEATS).best / len(rq) * 1e6
    t_scores = per_query(lambda: [model.scores(q) for q in rq])
    for k in (10, 1000):
        t_batch = per_query(lambda: model.search_batch(rq, k))
        t_batch_exhaustive = per_query(lambda: model.search_batch(rq, k, pruning=False))
        t_search = per_query(lambda: [model.search(q, k) for q in rq])
        t_exhaustive = per_query(
            lambda: [model.search(q, k, pruning=False) for q in rq]
        )
        t_top = per_query(lambda: [top_k(s, k) for s in all_scores])
        t_arrays = per_query(lambda: [arrays_only(s, k) for s in all_scores])
        rows.append(
            [
                f"k={k}",
                t_batch,
                t_batch_exhaustive,
                t_search,
                t_exhaustive,
                t_scores,
                t_top,
                t_arrays,
                t_top - t_arrays,
            ]
        )
        breakdown[f"k{k}"] = {
            "search_batch": t_batch,
            "search_batch_exhaustive": t_batch_exhaustive,
            "search": t_search,
            "search_exhaustive": t_exhaustive,
            "scores": t_scores,
            "top_k": t_top,
            "top_k_as_arrays": t_arrays,
            "list_of_pairs": t_top - t_arrays,
        }
    table(
        [
            "ragbook, microseconds per query",
            "search_batch",
            "pruning=False",
            "search",
            "pruning=False",
            "scores()",
            "top_k()",
            "  top-k as arrays",
            "  list of pairs",
        ],
        rows,
        title="Diagnosis: where ragbook's BM25.search spends its time (best of "
        f"{BUILD_REPEATS}); search_batch is every query in one call, search one call "
        "and a list of Hit per query; both choose MaxScore or every posting per "
        "query, pruning=False scores every posting",
    )
    print(
        "  scores() + top_k() = exhaustive search in numpy (what search(pruning="
        "False) did before it was compiled); 'top-k as arrays' = top_k's own "
        "selection and ordering"
    )
    print("  returning numpy arrays (as bm25s does);")
    print(
        "  'list of pairs' = the rest of top_k: arange + copy of the candidates "
        "and the Python list of (int, float)."
    )
    print()
    return breakdown


# --- part 3: synthetic corpora --------------------------------------------------------

VOCABULARY = 200_000
ZIPF_EXPONENT = 1.1
MEAN_LENGTH = 60
N_QUERIES = 1000


def synthetic(n_docs: int, seed: int = 0):
    """Seeded Zipf corpus: token strings "t<rank>", rank r drawn with probability
    proportional to r^-1.1.

    Queries (2 to 6 distinct terms from the same distribution) are drawn first, so that
    every corpus size has the same queries. Document lengths: 1 + Poisson(Gamma(shape 2,
    scale 29.5)), mean 60.
    """
    rng = np.random.default_rng(seed)
    p = np.arange(1, VOCABULARY + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    names = np.array([f"t{i}" for i in range(VOCABULARY)], dtype=object)

    def draw(n):
        return np.minimum(
            np.searchsorted(cdf, rng.random(n), side="right"), VOCABULARY - 1
        )

    q_lengths = rng.integers(2, 7, size=N_QUERIES)
    queries = []
    for length in q_lengths:
        terms = []
        while (
            len(terms) < length
        ):  # distinct terms, so every library does the same work
            terms = distinct(terms + names[draw(length - len(terms))].tolist())
        queries.append(terms)
    lengths = 1 + rng.poisson(rng.gamma(2.0, (MEAN_LENGTH - 1) / 2.0, size=n_docs))
    flat = names[draw(int(lengths.sum()))].tolist()
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    docs = [flat[a:b] for a, b in zip(starts, ends)]
    return docs, queries


def part3(
    sizes, bm25s_mode, scifact_rank_build_per_token, budget=SYNTHETIC_BUDGET_SECONDS
):
    print("=" * 100)
    print(
        "3. SPEED AND MEMORY on synthetic Zipf corpora (ragbook vs bm25s; "
        "rank_bm25 only at 100,000 if it fits)"
    )
    print("=" * 100)
    print(
        f"generator: numpy default_rng(0); vocabulary {VOCABULARY:,} terms "
        f"'t0'..'t{VOCABULARY - 1}', rank r drawn"
    )
    print(
        f"with probability ~ r^-{ZIPF_EXPONENT}; document length 1 + "
        f"Poisson(Gamma(2, {(MEAN_LENGTH - 1) / 2})), mean {MEAN_LENGTH};"
    )
    print(
        f"{N_QUERIES:,} queries of 2-6 distinct terms from the same distribution "
        "(drawn first: the same for every size)."
    )
    limit = (
        f"a size predicted to take more than {budget:.0f} s is reduced"
        if budget > 0
        else "none (--budget 0)"
    )
    print(f"budget: {limit}; above 100,000 documents the")
    print(
        "builds are timed once (best of 1), at 100,000 and below best of 3; "
        f"query passes always best of {QUERY_REPEATS}."
    )
    print()
    prev_size, prev_cost = None, None
    results, notes = {}, []
    for n in sizes:
        if prev_cost is not None:
            # one pass of every measurement scaled linearly, plus 30% (sorts, cache
            # misses: measured 100k -> 400k)
            predicted = prev_cost * (n / prev_size) * 1.3
            if budget > 0 and predicted > budget:
                reduced = int(n * budget / predicted) // 100_000 * 100_000
                message = (
                    f"{n:,} documents predicted to take {predicted:.0f} s > "
                    f"{budget:.0f} s on this machine; "
                    f"reduced to {reduced:,} documents (--budget 0 runs the full size)."
                )
                print("NOTE: " + message)
                notes.append(message)
                n = reduced
                if n <= prev_size:
                    print("NOTE: nothing larger fits; stopping.")
                    notes.append("nothing larger fits; stopped.")
                    break
        t_start = time.perf_counter()
        note(f"synthetic: generating {n:,} documents")
        t0 = time.perf_counter()
        docs, queries = synthetic(n)
        t_gen = time.perf_counter() - t0
        n_tok = sum(map(len, docs))
        print(
            f"synthetic {n:,}: generated {n_tok:,} tokens ({n_tok / n:.1f} per "
            "document, "
            f"{len({t for d in docs[:20000] for t in d}):,} distinct terms in the "
            f"first 20,000 documents) in {t_gen:.1f} s"
        )
        repeats = BUILD_REPEATS if n <= 100_000 else 1
        rank_plan, rank_msg = None, None
        if n <= 100_000:
            predicted_build = scifact_rank_build_per_token * n_tok
            # build, traced build (~2x), 2 x 30 queries: estimated from a 3-query probe
            # after the build
            if 3 * predicted_build < RANK_BM25_BUDGET_SECONDS:
                okapi = build_rank_bm25(docs)
                t0 = time.perf_counter()
                ids = list(range(n))
                for q in queries[:3]:
                    okapi.get_top_n(q, ids, n=10)
                per_query = (time.perf_counter() - t0) / 3
                del okapi
                gc.collect()
                est = 3 * predicted_build + 2 * RANK_BM25_QUERIES * per_query
                if est < RANK_BM25_BUDGET_SECONDS:
                    rank_plan = (1, RANK_BM25_QUERIES)
                else:
                    rank_msg = (
                        f"rank_bm25 skipped at {n:,}: estimated {est:.0f} s > "
                        f"{RANK_BM25_BUDGET_SECONDS:.0f} s"
                    )
            else:
                rank_msg = (
                    f"rank_bm25 skipped at {n:,}: estimated build "
                    f"{predicted_build:.0f} s, too long for "
                    f"{RANK_BM25_BUDGET_SECONDS:.0f} s"
                )
        else:
            rank_msg = f"rank_bm25 not run at {n:,} (only at 100,000)"
        clock = Clock()
        out = speed(
            f"synthetic {n:,}", docs, queries, bm25s_mode, repeats, rank_plan, clock
        )
        record = out["record"]
        if rank_msg:
            print("  " + rank_msg)
            record["notes"].append(rank_msg)
        if rank_plan is not None:
            print(
                f"  rank_bm25 at {n:,}: build and the query subset timed once "
                "(best of 1)."
            )
            record["notes"].append(
                f"rank_bm25 at {n:,}: build and the query subset timed once (best "
                "of 1)."
            )
        total = time.perf_counter() - t_start
        print(f"  section time {total:.0f} s")
        record["generation_s"] = t_gen
        record["section_s"] = total
        record["load_average_end"] = load_average()
        results[n] = record
        print()
        prev_size, prev_cost = n, clock.single_pass + t_gen
        del docs, queries
        gc.collect()
    return {
        "generator": {
            "seed": 0,
            "vocabulary": VOCABULARY,
            "zipf_exponent": ZIPF_EXPONENT,
            "mean_length": MEAN_LENGTH,
            "queries": N_QUERIES,
            "query_terms": (
                "2-6 distinct terms, drawn from the same distribution, the same for "
                "every size"
            ),
        },
        "budget_s": budget,
        "requested_sizes": list(sizes),
        "notes": notes,
        "sizes": {str(n): record for n, record in results.items()},
    }


# --- quick mode -----------------------------------------------------------------------

QUICK_BEIR_DOCUMENTS = 1_500
QUICK_SIZES = [2_000, 4_000]


def quick_settings() -> None:
    """Small data and one repeat everywhere: the whole script in seconds."""
    global QUERY_REPEATS, BUILD_REPEATS, CHOICE_REPEATS, RANK_BM25_QUERIES, N_QUERIES
    QUERY_REPEATS = BUILD_REPEATS = CHOICE_REPEATS = 1
    RANK_BM25_QUERIES, N_QUERIES = 5, 60


def write_quick_beir(folder: str) -> str:
    """A BEIR folder of synthetic documents (seed 1) for --quick, written into
    ``folder``: each query is judged relevant to the first three documents that hold
    its rarest term (or to the first document), so that the measures are defined."""
    docs, queries = synthetic(QUICK_BEIR_DOCUMENTS, seed=1)
    os.makedirs(os.path.join(folder, "qrels"), exist_ok=True)
    with open(os.path.join(folder, "corpus.jsonl"), "w", encoding="utf-8") as out:
        for i, tokens in enumerate(docs):
            text = " ".join(tokens)
            out.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
    with open(os.path.join(folder, "queries.jsonl"), "w", encoding="utf-8") as out:
        for i, terms in enumerate(queries):
            out.write(json.dumps({"_id": f"q{i}", "text": " ".join(terms)}) + "\n")
    with open(os.path.join(folder, "qrels", "test.tsv"), "w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for i, terms in enumerate(queries):
            rarest = max(terms, key=lambda t: int(t[1:]))
            holders = [d for d, tokens in enumerate(docs) if rarest in tokens][:3]
            for d in holders or [0]:
                out.write(f"q{i}\td{d}\t1\n")
    return folder


# --- main -----------------------------------------------------------------------------


DISTRIBUTIONS = (
    "numpy",
    "bm25s",
    "rank-bm25",
    "ir-measures",
    "pytrec-eval-terrier",
    "PyStemmer",
    "scipy",
    "ragbook",
)


def machine() -> None:
    versions = {}
    for dist in DISTRIBUTIONS:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                line.split(":", 1)[1].strip()
                for line in f
                if line.startswith("model name")
            )
    except (OSError, StopIteration):
        pass
    print(f"ragbook sparse benchmark, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC")
    print(
        f"machine: {platform.platform()}; CPU: {cpu}; os.cpu_count() = {os.cpu_count()}"
    )
    print(f"Python {platform.python_version()} ({platform.python_implementation()})")
    print("libraries: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(
        f"BM25 parameters everywhere: k1={K1}, b={B}; timing: time.perf_counter; "
        "single-threaded"
    )
    print(
        f"load average at start (1, 5, 15 min): {load()} (other processes on the "
        "machine inflate the timings)"
    )
    print()


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
        help="every part on small synthetic data, one repeat each, in seconds: a check "
        "that the script runs, not a measurement (writes a results file only with "
        "--output)",
    )
    parser.add_argument(
        "--synthetic",
        type=int,
        nargs="+",
        default=[100_000, 1_000_000],
        metavar="N",
        help="synthetic corpus sizes (default: 100000 1000000)",
    )
    parser.add_argument("--skip-synthetic", action="store_true", help="skip part 3")
    parser.add_argument(
        "--budget",
        type=float,
        default=SYNTHETIC_BUDGET_SECONDS,
        metavar="SECONDS",
        help="reduce a synthetic size predicted to take longer than this (default 180; "
        "0: never)",
    )
    parser.add_argument(
        "--output",
        default=None,
        metavar="PATH",
        help="results file (default: benchmarks/results/sparse.json; none with "
        "--quick)",
    )
    parser.add_argument(
        "--no-output", action="store_true", help="print only; write no results file"
    )
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="TEXT",
        help="a note stored in the results file's run.notes (repeatable), e.g. why "
        "sizes were capped",
    )
    args = parser.parse_args(argv)
    if args.quick == (args.folder is not None):
        parser.error(
            "give a BEIR folder, or --quick (which writes its own synthetic one), "
            "not both"
        )
    if args.quick and args.no_output and args.output:
        parser.error("--output and --no-output contradict each other")
    if args.output is None:
        args.no_output = args.no_output or args.quick
        args.output = os.path.join(RESULTS_DIR, "sparse.json")
    if args.quick:
        quick_settings()
        scratch = tempfile.TemporaryDirectory(prefix="sparse-quick-")
        args.folder = write_quick_beir(os.path.join(scratch.name, "synthetic"))
        if args.synthetic == parser.get_default("synthetic"):
            args.synthetic = QUICK_SIZES
    started = time.perf_counter()
    run = run_info(
        "sparse",
        argv,
        {
            "folder": args.folder,
            "synthetic": args.synthetic,
            "skip_synthetic": args.skip_synthetic,
            "budget_s": args.budget,
            "quick": args.quick,
        },
        DISTRIBUTIONS,
    )
    if args.quick:
        run["notes"].append(
            "--quick: small synthetic data, one repeat each; the timings say nothing "
            "about speed, and the effectiveness figures nothing about retrieval."
        )
    run["notes"] += args.note
    machine()
    doc_tokens, query_tokens, corpus_tokenized, _, effectiveness = part1(args.folder)
    mode, out = part2(
        doc_tokens, query_tokens, corpus_tokenized, effectiveness["dataset"]
    )
    results = {
        "schema_version": 1,
        "quick": args.quick,
        "run": run,
        "parameters": {
            "k1": K1,
            "b": B,
            "measures": [str(m) for m in MEASURES],
            "run_depth": RUN_DEPTH,
            "query_repeats": QUERY_REPEATS,
            "rank_bm25_queries": RANK_BM25_QUERIES,
            "build_repeats": BUILD_REPEATS,
            "synthetic_queries": N_QUERIES,
        },
        "beir": {"effectiveness": effectiveness, "speed": out["record"]},
        "synthetic": None,
    }
    if not args.skip_synthetic:
        per_token = out["rank_bm25"]["build"] / sum(map(len, doc_tokens))
        del doc_tokens, query_tokens, corpus_tokenized
        gc.collect()
        results["synthetic"] = part3(
            sorted(args.synthetic), mode, per_token, args.budget
        )
    run["duration_s"] = round(time.perf_counter() - started, 1)
    run["load_average_end"] = load_average()
    print(
        f"total run time {time.perf_counter() - started:.0f} s; load average at "
        f"the end: {load()}"
    )
    if not args.no_output:
        write_results(args.output, results)


if __name__ == "__main__":
    main()
