"""Vector search benchmark: ragbook's ExactIndex and IVFIndex against NumPy and faiss.

Run from the project root:

    .venv/bin/python benchmarks/vectors.py [--figure PATH] [--quick] [--output PATH | --no-output] [--note TEXT]

It prints plain-text tables and writes every figure to a JSON file (default benchmarks/results/vectors.json,
structure in benchmarks/README.md; no bytecode is written); with --figure it also saves one figure at PATH:

1. the machine, and the threads each library may use (faiss is set to as many as NumPy's BLAS);
2. two seeded synthetic collections of unit vectors in 64 dimensions ("clustered": Gaussian noise around
   1,000 random centres; "diffuse": isotropic Gaussian), 100,000 vectors and 1,000 queries drawn the same
   way. Ground truth is ragbook's exact top 10;
   a. exact search: ragbook ExactIndex.search (one batch), NumPy's limit (one matmul and np.argpartition),
      faiss IndexFlatIP; time per query (best of 3) and agreement of the top-10 lists with faiss;
   b. IVF with 256 lists: ragbook IVFIndex (spherical k-means, seed 0) against faiss IndexIVFFlat (inner
      product, trained on the same vectors) at 1 to 64 probes: recall@10, time per query, dot products,
      build time; ratios at equal probes and at equal recall (ragbook's time interpolated linearly in
      recall between its measured points);
3. the LSA vectors (128 dimensions) of the bundled corpus's sentence chunks, queried with the labelled
   questions: exact search and IVF with 16 lists at 1 to 16 probes, ragbook against faiss.

--quick uses 20,000 synthetic vectors and fewer probes, for a smoke run.
"""
from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # no __pycache__ in the project

from report import (  # noqa: E402  (the benchmarks' shared helpers)
    RESULTS_DIR, load, load_average, note, run_info, table, verdict, write_results)

import argparse
import gc
import os
import platform
import time
from datetime import datetime, timezone

import numpy as np

import faiss

from ragbook.vectors import ExactIndex, IVFIndex, unit_rows

DIMENSIONS = 64
QUERIES = 1_000
K = 10
CENTRES = 1_000
NOISE = 0.1  # per-coordinate standard deviation of the noise around a (unit) centre, clustered case
SEEDS = {"clustered": 1, "diffuse": 2}
LISTS = 256
PROBES = (1, 2, 4, 8, 16, 32, 64)
LSA_DIMENSIONS = 128
LSA_LISTS = 16
LSA_PROBES = tuple(range(1, 17))
REPEATS = 3
LSA_REPEATS = 20  # the LSA batches take a few milliseconds: more repeats steady the best time
EXACT_TARGET = 1.5  # ragbook exact time / faiss flat time
IVF_TARGET = 3.0  # ragbook IVF time / faiss IVF time at equal recall
RECALL_TARGET = 0.02  # |recall ragbook - recall faiss| at equal probes


# --- printing ----------------------------------------------------------------------------------------






def ratio(a: float | None, b: float | None) -> str | None:
    return None if a is None or b is None or b == 0 else f"{a / b:.2f}x"






def heading(text: str) -> None:
    print("=" * 100)
    print(text)
    print("=" * 100)


# --- measuring ---------------------------------------------------------------------------------------


WARM_UP_BELOW = 0.1  # seconds: a call shorter than this is preceded by an untimed call of the same method


def best_times(fns: list, repeats: int | None = None) -> list[tuple[float, object]]:
    """Best wall time of each of ``fns`` over ``repeats`` rounds, with each one's last result.

    The methods take turns (a, b, c, a, b, c, ...) so that a change of load on the machine affects them alike.
    A short call is preceded by an untimed call of the same method: NumPy's OpenBLAS (pthreads) and faiss's
    OpenMP pools compete for the cores, and a library called right after the other one pays to get its threads
    going again; on a batch of a few milliseconds that cost was up to 10 times the search itself.
    """
    best = [float("inf")] * len(fns)
    results: list[object] = [None] * len(fns)
    for _ in range(repeats or REPEATS):
        for i, fn in enumerate(fns):
            results[i] = None
            gc.collect()
            if best[i] < WARM_UP_BELOW or best[i] == float("inf"):
                fn()
            start = time.perf_counter()
            results[i] = fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return list(zip(best, results))


