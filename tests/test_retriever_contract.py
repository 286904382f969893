"""The retriever contract (ragbook/retrieval/contract.py), the same cases over every
retriever of the book.

Each retriever must return hits best first with ranks 1..n, at most k of them (all
candidates when k is larger than the collection), equal scores in chunk-id order,
``allowed`` applied before ranking (the top k among the allowed chunks, so never short
when enough are allowed), the same hits for the same call, and refuse empty or malformed
queries and cut-offs. The collection holds two pairs of identical texts, so ties are
certain, not left to chance. The PostgreSQL store runs the same cases on a throwaway
local cluster (the session's ``pg_cluster``), once with its HNSW index and once with
exact scans.
"""

import functools
import itertools

import numpy as np
import pytest

from ragbook.retrieval.bm25 import BM25
from ragbook.indexing.chunking import Chunk
from ragbook.retrieval.dense import DenseRetriever
from ragbook.retrieval.fusion import HybridRetriever, RerankedRetriever
from ragbook.retrieval.lsa import LSA
from ragbook.corpus.orgdocs import load_org_corpus
from ragbook.system.store import DocumentStore
from ragbook.retrieval.contract import Hit, Retriever
from ragbook.retrieval.tfidf import TfIdf

TEXTS = [
    "Mars has two small moons, Phobos and Deimos.",
    "Phobos orbits Mars faster than Mars rotates.",
    "Jupiter has dozens of moons, including four large moons.",
    "The red colour of Mars comes from iron oxide dust.",
    "Mars has two small moons, Phobos and Deimos.",  # = 0
    "Phobos orbits Mars faster than Mars rotates.",  # = 1
    "Saturn has rings of ice and rock, and many moons.",
    "Deimos is the smaller and outer of the two moons of Mars.",
]
DUPLICATES = [(0, 4), (1, 5)]
QUERIES = [
    "What moons does Mars have?",
    "How fast does Phobos orbit?",
    "Why is Mars red?",
    "Which planet has rings and moons?",
]


@functools.lru_cache(maxsize=1)
def _minilm():
    from ragbook.retrieval.embedder import load_minilm

    return DenseRetriever(load_minilm(), TEXTS)


def _store():
    store = DocumentStore()
    store.add(list({d.id: d for d in load_org_corpus()}.values()))
    return store


_PG = {}


@pytest.fixture(scope="module", autouse=True)
def _postgres(pg_cluster):
    _PG["dsn"] = pg_cluster.dsn
    yield
    for name in [n for n in BUILDERS if n.startswith("postgres")]:
        if name in _BUILT:
            _BUILT.pop(name).close()


def _postgres_store(exact):
    from ragbook.postgres.store import PostgresStore

    chunks = [Chunk(i, f"doc{i}", 0, 0, len(t), t) for i, t in enumerate(TEXTS)]
    schema = "contract_exact" if exact else "contract_hnsw"
    return PostgresStore.from_chunks(
        _PG["dsn"], _minilm().encoder, chunks, schema=schema, exact=exact
    )


def _constant(query, ids):
    return np.ones(
        len(ids)
    )  # every candidate ties: the reranked order must be the ids' order


BUILDERS = {
    "bm25": lambda: BM25.from_texts(TEXTS),
    "tfidf": lambda: TfIdf.from_texts(TEXTS),
    "lsa exact": lambda: DenseRetriever(LSA(TEXTS, 3), TEXTS),
    "lsa ivf": lambda: DenseRetriever(LSA(TEXTS, 3), TEXTS, lists=2, probes=1),
    "minilm": _minilm,
    "hybrid": lambda: HybridRetriever(
        [BM25.from_texts(TEXTS), _minilm()], depth=len(TEXTS)
    ),
    "reranked": lambda: RerankedRetriever(
        BM25.from_texts(TEXTS), _constant, depth=len(TEXTS)
    ),
    "store": _store,
    "postgres hnsw": lambda: _postgres_store(False),
    "postgres exact": lambda: _postgres_store(True),
}
_BUILT = {}
ON_TEXTS = [name for name in BUILDERS if name != "store"]
# IVF returns only what its probed lists hold; fusion's scores are rank sums, so a
# filtered fusion is a fusion of filtered lists, not the full fusion filtered
EVERY_CANDIDATE = [name for name in BUILDERS if name != "lsa ivf"]
FILTER_IS_RESTRICTION = [
    "bm25",
    "tfidf",
    "lsa exact",
    "minilm",
    "store",
    "postgres hnsw",
    "postgres exact",
]


