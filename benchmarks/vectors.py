"""Vector search benchmark: ragbook's ExactIndex and IVFIndex against NumPy and faiss.

Run from the project root:

    .venv/bin/python benchmarks/vectors.py [--figure PATH] [--quick]
        [--output PATH | --no-output] [--note TEXT]

It prints plain-text tables and its targets (MET / NOT MET), and writes every figure to
a JSON file (default benchmarks/results/vectors.json, structure in benchmarks/README.md;
no bytecode is written); with --figure it also saves one figure at PATH. Timing, turns,
tables, targets and the results file come from harness.py.

1. the machine, and the threads each library may use (faiss is set to as many as NumPy's
   BLAS);
2. two seeded synthetic collections of unit vectors in 64 dimensions ("clustered":
   Gaussian noise around 1,000 random centres; "diffuse": isotropic Gaussian), 100,000
   vectors and 1,000 queries drawn the same way. Ground truth is ragbook's exact top 10;
   a. exact search: ragbook ExactIndex.search_batch (one batch), NumPy's limit (one
      matmul and np.argpartition), faiss IndexFlatIP; time per query and agreement of
      the top-10 lists with faiss;
   b. IVF with 256 lists: ragbook IVFIndex against faiss IndexIVFFlat (inner product),
      both with the same k-means budget (20 iterations on a sample of at most 256
      vectors per list), at 1 to 64 probes: recall@10, time per query for the whole
      batch and for single queries (one call per query), dot products, build time;
      ratios at equal probes and at equal recall (ragbook's time interpolated linearly
      in recall between its measured points); recall at equal probes also as the mean
      over RECALL_SEEDS k-means seeds of each library, which the recall target uses;
3. the LSA vectors (128 dimensions) of the bundled corpus's sentence chunks, queried
   with the labelled questions: exact search and IVF with 16 lists at 1 to 16 probes,
   ragbook against faiss.

Every time is measured several times with the systems taking turns (harness.take_turns);
a figure is the median over the repeats, reported with the fastest repeat and the spread
(slowest / fastest), and a ratio is the ratio of the medians, with the range of the
ratios turn by turn. --quick uses 20,000 synthetic vectors and fewer probes, for a smoke
run.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the project

from harness import (  # noqa: E402  (the benchmarks' shared harness)
    RESULTS_DIR,
    Targets,
    cpu_model,
    cpu_seconds,
    heading,
    load,
    load_average,
    note,
    others_busy,
    run_info,
    table,
    take_turns,
    timed,
    turn_ratios,
    verdict,
    write_results,
)

import argparse  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

import numpy as np  # noqa: E402

import faiss  # noqa: E402

from ragbook.retrieval.ivf import IVFIndex  # noqa: E402
from ragbook.retrieval.vectors import ExactIndex, unit_rows  # noqa: E402

DIMENSIONS = 64
QUERIES = 1_000
K = 10
CENTRES = 1_000
# per-coordinate standard deviation of the noise around a (unit) centre, clustered case
NOISE = 0.1
SEEDS = {"clustered": 1, "diffuse": 2}
LISTS = 256
PROBES = (1, 2, 4, 8, 16, 32, 64)
ITERATIONS = 20  # k-means iterations, both libraries
# k-means trains on at most this many vectors per list, both libraries (faiss's default)
SAMPLE_PER_LIST = 256
LSA_DIMENSIONS = 128
LSA_LISTS = 16
LSA_PROBES = tuple(range(1, 17))
REPEATS = 5
LSA_REPEATS = 20  # the LSA batches take a few milliseconds: more repeats
BUILD_REPEATS = 3
# the single-query timing: every query of the batch, one call each, so that a single
# query's recall is the batch's (the first 100 queries' recall differed from all 1,000's
# by up to 0.03, which the equal-recall comparison then read as a speed difference)
SINGLE_QUERIES = None
SINGLE_REPEATS = 3
EXACT_TARGET = 1.2  # ragbook exact time / faiss flat time
# ragbook IVF time / faiss IVF time at equal recall, batch and single queries
IVF_TARGET = 2.0
BUILD_TARGET = 2.0  # ragbook IVF build / faiss IVF train + add
RECALL_TARGET = 0.02  # |recall ragbook - recall faiss| at equal probes, seed means
# the recall comparison trains both libraries with several k-means seeds (ragbook 0, 1,
# ...; faiss its default 1234, 1235, ...) and compares the mean recalls: one seed's
# local optimum moves recall by a few hundredths either way, in both libraries
RECALL_SEEDS = 5
FAISS_SEED = 1234  # faiss's default k-means seed
# seconds: a call shorter than this gets an untimed call first (see harness.take_turns)
WARM_UP_BELOW = 0.1


def ratio(a: float | None, b: float | None) -> str | None:
    return None if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def spread_text(turns: dict) -> str:
    return f"{turns['min']:.2f}-{turns['max']:.2f}"


def recall_at_k(ids: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |retrieved top k & exact top k| / k (padding ids -1 never
    match)."""
    hits = (ids[:, :, None] == truth[:, None, :]).any(axis=2).sum(axis=1)
    return float(np.mean(hits / truth.shape[1]))