def timed(fn) -> tuple[float, object]:
    """Wall time of one call of ``fn`` and its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def recall_at_k(ids: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |retrieved top k & exact top k| / k (padding ids -1 never match)."""
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


# --- the machine and threads -------------------------------------------------------------------------


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def blas_threads() -> tuple[int | None, list[dict]]:
    """NumPy's BLAS thread count and every thread pool threadpoolctl sees (None, [] without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None, []
    info = threadpool_info()
    numpy_blas = [p for p in info if p.get("user_api") == "blas" and "numpy" in p.get("filepath", "")]
    return (numpy_blas[0]["num_threads"] if numpy_blas else None), info




def cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds all processes have been busy, CPU seconds of this process) from /proc/stat; None elsewhere."""
    try:
        with open("/proc/stat", encoding="utf-8") as handle:
            fields = [float(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)  # all but idle and iowait
    mine = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), mine.user + mine.system


def others_busy(start: tuple[float, float] | None, wall: float) -> str:
    """How many CPUs other processes kept busy, on average, since ``start``."""
    end = cpu_seconds()
    if start is None or end is None or wall <= 0:
        return "unknown (no /proc/stat)"
    others = (end[0] - start[0]) - (end[1] - start[1])
    return f"{max(others, 0.0) / wall:.2f} CPUs on average"


def machine() -> int:
    """Print the machine, set faiss's OpenMP threads to NumPy's BLAS threads; return that number."""
    heading("MACHINE")
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    print(f"date: {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}")
    print(f"machine: {platform.platform()}; CPU: {cpu_name()}; os.cpu_count() = {os.cpu_count()}, "
          f"available to this process = {available}")
    print(f"load average (1, 5, 15 min): {load()}; other processes compete for the CPUs when it exceeds {available}")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}); numpy {np.__version__}; "
          f"faiss {faiss.__version__}")
    numpy_threads, info = blas_threads()
    threads = numpy_threads or available or 1
    faiss.omp_set_num_threads(threads)
    if info:
        print("thread pools (threadpoolctl):")
        for p in info:
            print(f"  {p.get('internal_api')} {p.get('version')} ({p.get('threading_layer', '-')}), "
                  f"{p.get('num_threads')} threads: {os.path.basename(p.get('filepath', '?'))}")
        print(f"NumPy's BLAS keeps its default ({numpy_threads} threads); faiss set to the same: "
              f"faiss.omp_set_num_threads({threads}) -> omp_get_max_threads() = {faiss.omp_get_max_threads()}")
    else:
        print("threadpoolctl is not installed: NumPy's BLAS thread count is unknown (its default, usually one per "
              f"core); faiss set to the available CPUs: omp_set_num_threads({threads})")
    print("ragbook's IVFIndex.search is a Python loop over queries (one matrix-vector product per probed list),")
    print("so it gains little from BLAS threads; faiss parallelises its IVF search over queries with OpenMP.")
    print()
    return threads


# --- data ----------------------------------------------------------------------------------------------


def synthetic(case: str, n: int, queries: int = QUERIES, d: int = DIMENSIONS) -> tuple[np.ndarray, np.ndarray]:
    """Seeded unit vectors and queries drawn the same way (float32, C-contiguous, as faiss wants)."""
    rng = np.random.default_rng(SEEDS[case])
    if case == "clustered":
        centres = unit_rows(rng.standard_normal((CENTRES, d)), dtype=np.float64)

        def draw(m):
            return centres[rng.integers(CENTRES, size=m)] + NOISE * rng.standard_normal((m, d))
    else:
        def draw(m):
            return rng.standard_normal((m, d))
    x = unit_rows(draw(n))
    q = unit_rows(draw(queries))
    return np.ascontiguousarray(x), np.ascontiguousarray(q)


# --- exact search ----------------------------------------------------------------------------------------


def build_flat(x: np.ndarray):
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    return index


def numpy_top(x: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """NumPy's limit: one matmul, np.argpartition, then the k survivors sorted by score (no tie rule)."""
    scores = q @ x.T
    part = np.argpartition(scores, -k, axis=1)[:, -k:]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1)
    return np.take_along_axis(part, order, axis=1)


