"""A batch of queries shared among the CPU's threads: exact vector search
(:mod:`ragbook.retrieval.vectors`) and batch BM25 (:mod:`ragbook.retrieval.bm25`) cut
their batches into one run of queries per thread.

The runs proceed side by side only because the work spends its time where Python's lock
is released (NumPy's matrix product, the compiled loops). A few queries would wait
longer for the threads than they save, so each caller names the fewest rows a thread
takes.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numba

__all__ = ["parts", "in_parts"]

_POOLS: dict[int, ThreadPoolExecutor] = {}


def parts(m: int, fewest: int) -> int:
    """How many runs :func:`in_parts` cuts m rows into: one per CPU thread (numba's
    thread count), each of at least ``fewest`` rows, and at least one."""
    return max(1, min(numba.get_num_threads(), m // fewest))


def in_parts(work: Callable[[int, int], None], m: int, fewest: int) -> None:
    """Call ``work(a, b)`` on consecutive runs of the rows 0 to m - 1, one run per CPU
    thread (at least ``fewest`` rows each), all at once: the calling thread takes the
    first run and a pool of threads the others. The pool is made on first use, and
    again in a process forked after it (whose copy has no threads)."""
    count = parts(m, fewest)
    bounds = [m * part // count for part in range(count + 1)]
    futures = []
    if count > 1:
        pool = _POOLS.get(os.getpid())
        if pool is None:
            pool = ThreadPoolExecutor(numba.get_num_threads() - 1, "ragbook-search")
            _POOLS[os.getpid()] = pool
        futures = [pool.submit(work, a, b) for a, b in zip(bounds[1:-1], bounds[2:])]
    work(bounds[0], bounds[1])
    for future in futures:
        future.result()