def same_lists(a: np.ndarray, b: np.ndarray) -> float:
    """Share of queries whose two top-k lists are identical, order included."""
    return float(np.mean(np.all(a == b, axis=1)))


def same_sets(a: np.ndarray, b: np.ndarray) -> float:
    """Share of queries whose two top-k lists hold the same ids, in any order."""
    return float(np.mean(np.all(np.sort(a, axis=1) == np.sort(b, axis=1), axis=1)))


def us(seconds_per_query: float) -> float:
    return seconds_per_query * 1e6


# --- the machine and threads ----------------------------------------------------------


def blas_threads() -> tuple[int | None, list[dict]]:
    """NumPy's BLAS thread count and every thread pool threadpoolctl sees."""
    from threadpoolctl import threadpool_info

    info = threadpool_info()
    numpy_blas = [
        p
        for p in info
        if p.get("user_api") == "blas" and "numpy" in p.get("filepath", "")
    ]
    return (numpy_blas[0]["num_threads"] if numpy_blas else None), info


def machine() -> int:
    """Print the machine, set faiss's OpenMP threads to NumPy's BLAS threads; return
    that number."""
    heading("MACHINE")
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    print(f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    print(
        f"machine: {platform.platform()}; CPU: {cpu_model()}; os.cpu_count() = "
        f"{os.cpu_count()}, "
        f"available to this process = {available}"
    )
    print(
        f"load average (1, 5, 15 min): {load()}; other processes compete for the "
        f"CPUs when it exceeds {available}"
    )
    print(
        f"Python {platform.python_version()} "
        f"({platform.python_implementation()}); numpy {np.__version__}; "
        f"faiss {faiss.__version__}"
    )
    numpy_threads, info = blas_threads()
    threads = numpy_threads or available or 1
    faiss.omp_set_num_threads(threads)
    print("thread pools (threadpoolctl):")
    for p in info:
        print(
            f"  {p.get('internal_api')} {p.get('version')} "
            f"({p.get('threading_layer', '-')}), "
            f"{p.get('num_threads')} threads: "
            f"{os.path.basename(p.get('filepath', '?'))}"
        )
    print(
        f"NumPy's BLAS keeps its default ({numpy_threads} threads); faiss set to "
        "the same: "
        f"faiss.omp_set_num_threads({threads}) -> omp_get_max_threads() = "
        f"{faiss.omp_get_max_threads()}"
    )
    import numba

    print(
        "ragbook's IVFIndex.search_batch is one compiled loop (Numba "
        f"{numba.__version__}, {numba.get_num_threads()} threads, "
        f"{numba.config.THREADING_LAYER} threading layer) over the queries, shared "
        "among the threads"
    )
    print(
        "for a batch; faiss parallelises its IVF search over queries with OpenMP "
        "(also shown with 1 thread)."
    )
    print()
    return threads


# --- data -----------------------------------------------------------------------------


def synthetic(
    case: str, n: int, queries: int = QUERIES, d: int = DIMENSIONS
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded unit vectors and queries drawn the same way (float32, C-contiguous, as
    faiss wants)."""
    rng = np.random.default_rng(SEEDS[case])
    if case == "clustered":
        centres = unit_rows(rng.standard_normal((CENTRES, d)), dtype=np.float64)

        def draw(m):
            return centres[rng.integers(CENTRES, size=m)] + NOISE * rng.standard_normal(
                (m, d)
            )
    else:

        def draw(m):
            return rng.standard_normal((m, d))

    x = unit_rows(draw(n))
    q = unit_rows(draw(queries))
    return np.ascontiguousarray(x), np.ascontiguousarray(q)


# --- exact search ---------------------------------------------------------------------


def build_flat(x: np.ndarray):
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    return index


def numpy_top(x: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """NumPy's limit: one matmul, np.argpartition, then the k survivors sorted by score
    (no tie rule)."""
    scores = q @ x.T
    part = np.argpartition(scores, -k, axis=1)[:, -k:]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1)
    return np.take_along_axis(part, order, axis=1)


def exact_part(
    label: str, x: np.ndarray, q: np.ndarray, repeats: int, threads: int
) -> dict:
    """Exact search, three ways (faiss also on one thread). Returns the ground truth,
    the timings and the record."""
    nq = q.shape[0]
    note(f"{label}: exact search")
    build_rb, exact = timed(lambda: ExactIndex(x))
    build_fl, flat = timed(lambda: build_flat(x))

    def flat_one_thread():
        faiss.omp_set_num_threads(1)
        try:
            return flat.search(q, K)[1]
        finally:
            faiss.omp_set_num_threads(threads)

    times = take_turns(
        {
            "ragbook": lambda: exact.search_batch(q, K),
            "numpy": lambda: numpy_top(x, q, K),
            "faiss": lambda: flat.search(q, K)[1],
            "faiss_1_thread": flat_one_thread,
        },
        repeats,
        WARM_UP_BELOW,
    )
    one_thread = times.pop("faiss_1_thread")
    truth = times["ragbook"].result.ids
    ids = {
        "ragbook": truth,
        "numpy": times["numpy"].result,
        "faiss": times["faiss"].result,
    }
    builds = {"ragbook": build_rb, "numpy": None, "faiss": build_fl}
    del flat, exact
    gc.collect()
    turns = turn_ratios(times["ragbook"], times["faiss"])
    # the target compares with faiss's faster setting: its threads, or one thread
    faster = min(times["faiss"].median, one_thread.median)
    r = times["ragbook"].median / faster
    rows = []
    for name, text in (
        ("ragbook", "ragbook ExactIndex.search_batch"),
        ("numpy", "NumPy limit: matmul + argpartition"),
        ("faiss", "faiss IndexFlatIP"),
    ):
        t = times[name]
        rows.append(
            [
                text,
                builds[name],
                us(t.median / nq),
                us(t.best / nq),
                f"{t.spread:.2f}",
                ratio(t.median, times["faiss"].median),
                recall_at_k(ids[name], truth),
                same_lists(ids[name], ids["faiss"]),
                same_sets(ids[name], ids["faiss"]),
            ]
        )
    print(
        f"exact search, {label}: {x.shape[0]:,} vectors, {nq:,} queries in one "
        "batch; time per query = batch "
        f"time / {nq:,}, median and best of {repeats} turns"
    )
    table(
        [
            "exact top 10, " + label,
            "build s",
            "us/query",
            "best",
            "spread",
            "/ faiss",
            "recall@10",
            "same list as faiss",
            "same set",
        ],
        rows,
    )
    diff = np.flatnonzero(~np.all(truth == ids["faiss"], axis=1))
    print("Targets")
    targets = Targets()
    print(
        f"  faiss IndexFlatIP on one thread: {us(one_thread.median / nq):.1f} "
        f"us/query (spread {one_thread.spread:.2f})"
    )
    targets.check(
        f"ragbook exact / faiss flat <= {EXACT_TARGET}x (medians; faiss's faster "
        "setting)",
        r,
        EXACT_TARGET,
        detail=f"against faiss's {threads} threads turn by turn {spread_text(turns)}",
    )
    print(
        "  identical top-10 lists ragbook = faiss: "
        f"{same_lists(truth, ids['faiss']):.1%} ({len(diff)} of {nq} differ)"
    )
    print()
    record = {
        "vectors": x.shape[0],
        "queries": nq,
        "repeats": repeats,
        "systems": {
            name: {
                "build_s": builds[name],
                "us_per_query": us(times[name].median / nq),
                "us_per_query_best": us(times[name].best / nq),
                "spread": times[name].spread,
                "queries_per_s": nq / times[name].median,
                "recall_at_10": recall_at_k(ids[name], truth),
                "same_list_as_faiss": same_lists(ids[name], ids["faiss"]),
                "same_set_as_faiss": same_sets(ids[name], ids["faiss"]),
            }
            for name in times
        },
        "faiss_1_thread_us_per_query": us(one_thread.median / nq),
        "ratios": {
            "ragbook/faiss": times["ragbook"].median / times["faiss"].median,
            "ragbook/faiss_faster": r,
            "ragbook/faiss_turns": turns,
            "numpy/faiss": times["numpy"].median / times["faiss"].median,
            "ragbook/numpy": times["ragbook"].median / times["numpy"].median,
        },
        "lists_differing_from_faiss": len(diff),
        "target": targets.records[0],
    }
    return {
        "truth": truth,
        "ragbook": times["ragbook"].median / nq,
        "numpy": times["numpy"].median / nq,
        "faiss": times["faiss"].median / nq,
        "ratio": r,
        "recall": {name: recall_at_k(ids[name], truth) for name in ids},
        "same_lists": same_lists(truth, ids["faiss"]),
        "record": record,
    }


# --- IVF ------------------------------------------------------------------------------


def faiss_ivf(x: np.ndarray, lists: int, seed: int = FAISS_SEED):
    """faiss IndexIVFFlat with inner product, k-means with ragbook's budget, trained on
    ``x`` then filled with it."""
    quantizer = faiss.IndexFlatIP(x.shape[1])
    index = faiss.IndexIVFFlat(quantizer, x.shape[1], lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.cp.niter = ITERATIONS
    index.cp.max_points_per_centroid = SAMPLE_PER_LIST
    index.train(x)
    index.add(x)
    return index, quantizer


def faiss_list_sizes(index) -> np.ndarray:
    return np.array(
        [index.invlists.list_size(i) for i in range(index.nlist)], dtype=np.int64
    )


def recall_over_seeds(
    x: np.ndarray,
    q: np.ndarray,
    truth: np.ndarray,
    lists: int,
    probes: tuple[int, ...],
) -> dict:
    """Recall@10 at each probe count for RECALL_SEEDS k-means seeds of each library: the
    per-seed figures, their means and the difference of the means."""
    found = {p: {"ragbook": [], "faiss": []} for p in probes}
    for seed in range(RECALL_SEEDS):
        ours = IVFIndex(
            x, lists, ITERATIONS, seed=seed, sample_per_list=SAMPLE_PER_LIST
        )
        theirs, _ = faiss_ivf(x, lists, FAISS_SEED + seed)
        for p in probes:
            theirs.nprobe = p
            found[p]["ragbook"].append(
                recall_at_k(ours.search_batch(q, K, probes=p).ids, truth)
            )
            found[p]["faiss"].append(recall_at_k(theirs.search(q, K)[1], truth))
    out = {}
    for p, by in found.items():
        means = {name: float(np.mean(values)) for name, values in by.items()}
        out[str(p)] = {
            "ragbook_mean": means["ragbook"],
            "faiss_mean": means["faiss"],
            "difference": means["ragbook"] - means["faiss"],
            "ragbook_per_seed": by["ragbook"],
            "faiss_per_seed": by["faiss"],
        }
    return out


def interpolate_time(
    recall: float, points: list[tuple[float, float]]
) -> tuple[float | None, str]:
    """ragbook's time at ``recall``, linear in recall between its measured (recall,
    time) points.

    Returns (time, how): "interp" inside the measured range; below it, ragbook's fastest
    point already exceeds that recall, so its time is an upper bound ("<="); above it,
    None ("not reached").
    """
    points = sorted(points)
    recalls = np.array([p[0] for p in points])
    times = np.array([p[1] for p in points])
    if recall < recalls[0]:
        return float(times[0]), "<="
    if recall > recalls[-1]:
        return None, "not reached"
    # equal recalls at several probes: keep the fastest time for each recall
    unique = np.unique(recalls)
    fastest = np.array([times[recalls == r].min() for r in unique])
    if unique.size == 1:
        return float(fastest[0]), "interp"
    return float(np.interp(recall, unique, fastest)), "interp"


def equal_recall(probes, rb_points, f_points) -> tuple[list, dict, float | None]:
    """ragbook's time over faiss's at faiss's recall, for every probe count; the worst
    ratio over the points where it is defined (interpolated, or an upper bound where
    ragbook's fewest probes already recall more)."""
    rows, out, ratios = [], {}, []
    for p, (r_f, t_f) in zip(probes, f_points):
        t_rb, how = interpolate_time(r_f, rb_points)
        value = None if t_rb is None else t_rb / t_f
        if value is not None:
            ratios.append(value)
        rows.append(
            [
                p,
                r_f,
                us(t_f),
                None if t_rb is None else us(t_rb),
                how,
                None
                if value is None
                else ("<= " if how == "<=" else "") + f"{value:.2f}x",
            ]
        )
        out[str(p)] = {
            "faiss_recall_at_10": r_f,
            "faiss_us_per_query": us(t_f),
            "ragbook_us_per_query": None if t_rb is None else us(t_rb),
            "how": how,
            "ratio": value,
        }
    return (
        rows,
        out,
        (max(ratios) if ratios else None),
        (min(ratios) if ratios else None),
    )


def ivf_part(
    label: str,
    x: np.ndarray,
    q: np.ndarray,
    truth: np.ndarray,
    lists: int,
    probes: tuple[int, ...],
    threads: int,
    repeats: int,
) -> dict:
    nq, n = q.shape[0], x.shape[0]
    note(f"{label}: IVF builds, ragbook and faiss taking turns")
    builds = take_turns(
        {
            "ragbook": lambda: IVFIndex(
                x, lists, ITERATIONS, seed=0, sample_per_list=SAMPLE_PER_LIST
            ),
            "faiss": lambda: faiss_ivf(x, lists),
        },
        BUILD_REPEATS,
    )
    ivf, (fivf, quantizer) = builds["ragbook"].result, builds["faiss"].result
    build_ratio = builds["ragbook"].median / builds["faiss"].median
    build_turns = turn_ratios(builds["ragbook"], builds["faiss"])
    sizes_rb, sizes_f = ivf.list_sizes, faiss_list_sizes(fivf)
    sample = min(n, SAMPLE_PER_LIST * lists)
    print(
        f"IVF, {label}: {n:,} vectors, {lists} lists, {nq:,} queries; k-means for "
        f"both: {ITERATIONS} iterations "
        f"on {sample:,} sampled vectors ({SAMPLE_PER_LIST} per list at most), "
        "then every vector to its nearest centroid"
    )
    table(
        [
            "index",
            "build s (median)",
            "best",
            "spread",
            "lists empty",
            "largest list",
            "N/L",
            "sum of squared sizes / N",
        ],
        [
            [
                "ragbook IVFIndex",
                builds["ragbook"].median,
                builds["ragbook"].best,
                f"{builds['ragbook'].spread:.2f}",
                int(np.sum(sizes_rb == 0)),
                int(sizes_rb.max()),
                n / lists,
                float(np.sum(sizes_rb.astype(float) ** 2) / n),
            ],
            [
                "faiss IndexIVFFlat (train + add)",
                builds["faiss"].median,
                builds["faiss"].best,
                f"{builds['faiss'].spread:.2f}",
                int(np.sum(sizes_f == 0)),
                int(sizes_f.max()),
                n / lists,
                float(np.sum(sizes_f.astype(float) ** 2) / n),
            ],
        ],
        title=f"build, {BUILD_REPEATS} turns each; spherical={bool(fivf.cp.spherical)} "
        "for faiss",
    )
    single = q[:SINGLE_QUERIES]
    per_probe, rows, rb_points, f_points, rb_single, f_single = {}, [], [], [], [], []
    for p in probes:
        note(f"{label}: probes {p}")
        fivf.nprobe = p

        def faiss_one_thread():
            faiss.omp_set_num_threads(1)
            try:
                return fivf.search(q, K)[1]
            finally:
                faiss.omp_set_num_threads(threads)

        batch = take_turns(
            {
                "ragbook": lambda: ivf.search_batch(q, K, probes=p),
                "faiss": lambda: fivf.search(q, K)[1],
                "faiss_1_thread": faiss_one_thread,
            },
            repeats,
            WARM_UP_BELOW,
        )

        def faiss_single(n_threads):
            faiss.omp_set_num_threads(n_threads)
            try:
                return np.concatenate([fivf.search(v[None, :], K)[1] for v in single])
            finally:
                faiss.omp_set_num_threads(threads)

        one = take_turns(
            {
                "ragbook": lambda: np.concatenate(
                    [ivf.search_batch(v, K, probes=p).ids for v in single]
                ),
                "faiss": lambda: faiss_single(threads),
                "faiss_1_thread": lambda: faiss_single(1),
            },
            SINGLE_REPEATS,
        )
        res = batch["ragbook"].result
        _, probed = quantizer.search(q, p)
        dots_f = lists + float(np.mean(sizes_f[probed].sum(axis=1)))
        r_rb, r_f = (
            recall_at_k(res.ids, truth),
            recall_at_k(batch["faiss"].result, truth),
        )
        s_rb = recall_at_k(one["ragbook"].result, truth[: len(single)])
        s_f = recall_at_k(one["faiss"].result, truth[: len(single)])
        t_rb, t_f, t_f1 = (
            batch[name].median / nq for name in ("ragbook", "faiss", "faiss_1_thread")
        )
        o_rb, o_f, o_f1 = (
            one[name].median / len(single)
            for name in ("ragbook", "faiss", "faiss_1_thread")
        )
        turns = turn_ratios(batch["ragbook"], batch["faiss"])
        one_turns = turn_ratios(one["ragbook"], one["faiss"])
        # the targets compare with faiss's faster setting at each point: its threads, or
        # one thread
        rb_points.append((r_rb, t_rb))
        f_points.append((r_f, min(t_f, t_f1)))
        rb_single.append((s_rb, o_rb))
        f_single.append((s_f, min(o_f, o_f1)))
        rows.append(
            [
                p,
                r_rb,
                r_f,
                r_rb - r_f,
                us(t_rb),
                f"{batch['ragbook'].spread:.2f}",
                us(t_f),
                f"{batch['faiss'].spread:.2f}",
                ratio(t_rb, t_f),
                spread_text(turns),
                ratio(t_rb, t_f1),
                us(o_rb),
                us(o_f),
                us(o_f1),
                ratio(o_rb, min(o_f, o_f1)),
                float(np.mean(res.dot_products)),
                dots_f,
            ]
        )
        per_probe[str(p)] = {
            "ragbook": {
                "recall_at_10": r_rb,
                "us_per_query": us(t_rb),
                "us_per_query_best": us(batch["ragbook"].best / nq),
                "spread": batch["ragbook"].spread,
                "dot_products_per_query": float(np.mean(res.dot_products)),
                "single_query_us": us(o_rb),
                "single_query_spread": one["ragbook"].spread,
                "single_query_recall_at_10": s_rb,
            },
            "faiss": {
                "recall_at_10": r_f,
                "us_per_query": us(t_f),
                "us_per_query_best": us(batch["faiss"].best / nq),
                "spread": batch["faiss"].spread,
                "us_per_query_1_thread": us(t_f1),
                "dot_products_per_query": dots_f,
                "single_query_us": us(o_f),
                "single_query_us_1_thread": us(o_f1),
                "single_query_spread": one["faiss"].spread,
                "single_query_recall_at_10": s_f,
            },
            "recall_difference": r_rb - r_f,
            "ratios": {
                "ragbook/faiss": t_rb / t_f,
                "ragbook/faiss_turns": turns,
                "ragbook/faiss_1_thread": t_rb / t_f1,
                "ragbook/faiss_faster": t_rb / min(t_f, t_f1),
                "single_query_ragbook/faiss": o_rb / o_f,
                "single_query_ragbook/faiss_1_thread": o_rb / o_f1,
                "single_query_ragbook/faiss_faster": o_rb / min(o_f, o_f1),
                "single_query_ragbook/faiss_turns": one_turns,
            },
        }
    table(
        [
            "probes",
            "recall rb",
            "recall faiss",
            "rb - faiss",
            "us/q rb",
            "spread",
            "us/q faiss",
            "spread",
            "rb / faiss",
            "turns",
            "rb / faiss 1 thr",
            "single rb us",
            "single faiss us",
            "single faiss 1 thr",
            "single rb / faster faiss",
            "dots rb",
            "dots faiss",
        ],
        rows,
        title="recall@10 against exact search; batch time per query (median of "
        f"{repeats} turns; spread = slowest / "
        "fastest turn; turns = range of the turn-by-turn ratio), faiss with "
        f"{threads} threads and with 1; "
        f"single queries: {len(single)} calls of one query, median of "
        f"{SINGLE_REPEATS} turns; mean dot products "
        f"per query (faiss: {lists} + sizes of the probed lists)",
    )
    eq_rows, equal, worst, best = equal_recall(probes, rb_points, f_points)
    table(
        [
            "faiss probes",
            "faiss recall",
            "us/q faiss (faster setting)",
            "us/q rb at that recall",
            "how",
            "rb / faiss",
        ],
        eq_rows,
        title=(
            "batch time at equal recall, against faiss's faster setting at each point "
            "(its threads or one thread): ragbook's time interpolated linearly in "
            'recall between its measured points ("<=": ragbook\'s 1 probe already '
            "has a higher recall, its time is an upper bound)"
        ),
    )
    one_rows, one_equal, one_worst, one_best = equal_recall(probes, rb_single, f_single)
    table(
        [
            "faiss probes",
            "faiss recall",
            "us faiss (faster setting)",
            "us rb at that recall",
            "how",
            "rb / faiss",
        ],
        one_rows,
        title=(
            f"single-query time at equal recall (all {len(single)} queries, "
            "one call each), against faiss's faster setting"
        ),
    )
    not_reached = [p for p in probes if equal[str(p)]["how"] == "not reached"]
    worst_diff = max((row[3] for row in rows), key=abs)
    note(f"{label}: recall over {RECALL_SEEDS} k-means seeds")
    seeds = recall_over_seeds(x, q, truth, lists, probes)
    table(
        ["probes", "recall rb", "recall faiss", "rb - faiss", "rb per seed", "faiss"],
        [
            [
                p,
                v["ragbook_mean"],
                v["faiss_mean"],
                v["difference"],
                f"{min(v['ragbook_per_seed']):.3f}-{max(v['ragbook_per_seed']):.3f}",
                f"{min(v['faiss_per_seed']):.3f}-{max(v['faiss_per_seed']):.3f}",
            ]
            for p, v in ((p, seeds[str(p)]) for p in probes)
        ],
        title=f"recall@10, mean over {RECALL_SEEDS} k-means seeds of each library "
        f"(ragbook 0-{RECALL_SEEDS - 1}, faiss {FAISS_SEED}-"
        f"{FAISS_SEED + RECALL_SEEDS - 1}), and the range over the seeds",
    )
    seed_diff = max((v["difference"] for v in seeds.values()), key=abs)
    print("Targets")
    targets = Targets()
    targets.check(
        f"ragbook / faiss batch time at equal recall <= {IVF_TARGET}x (worst; "
        "faiss's faster setting)",
        worst,
        IVF_TARGET,
        detail=f"best {best:.2f}x; {len(not_reached)} faiss points above ragbook's "
        "highest recall"
        if best
        else "",
    )
    targets.check(
        f"ragbook / faiss single-query time at equal recall <= {IVF_TARGET}x "
        "(worst; faiss's faster setting)",
        one_worst,
        IVF_TARGET,
        detail=f"best {one_best:.2f}x" if one_best else "",
    )
    targets.check(
        f"ragbook / faiss build time <= {BUILD_TARGET}x (medians)",
        build_ratio,
        BUILD_TARGET,
        detail=f"ragbook {builds['ragbook'].median:.2f} s, faiss "
        f"{builds['faiss'].median:.2f} s; turn by turn "
        f"{spread_text(build_turns)}",
    )
    targets.check(
        f"|recall ragbook - faiss| at equal probes <= {RECALL_TARGET} (worst; means "
        f"over {RECALL_SEEDS} k-means seeds)",
        seed_diff,
        RECALL_TARGET,
        unit="",
        absolute=True,
        detail=f"with the timed indexes (one seed each) {worst_diff:+.4f}",
    )
    print()
    record = {
        "vectors": n,
        "lists": lists,
        "queries": nq,
        "repeats": repeats,
        "faiss_threads": threads,
        "kmeans": {
            "iterations": ITERATIONS,
            "sample_per_list": SAMPLE_PER_LIST,
            "sample": sample,
        },
        "single_queries": len(single),
        "single_repeats": SINGLE_REPEATS,
        "build": {
            "ragbook": {
                "build_s": builds["ragbook"].median,
                **builds["ragbook"].record(),
                "empty_lists": int(np.sum(sizes_rb == 0)),
                "largest_list": int(sizes_rb.max()),
                "sum_squared_sizes_over_n": float(
                    np.sum(sizes_rb.astype(float) ** 2) / n
                ),
            },
            "faiss": {
                "build_s": builds["faiss"].median,
                **builds["faiss"].record(),
                "empty_lists": int(np.sum(sizes_f == 0)),
                "largest_list": int(sizes_f.max()),
                "sum_squared_sizes_over_n": float(
                    np.sum(sizes_f.astype(float) ** 2) / n
                ),
                "kmeans_iterations": int(fivf.cp.niter),
                "kmeans_sample": int(fivf.cp.max_points_per_centroid * lists),
            },
            "ratio_ragbook/faiss": build_ratio,
            "ratio_turns": build_turns,
        },
        "probes": per_probe,
        "equal_recall": equal,
        "recall_over_seeds": seeds,
        "single_query_equal_recall": one_equal,
        "summary": {
            "equal_recall_ratio_worst": worst,
            "equal_recall_ratio_best": best,
            "single_query_equal_recall_ratio_worst": one_worst,
            "single_query_equal_recall_ratio_best": one_best,
            "build_ratio": build_ratio,
            "recall_difference_worst": worst_diff,
            "recall_difference_seed_means_worst": seed_diff,
            "faiss_points_not_reached": not_reached,
        },
        "targets": targets.records,
    }
    return {
        "ragbook": rb_points,
        "faiss": f_points,
        "probes": probes,
        "eq_worst": worst,
        "single_worst": one_worst,
        "diff_worst": seed_diff,
        "build_ratio": build_ratio,
        "all_met": targets.all_met,
        "record": record,
    }


# --- the LSA case ---------------------------------------------------------------------


def lsa_part(threads: int, probes: tuple[int, ...]) -> dict:
    from ragbook.indexing.chunking import sentence_chunks
    from ragbook.corpus.documents import load_corpus
    from ragbook.corpus.labels import load_questions
    from ragbook.retrieval.lsa import LSA

    heading(
        f"3. LSA VECTORS OF THE CORPUS ({LSA_DIMENSIONS} dimensions), the "
        "labelled questions as queries"
    )
    note("LSA: fitting")
    documents = load_corpus()
    chunks = sentence_chunks(documents, 100)
    texts = [c.indexed_text for c in chunks]
    fit, lsa = timed(lambda: LSA(texts, LSA_DIMENSIONS))
    x = np.ascontiguousarray(lsa.encode(texts))
    questions = [question.text for question in load_questions(documents)]
    q = np.ascontiguousarray(lsa.encode(questions))
    print(
        f"{len(chunks)} sentence chunks (<= 100 words), {len(questions)} "
        f"questions; LSA fitted in {fit:.1f} s"
    )
    info = {
        "description": (
            "LSA vectors of sentence_chunks(load_corpus(), 100); the labelled "
            "questions as queries"
        ),
        "dimensions": LSA_DIMENSIONS,
        "vectors": len(chunks),
        "queries": len(questions),
        "lsa_fit_s": fit,
    }
    print(
        f"a batch of {len(questions)} queries takes milliseconds here, so every "
        f"batch is timed {LSA_REPEATS} times"
    )
    print()
    exact = exact_part("LSA", x, q, LSA_REPEATS, threads)
    ivf = ivf_part("LSA", x, q, exact["truth"], LSA_LISTS, probes, threads, LSA_REPEATS)
    return {"exact": exact, "ivf": ivf, "info": info, "n": len(chunks)}


# --- figure ---------------------------------------------------------------------------


def figure(path: str, results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.5))
    for ax, (case, res) in zip(np.atleast_1d(axes), results.items()):
        ivf, exact = res["ivf"], res["exact"]
        for name, colour, marker in (("ragbook", "C0", "o"), ("faiss", "C1", "s")):
            r = [p[0] for p in ivf[name]]
            t = [us(p[1]) for p in ivf[name]]
            ax.plot(
                t, r, marker=marker, color=colour, label=f"{name} IVF, {LISTS} lists"
            )
            for probes, ti, ri in zip(ivf["probes"], t, r):
                ax.annotate(
                    str(probes),
                    (ti, ri),
                    textcoords="offset points",
                    xytext=(4, -10),
                    fontsize=7,
                    color=colour,
                )
        for name, label, colour, marker in (
            ("ragbook", "ragbook exact", "C0", "*"),
            ("numpy", "NumPy matmul + argpartition", "C2", "D"),
            ("faiss", "faiss IndexFlatIP", "C1", "*"),
        ):
            ax.plot(
                [us(exact[name])],
                [exact["recall"][name]],
                linestyle="none",
                marker=marker,
                markersize=11,
                color=colour,
                markeredgecolor="black",
                label=label,
            )
        ax.set_xscale("log")
        ax.set_xlabel("time per query (microseconds, log scale)")
        ax.set_title(f"{case}: {res['n']:,} unit vectors, d = {DIMENSIONS}")
        ax.grid(True, which="both", alpha=0.3)
    for ax in np.atleast_1d(axes):
        ax.set_ylabel("recall@10 against exact search")
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Vector search: recall against time (labels: probes)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"figure written to {path}")