def exact_part(label: str, x: np.ndarray, q: np.ndarray) -> dict:
    """Exact search, three ways. Returns the ground truth and the timings."""
    nq = q.shape[0]
    note(f"{label}: exact search")
    build_rb, exact = timed(lambda: ExactIndex(x))
    build_fl, flat = timed(lambda: build_flat(x))
    (t_rb, res), (t_np, ids_np), (t_fl, (_, ids_fl)) = best_times(
        [lambda: exact.search(q, K), lambda: numpy_top(x, q, K), lambda: flat.search(q, K)])
    truth = res.ids
    del flat, exact
    gc.collect()
    out = {
        "truth": truth,
        "ragbook": t_rb / nq, "numpy": t_np / nq, "faiss": t_fl / nq,
        "recall": {"ragbook": 1.0, "numpy": recall_at_k(ids_np, truth), "faiss": recall_at_k(ids_fl, truth)},
    }
    rows = [
        ["ragbook ExactIndex.search (batch)", build_rb, us(out["ragbook"]), 1 / out["ragbook"],
         ratio(out["ragbook"], out["faiss"]), 1.0, same_lists(truth, ids_fl), same_sets(truth, ids_fl)],
        ["NumPy limit: matmul + argpartition", None, us(out["numpy"]), 1 / out["numpy"],
         ratio(out["numpy"], out["faiss"]), out["recall"]["numpy"], same_lists(ids_np, ids_fl), same_sets(ids_np, ids_fl)],
        ["faiss IndexFlatIP", build_fl, us(out["faiss"]), 1 / out["faiss"], "1.00x", out["recall"]["faiss"], 1.0, 1.0],
    ]
    print(f"exact search, {label}: {x.shape[0]:,} vectors, {nq:,} queries in one batch, time per query = best of "
          f"{REPEATS} batch times / {nq:,} (the methods take turns; see best_times)")
    table(["exact top 10, " + label, "build s", "us/query", "queries/s", "/ faiss", "recall@10",
           "same list as faiss", "same set"], rows)
    diff = np.flatnonzero(~np.all(truth == ids_fl, axis=1))
    out["same_lists"] = same_lists(truth, ids_fl)
    r = out["ragbook"] / out["faiss"]
    lists = {"ragbook": (truth, build_rb), "numpy": (ids_np, None), "faiss": (ids_fl, build_fl)}
    out["record"] = {
        "vectors": x.shape[0],
        "queries": nq,
        "repeats": REPEATS,
        "systems": {
            name: {"build_s": build, "us_per_query": us(out[name]), "queries_per_s": 1 / out[name],
                   "recall_at_10": out["recall"][name], "same_list_as_faiss": same_lists(ids, ids_fl),
                   "same_set_as_faiss": same_sets(ids, ids_fl)}
            for name, (ids, build) in lists.items()},
        "ratios": {"ragbook/faiss": r, "numpy/faiss": out["numpy"] / out["faiss"],
                   "ragbook/numpy": out["ragbook"] / out["numpy"]},
        "lists_differing_from_faiss": len(diff),
        "target": {"target": f"ragbook exact / faiss flat <= {EXACT_TARGET}x", "ratio": r, "met": r <= EXACT_TARGET},
    }
    print(f"Target: ragbook exact / faiss flat <= {EXACT_TARGET}x: {r:.2f}x  {verdict(r <= EXACT_TARGET)};"
          f" identical top-10 lists ragbook = faiss: {out['same_lists']:.1%} ({len(diff)} of {nq} differ)")
    if len(diff):
        # why lists differ: a near tie reordered by float32 rounding of the dot products
        gaps = []
        for row in diff:
            scores = x[truth[row]] @ q[row]
            gaps.append(float(np.min(np.abs(np.diff(np.sort(scores))))))
        print(f"  differing queries: smallest gap between two of ragbook's top-10 scores, median {np.median(gaps):.1e}"
              f" (float32 rounding differs between NumPy's and faiss's BLAS, so near ties may swap)")
    print()
    return out


# --- IVF ---------------------------------------------------------------------------------------------------