def retriever(name):
    if name not in _BUILT:
        _BUILT[name] = BUILDERS[name]()
    return _BUILT[name]


def size(name):
    return len(retriever(name).chunks) if name == "store" else len(TEXTS)


def check_hits(hits, k):
    assert isinstance(hits, list) and len(hits) <= k
    assert all(
        type(h) is Hit and type(h.chunk_id) is int and type(h.score) is float
        for h in hits
    )
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.chunk_id for h in hits}) == len(hits)
    for a, b in zip(hits, hits[1:]):
        assert a.score >= b.score
        if a.score == b.score:
            assert a.chunk_id < b.chunk_id, (
                f"equal scores out of id order: {a} before {b}"
            )


@pytest.mark.parametrize("name", BUILDERS)
def test_satisfies_the_protocol_and_its_rules(name):
    r = retriever(name)
    assert isinstance(r, Retriever)
    for query, k in itertools.product(QUERIES, (1, 3, 100)):
        hits = r.search(query, k)
        check_hits(hits, k)
        if name in EVERY_CANDIDATE:
            assert len(hits) == min(k, size(name))
        assert r.search(query, k) == hits  # deterministic
        assert r.search(query) == r.search(query, 10)  # k defaults to 10


@pytest.mark.parametrize("name", ON_TEXTS)
def test_identical_texts_tie_and_come_in_id_order(name):
    r = retriever(name)
    for query in QUERIES:
        hits = r.search(query, len(TEXTS))
        where = {h.chunk_id: h for h in hits}
        for low, high in DUPLICATES:
            if low in where and high in where:
                assert where[low].rank < where[high].rank
                # fused rank sums differ by design: the lower id ranks higher in each
                # list
                if name != "hybrid":
                    assert where[low].score == where[high].score


@pytest.mark.parametrize("name", BUILDERS)
def test_allowed_is_applied_before_ranking(name):
    r = retriever(name)
    rng = np.random.default_rng(7)
    for query in QUERIES:
        full = r.search(query, size(name))
        for _ in range(5):
            allowed = sorted(
                rng.choice(
                    size(name), size=int(rng.integers(1, size(name) + 1)), replace=False
                ).tolist()
            )
            for k in (1, 3):
                hits = r.search(query, k, allowed=allowed)
                check_hits(hits, k)
                assert {h.chunk_id for h in hits} <= set(allowed)
                if (
                    name in EVERY_CANDIDATE or name == "lsa ivf"
                ):  # a filtered dense search is exact
                    assert len(hits) == min(
                        k, len(allowed)
                    )  # a top k filtered afterwards could be short
                if name in FILTER_IS_RESTRICTION:
                    restricted = [
                        h.chunk_id for h in full if h.chunk_id in set(allowed)
                    ][:k]
                    assert [h.chunk_id for h in hits] == restricted
        assert r.search(query, 3, allowed=[]) == []


@pytest.mark.parametrize("name", BUILDERS)
@pytest.mark.parametrize(
    "query, error",
    [("", ValueError), ("   ", ValueError), (None, TypeError), (42, TypeError)],
)
def test_empty_and_malformed_queries_are_refused(name, query, error):
    with pytest.raises(error, match="query"):
        retriever(name).search(query, 3)


@pytest.mark.parametrize("name", BUILDERS)
@pytest.mark.parametrize(
    "k, error",
    [
        (0, ValueError),
        (-2, ValueError),
        ("3", TypeError),
        (2.5, TypeError),
        (True, TypeError),
    ],
)
def test_bad_cutoffs_are_refused(name, k, error):
    with pytest.raises(error, match="k"):
        retriever(name).search(QUERIES[0], k)


@pytest.mark.parametrize("name", BUILDERS)
def test_numpy_ints_are_cutoffs(name):
    assert retriever(name).search(QUERIES[0], np.int64(3)) == retriever(name).search(
        QUERIES[0], 3
    )