# --- main -----------------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--figure",
        metavar="PATH",
        help="save recall against time to PATH (default: no figure)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="20,000 vectors and fewer probes: a smoke run",
    )
    parser.add_argument(
        "--output",
        default=os.path.join(RESULTS_DIR, "vectors.json"),
        metavar="PATH",
        help="results file (default: benchmarks/results/vectors.json)",
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
    run = run_info(
        "vectors",
        argv,
        {"figure": args.figure, "quick": args.quick},
        ("numpy", "numba", "faiss-cpu", "threadpoolctl", "ragbook"),
    )
    run["notes"] += args.note
    started, cpu_start = time.perf_counter(), cpu_seconds()
    n = 20_000 if args.quick else 100_000
    probes = (1, 4, 16) if args.quick else PROBES
    lsa_probes = (1, 4, 16) if args.quick else LSA_PROBES
    threads = machine()
    results = {}
    for number, case in enumerate(("clustered", "diffuse")):
        description = (
            f"{CENTRES:,} random unit centres + N(0, {NOISE}^2) noise per coordinate"
            if case == "clustered"
            else "isotropic Gaussian"
        )
        heading(
            f"2{'ab'[number]}. SYNTHETIC, {case.upper()}: {n:,} unit vectors in "
            f"{DIMENSIONS} dimensions "
            f"({description}), {QUERIES:,} queries, seed {SEEDS[case]}"
        )
        x, q = synthetic(case, n)
        exact = exact_part(case, x, q, REPEATS, threads)
        ivf = ivf_part(case, x, q, exact["truth"], LISTS, probes, threads, REPEATS)
        results[case] = {
            "exact": exact,
            "ivf": ivf,
            "n": n,
            "info": {
                "description": description,
                "seed": SEEDS[case],
                "dimensions": DIMENSIONS,
                "vectors": n,
                "queries": QUERIES,
            },
        }
        del x, q
        gc.collect()
    lsa = lsa_part(threads, lsa_probes)

    heading("SUMMARY OF TARGETS")
    rows = []
    for case, res in list(results.items()) + [("LSA", lsa)]:
        e, i = res["exact"], res["ivf"]
        show = lambda value, limit: (
            "-" if value is None else f"{value:.2f}x {verdict(value <= limit)}"
        )
        rows.append(
            [
                case,
                show(e["ratio"], EXACT_TARGET),
                f"{e['same_lists']:.1%}",
                show(i["eq_worst"], IVF_TARGET),
                show(i["single_worst"], IVF_TARGET),
                show(i["build_ratio"], BUILD_TARGET),
                f"{i['diff_worst']:+.4f} "
                f"{verdict(abs(i['diff_worst']) <= RECALL_TARGET)}",
            ]
        )
    table(
        [
            "case",
            f"exact rb/faiss <= {EXACT_TARGET}x",
            "same top-10 lists",
            f"IVF batch at equal recall <= {IVF_TARGET}x (worst)",
            f"IVF single query <= {IVF_TARGET}x (worst)",
            f"IVF build <= {BUILD_TARGET}x",
            f"IVF recall diff <= {RECALL_TARGET} (worst, seed means)",
        ],
        rows,
    )
    if args.figure:
        figure(args.figure, results)
    wall = time.perf_counter() - started
    busy = others_busy(cpu_start, wall)
    print(
        f"load average at the end (1, 5, 15 min): {load()}; other processes kept "
        f"{'unknown' if busy is None else f'{busy:.2f}'} CPUs busy on average "
        f"during the run (of {os.cpu_count()})"
    )
    print(f"total run time {wall:.0f} s")
    if args.no_output:
        return
    run["duration_s"] = round(wall, 1)
    run["load_average_end"] = load_average()
    run["others_busy_cpus"] = busy
    run["numpy_blas_threads"] = blas_threads()[0]
    run["faiss_threads"] = threads
    cases = {
        case: {
            **res["info"],
            "exact": res["exact"]["record"],
            "ivf": res["ivf"]["record"],
        }
        for case, res in list(results.items()) + [("lsa", lsa)]
    }
    write_results(
        args.output,
        {
            "schema_version": 1,
            "run": run,
            "parameters": {
                "k": K,
                "dimensions": DIMENSIONS,
                "queries": QUERIES,
                "centres": CENTRES,
                "noise": NOISE,
                "lists": LISTS,
                "probes": list(probes),
                "kmeans_iterations": ITERATIONS,
                "kmeans_sample_per_list": SAMPLE_PER_LIST,
                "lsa_dimensions": LSA_DIMENSIONS,
                "lsa_lists": LSA_LISTS,
                "lsa_probes": list(lsa_probes),
                "repeats": REPEATS,
                "lsa_repeats": LSA_REPEATS,
                "build_repeats": BUILD_REPEATS,
                "recall_seeds": RECALL_SEEDS,
                "faiss_kmeans_seed": FAISS_SEED,
                "single_queries": "all" if SINGLE_QUERIES is None else SINGLE_QUERIES,
                "single_repeats": SINGLE_REPEATS,
                "targets": {
                    "exact_ratio": EXACT_TARGET,
                    "ivf_ratio": IVF_TARGET,
                    "build_ratio": BUILD_TARGET,
                    "recall_difference": RECALL_TARGET,
                },
            },
            "cases": cases,
        },
    )


if __name__ == "__main__":
    main()