def faiss_ivf(x: np.ndarray, lists: int, matched: bool = False):
    """faiss IndexIVFFlat with inner product, trained on ``x`` then filled with ``x``.

    By default faiss's own k-means settings (10 iterations on a sample of at most 256 vectors per list);
    ``matched`` gives it ragbook's budget instead: every vector, 20 iterations.
    """
    quantizer = faiss.IndexFlatIP(x.shape[1])
    index = faiss.IndexIVFFlat(quantizer, x.shape[1], lists, faiss.METRIC_INNER_PRODUCT)
    if matched:
        index.cp.niter = 20
        index.cp.max_points_per_centroid = x.shape[0]  # no sampling
    gc.collect()
    start = time.perf_counter()
    index.train(x)
    trained = time.perf_counter()
    index.add(x)
    added = time.perf_counter()
    return index, quantizer, trained - start, added - trained


def faiss_list_sizes(index) -> np.ndarray:
    return np.array([index.invlists.list_size(i) for i in range(index.nlist)], dtype=np.int64)


def interpolate_time(recall: float, points: list[tuple[float, float]]) -> tuple[float | None, str]:
    """ragbook's time at ``recall``, linear in recall between its measured (recall, time) points.

    Returns (time, how): "interp" inside the measured range; below it, ragbook's fastest point already
    exceeds that recall, so its time is an upper bound ("<="); above it, None ("not reached").
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


def ivf_part(label: str, x: np.ndarray, q: np.ndarray, truth: np.ndarray, lists: int, probes: tuple[int, ...],
             threads: int) -> dict:
    nq, n = q.shape[0], x.shape[0]
    note(f"{label}: ragbook IVFIndex build")
    build_rb, ivf = timed(lambda: IVFIndex(x, lists, seed=0))
    note(f"{label}: faiss IndexIVFFlat build")
    fivf, quantizer, train_f, add_f = faiss_ivf(x, lists)
    sizes_rb, sizes_f = ivf.list_sizes, faiss_list_sizes(fivf)
    cp = fivf.cp
    print(f"IVF, {label}: {n:,} vectors, {lists} lists, {nq:,} queries")
    table(["index", "build s", "lists empty", "largest list", "N/L", "sum of squared sizes / N",
           "k-means"], [
        ["ragbook IVFIndex", build_rb, int(np.sum(sizes_rb == 0)), int(sizes_rb.max()), n / lists,
         float(np.sum(sizes_rb.astype(float) ** 2) / n),
         f"spherical, all {n:,} vectors, <= 20 iterations, seed 0"],
        ["faiss IndexIVFFlat", train_f + add_f, int(np.sum(sizes_f == 0)), int(sizes_f.max()), n / lists,
         float(np.sum(sizes_f.astype(float) ** 2) / n),
         f"spherical={bool(cp.spherical)}, sample <= {cp.max_points_per_centroid * lists:,}, {cp.niter} iterations "
         f"(train {train_f:.2f} s + add {add_f:.2f} s)"],
    ])
    note(f"{label}: faiss IndexIVFFlat build, k-means with ragbook's budget")
    mivf, _, train_m, add_m = faiss_ivf(x, lists, matched=True)
    control, per_probe, equal_recall = [], {}, {}
    rows, rb_points, f_points = [], [], []
    for p in probes:
        note(f"{label}: probes {p}")
        fivf.nprobe = p

        def faiss_one_thread():
            faiss.omp_set_num_threads(1)
            try:
                return fivf.search(q, K)
            finally:
                faiss.omp_set_num_threads(threads)

        (t_rb, res), (t_f, (_, ids_f)), (t_f1, _) = best_times(
            [lambda: ivf.search(q, K, probes=p), lambda: fivf.search(q, K), faiss_one_thread])
        _, probed = quantizer.search(q, p)
        dots_f = lists + float(np.mean(sizes_f[probed].sum(axis=1)))
        r_rb, r_f = recall_at_k(res.ids, truth), recall_at_k(ids_f, truth)
        mivf.nprobe = p
        r_m = recall_at_k(mivf.search(q, K)[1], truth)
        control.append([p, r_rb, r_f, r_m, r_rb - r_f, r_rb - r_m])
        rb_points.append((r_rb, t_rb / nq))
        f_points.append((r_f, t_f / nq))
        rows.append([p, r_rb, r_f, r_rb - r_f, us(t_rb / nq), us(t_f / nq), ratio(t_rb, t_f), us(t_f1 / nq),
                     ratio(t_rb, t_f1), float(np.mean(res.dot_products)), dots_f])
        per_probe[str(p)] = {
            "ragbook": {"recall_at_10": r_rb, "us_per_query": us(t_rb / nq),
                        "dot_products_per_query": float(np.mean(res.dot_products))},
            "faiss": {"recall_at_10": r_f, "us_per_query": us(t_f / nq), "us_per_query_1_thread": us(t_f1 / nq),
                      "dot_products_per_query": dots_f, "recall_at_10_matched_kmeans": r_m},
            "recall_difference": r_rb - r_f,
            "ratios": {"ragbook/faiss": t_rb / t_f, "ragbook/faiss_1_thread": t_rb / t_f1},
        }
    table(["probes", "recall rb", "recall faiss", "rb - faiss", "us/q rb", "us/q faiss", "rb / faiss",
           "us/q faiss 1 thr", "rb / faiss 1 thr", "dots rb", "dots faiss"], rows,
          title=f"recall@10 against exact search, time per query (best of {REPEATS}, methods taking turns), mean dot products per query "
                f"(faiss: {lists} + sizes of the probed lists); faiss with {threads} threads, and with 1")
    table(["probes", "recall rb", "faiss default", "faiss matched", "rb - default", "rb - matched"], control,
          title=f"control: faiss's k-means given ragbook's budget (all {n:,} vectors, 20 iterations; trained in "
                f"{train_m + add_m:.2f} s): does the recall gap come from the clustering?")
    del mivf
    eq_rows, eq_ratios = [], []
    for p, (r_f, t_f) in zip(probes, f_points):
        t_rb, how = interpolate_time(r_f, rb_points)
        value = None if t_rb is None else t_rb / t_f
        if how == "interp":
            eq_ratios.append(value)
        eq_rows.append([p, r_f, us(t_f), None if t_rb is None else us(t_rb), how,
                        None if value is None else ("<= " if how == "<=" else "") + f"{value:.2f}x"])
        equal_recall[str(p)] = {"faiss_recall_at_10": r_f, "faiss_us_per_query": us(t_f),
                                "ragbook_us_per_query": None if t_rb is None else us(t_rb), "how": how,
                                "ratio": value}
    table(["faiss probes", "faiss recall", "us/q faiss", "us/q rb at that recall", "how", "rb / faiss"], eq_rows,
          title="time at equal recall: ragbook's time interpolated linearly in recall between its measured points "
                "(\"<=\": ragbook's 1 probe already has a higher recall, its time is an upper bound)")
    diffs = [row[3] for row in rows]
    worst_diff = max(diffs, key=abs)
    worst_eq = max(eq_ratios) if eq_ratios else None
    bounds = [t_rb / t_f for (r_f, t_f) in f_points for t_rb, how in [interpolate_time(r_f, rb_points)] if how == "<="]
    print("Targets")
    if worst_eq is not None:
        print(f"  ragbook / faiss time at equal recall <= {IVF_TARGET}x: worst {worst_eq:.2f}x, best {min(eq_ratios):.2f}x "
              f"over {len(eq_ratios)} interpolated points  {verdict(worst_eq <= IVF_TARGET)}")
    if bounds:
        print(f"  ({len(bounds)} faiss points below ragbook's lowest recall: ratio at most {max(bounds):.2f}x there)")
    print(f"  |recall ragbook - faiss| at equal probes <= {RECALL_TARGET}: worst {worst_diff:+.4f}  "
          f"{verdict(abs(worst_diff) <= RECALL_TARGET)}")
    print(f"  (build: ragbook {build_rb:.2f} s, faiss {train_f + add_f:.2f} s, {ratio(build_rb, train_f + add_f)})")
    print()
    record = {
        "vectors": n,
        "lists": lists,
        "queries": nq,
        "repeats": REPEATS,
        "faiss_threads": threads,
        "build": {
            "ragbook": {"build_s": build_rb, "empty_lists": int(np.sum(sizes_rb == 0)),
                        "largest_list": int(sizes_rb.max()),
                        "sum_squared_sizes_over_n": float(np.sum(sizes_rb.astype(float) ** 2) / n)},
            "faiss": {"build_s": train_f + add_f, "train_s": train_f, "add_s": add_f,
                      "empty_lists": int(np.sum(sizes_f == 0)), "largest_list": int(sizes_f.max()),
                      "sum_squared_sizes_over_n": float(np.sum(sizes_f.astype(float) ** 2) / n),
                      "kmeans_iterations": int(cp.niter), "kmeans_sample": int(cp.max_points_per_centroid * lists)},
            "faiss_matched_kmeans": {"build_s": train_m + add_m},
            "ratio_ragbook/faiss": build_rb / (train_f + add_f),
        },
        "probes": per_probe,
        "equal_recall": equal_recall,
        "summary": {"equal_recall_ratio_worst": worst_eq, "equal_recall_ratio_best": min(eq_ratios) if eq_ratios else None,
                    "equal_recall_points": len(eq_ratios), "bound_ratio_below_lowest_recall": max(bounds) if bounds else None,
                    "recall_difference_worst": worst_diff},
        "targets": [
            {"target": f"ragbook / faiss time at equal recall <= {IVF_TARGET}x (worst)", "ratio": worst_eq,
             "met": None if worst_eq is None else worst_eq <= IVF_TARGET},
            {"target": f"|recall ragbook - faiss| at equal probes <= {RECALL_TARGET} (worst)", "value": worst_diff,
             "met": abs(worst_diff) <= RECALL_TARGET},
        ],
    }
    return {"ragbook": rb_points, "faiss": f_points, "probes": probes, "eq_worst": worst_eq, "diff_worst": worst_diff,
            "build": (build_rb, train_f + add_f), "record": record}


# --- the LSA case -------------------------------------------------------------------------------------


def lsa_part(threads: int, probes: tuple[int, ...]) -> dict:
    from ragbook.chunking import sentence_chunks
    from ragbook.documents import load_corpus
    from ragbook.labels import load_questions
    from ragbook.lsa import LSA

    global REPEATS
    heading(f"3. LSA VECTORS OF THE CORPUS ({LSA_DIMENSIONS} dimensions), the labelled questions as queries")
    note("LSA: fitting")
    documents = load_corpus()
    chunks = sentence_chunks(documents, 100)
    texts = [c.indexed_text for c in chunks]
    fit, lsa = timed(lambda: LSA(texts, LSA_DIMENSIONS))
    x = np.ascontiguousarray(lsa.encode(texts))
    questions = [question.text for question in load_questions(documents)]
    q = np.ascontiguousarray(lsa.encode(questions))
    print(f"{len(chunks)} sentence chunks (<= 100 words), {len(questions)} questions; LSA fitted in {fit:.1f} s")
    info = {"description": f"LSA vectors of sentence_chunks(load_corpus(), 100); the labelled questions as queries",
            "dimensions": LSA_DIMENSIONS, "vectors": len(chunks), "queries": len(questions), "lsa_fit_s": fit}
    print(f"a batch of {len(questions)} queries takes milliseconds here, so every time is the best of {LSA_REPEATS}, not {REPEATS}")
    print()
    saved, REPEATS = REPEATS, LSA_REPEATS
    try:
        exact = exact_part("LSA", x, q)
        ivf = ivf_part("LSA", x, q, exact["truth"], LSA_LISTS, probes, threads)
    finally:
        REPEATS = saved
    return {"exact": exact, "ivf": ivf, "info": info}


# --- figure -------------------------------------------------------------------------------------------------


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
            ax.plot(t, r, marker=marker, color=colour, label=f"{name} IVF, {LISTS} lists")
            for probes, ti, ri in zip(ivf["probes"], t, r):
                ax.annotate(str(probes), (ti, ri), textcoords="offset points", xytext=(4, -10), fontsize=7,
                            color=colour)
        for name, label, colour, marker in (("ragbook", "ragbook exact", "C0", "*"),
                                             ("numpy", "NumPy matmul + argpartition", "C2", "D"),
                                             ("faiss", "faiss IndexFlatIP", "C1", "*")):
            ax.plot([us(exact[name])], [exact["recall"][name]], linestyle="none", marker=marker, markersize=11,
                    color=colour, markeredgecolor="black", label=label)
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


# --- main -------------------------------------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--figure", metavar="PATH", help="save recall against time to PATH (default: no figure)")
    parser.add_argument("--quick", action="store_true", help="20,000 vectors and fewer probes: a smoke run")
    parser.add_argument("--output", default=os.path.join(RESULTS_DIR, "vectors.json"), metavar="PATH",
                        help="results file (default: benchmarks/results/vectors.json)")
    parser.add_argument("--no-output", action="store_true", help="print only; write no results file")
    parser.add_argument("--note", action="append", default=[], metavar="TEXT",
                        help="a note stored in the results file's run.notes (repeatable)")
    args = parser.parse_args(argv)
    run = run_info("vectors", argv, {"figure": args.figure, "quick": args.quick},
                   ("numpy", "faiss-cpu", "threadpoolctl", "ragbook"))
    run["notes"] += args.note
    started, cpu_start = time.perf_counter(), cpu_seconds()
    n = 20_000 if args.quick else 100_000
    probes = (1, 4, 16) if args.quick else PROBES
    lsa_probes = (1, 4, 16) if args.quick else LSA_PROBES
    threads = machine()
    results = {}
    for number, case in enumerate(("clustered", "diffuse")):
        description = (f"{CENTRES:,} random unit centres + N(0, {NOISE}^2) noise per coordinate"
                       if case == "clustered" else "isotropic Gaussian")
        heading(f"2{'ab'[number]}. SYNTHETIC, {case.upper()}: {n:,} unit vectors in {DIMENSIONS} dimensions "
                f"({description}), {QUERIES:,} queries, seed {SEEDS[case]}")
        x, q = synthetic(case, n)
        exact = exact_part(case, x, q)
        ivf = ivf_part(case, x, q, exact["truth"], LISTS, probes, threads)
        results[case] = {"exact": exact, "ivf": ivf, "n": n,
                         "info": {"description": description, "seed": SEEDS[case], "dimensions": DIMENSIONS,
                                  "vectors": n, "queries": QUERIES}}
        del x, q
        gc.collect()
    lsa = lsa_part(threads, lsa_probes)

    heading("SUMMARY OF TARGETS")
    rows = []
    for case, res in list(results.items()) + [("LSA", lsa)]:
        e, i = res["exact"], res["ivf"]
        r = e["ragbook"] / e["faiss"]
        rows.append([case, f"{r:.2f}x {verdict(r <= EXACT_TARGET)}", f"{e['same_lists']:.1%}",
                     "-" if i["eq_worst"] is None else f"{i['eq_worst']:.2f}x {verdict(i['eq_worst'] <= IVF_TARGET)}",
                     f"{i['diff_worst']:+.4f} {verdict(abs(i['diff_worst']) <= RECALL_TARGET)}"])
    table(["case", f"exact rb/faiss <= {EXACT_TARGET}x", "same top-10 lists",
           f"IVF rb/faiss at equal recall <= {IVF_TARGET}x (worst)", f"IVF recall diff <= {RECALL_TARGET} (worst)"], rows)
    if args.figure:
        figure(args.figure, results)
    busy = others_busy(cpu_start, time.perf_counter() - started)
    print(f"load average at the end (1, 5, 15 min): {load()}; other processes kept busy during the run: "
          f"{busy} (of {os.cpu_count()})")
    print(f"total run time {time.perf_counter() - started:.0f} s")
    if args.no_output:
        return
    end = cpu_seconds()
    wall = time.perf_counter() - started
    run["duration_s"] = round(wall, 1)
    run["load_average_end"] = load_average()
    run["others_busy_cpus"] = (None if cpu_start is None or end is None else
                               round(max((end[0] - cpu_start[0]) - (end[1] - cpu_start[1]), 0.0) / wall, 2))
    run["numpy_blas_threads"] = blas_threads()[0]
    run["faiss_threads"] = threads
    cases = {case: {**res["info"], "exact": res["exact"]["record"], "ivf": res["ivf"]["record"]}
             for case, res in list(results.items()) + [("lsa", lsa)]}
    write_results(args.output, {
        "schema_version": 1,
        "run": run,
        "parameters": {"k": K, "dimensions": DIMENSIONS, "queries": QUERIES, "centres": CENTRES, "noise": NOISE,
                       "lists": LISTS, "probes": list(probes), "lsa_dimensions": LSA_DIMENSIONS,
                       "lsa_lists": LSA_LISTS, "lsa_probes": list(lsa_probes), "repeats": REPEATS,
                       "lsa_repeats": LSA_REPEATS, "targets": {"exact_ratio": EXACT_TARGET, "ivf_ratio": IVF_TARGET,
                                                               "recall_difference": RECALL_TARGET}},
        "cases": cases,
    })


if __name__ == "__main__":
    main()
