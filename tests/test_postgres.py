"""The PostgreSQL store on a real server (ragbook/postgres/: server.py, store.py
with loading.py, searching.py and admin.py, shards.py): the cluster helper, exact
and HNSW search against NumPy, bulk loading, bad input, row-level security (a
property test of 10,000 cases, with hostile SQL as query text), freshness under
concurrent rewrites, a streaming replica, shards through postgres_fdw, and faults
(a killed server, a dropped connection, a statement timeout, connections lost at
each point of a write, and a fault run with ragbook.postgres.faults).

Expected results come from NumPy's exact search over the same vectors and
from PostgreSQL's own catalogues, never from the store. Vectors come from
a small hashing encoder defined here (MiniLM where the pipeline needs it).
"""

import datetime
import hashlib
import itertools
import os
import re
import threading
import time

import numpy as np
import psycopg
import pytest

from ragbook.system.access import User
from ragbook.indexing.chunking import Chunk, sentence_chunks
from ragbook.corpus.documents import parse_markdown
from ragbook.corpus.orgdocs import ACCESS_LEVELS, DocumentMeta, OrgDocument
from ragbook.postgres.server import LocalCluster, ServerError
from ragbook.postgres.errors import DatabaseError, DatabaseUnavailable, QueryTimeout
from ragbook.postgres.roles import reader_role
from ragbook.postgres.store import PostgresStore

DIM = 48
HOSTILE = [
    "'; DROP TABLE ragbook.chunks; --",
    "x' OR '1'='1",
    "1; SET ROLE postgres; SELECT * FROM pg_authid",
    "RESET ROLE; SELECT text FROM chunks WHERE access = 'finance'",
    "$$ || pg_sleep(5) || $$",
    "\\x00 \x00 NUL byte",
    "') UNION SELECT id, 1.0 FROM chunks --",
    "access = 'finance' OR true",
]


class HashEncoder:
    """Words hashed into DIM buckets with signs: similar texts, similar
    vectors; the same text, the same vector."""

    dimension = DIM

    def encode(self, texts):
        out = np.zeros((len(texts), DIM), np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()) or ["empty"]:
                h = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, h[0] % DIM] += 1.0 if h[1] % 2 else -1.0
                out[row, h[2] % DIM] += 0.5
        return out


def unit(x):
    x = np.asarray(x, np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def org(doc_id, access, version, text, title="Note"):
    body = f"# {title}\n\n{text}\n"
    meta = DocumentMeta(
        doc_id,
        access,
        version,
        datetime.date(2026, 1, 1) + datetime.timedelta(days=version),
    )
    return OrgDocument(meta, parse_markdown(body, doc_id))


def by_sentence(documents):
    """One chunk per sentence of the tests' documents (six to eight words)."""
    return sentence_chunks(documents, 8)


def store_at(dsn, schema, **options):
    store = PostgresStore(
        dsn, HashEncoder(), schema=schema, chunker=by_sentence, **options
    )
    store.clear()
    return store


def numpy_top(vectors, ids, query, k):
    """Exact top k by inner product, ties by id (the reference)."""
    scores = vectors @ query
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))
    return [(ids[i], float(scores[i])) for i in order[:k]]


# ---- the cluster --------------------------------------------------------
def test_cluster_binds_loopback_only_and_runs_unprivileged(pg_cluster):
    with psycopg.connect(pg_cluster.dsn) as conn:
        listen = conn.execute("SHOW listen_addresses").fetchone()[0]
        sockets = conn.execute("SHOW unix_socket_directories").fetchone()
        data = conn.execute("SHOW data_directory").fetchone()[0]
    assert listen == "127.0.0.1" and sockets[0] == ""
    status = open(f"/proc/{pg_cluster.process.pid}/status").read()
    uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
    assert uid != 0 and os.stat(data).st_uid == uid
    if os.geteuid() != 0:
        assert uid == os.geteuid()


def test_stop_ends_the_server_and_removes_its_folder():
    cluster = LocalCluster().start()
    folder, process = cluster.folder, cluster.process
    with psycopg.connect(cluster.dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    cluster.stop()
    assert process.poll() is not None and not folder.exists()
    cluster.stop()  # the second stop does nothing


def test_a_server_that_will_not_start_is_a_clear_error():
    cluster = LocalCluster({"shared_buffers": "lots"})
    with pytest.raises(ServerError, match="(?s)did not start.*shared_buffers"):
        cluster.start()
    assert cluster.folder is None and not cluster.running
    with pytest.raises(TypeError, match="settings"):
        LocalCluster(["fsync=off"])


# ---- search against NumPy -----------------------------------------------
@pytest.fixture(scope="module")
def vectors_store(pg_cluster):
    rng = np.random.default_rng(3)
    vectors = unit(rng.standard_normal((2000, DIM)))
    vectors[10] = vectors[3]  # an exact tie
    chunks = [Chunk(i, f"d{i % 40}", 0, 0, 1, f"row {i}") for i in range(2000)]
    meta = {
        f"d{j}": DocumentMeta(
            f"d{j}", ACCESS_LEVELS[j % 3], 1, datetime.date(2026, 1, 1)
        )
        for j in range(40)
    }
    stores = {}
    for exact in (True, False):
        store = PostgresStore(
            pg_cluster.dsn, HashEncoder(), schema=f"vectors_{int(exact)}", exact=exact
        )
        store.clear()
        store.load(chunks, meta, vectors=vectors)
        stores[exact] = store
    yield stores, vectors, chunks, meta
    for store in stores.values():
        store.close()


def test_exact_search_equals_numpy_and_hnsw_recall(vectors_store):
    stores, vectors, chunks, _ = vectors_store
    ids = [c.id for c in chunks]
    queries = unit(np.random.default_rng(4).standard_normal((30, DIM)))
    queries[0] = vectors[3]
    found = 0
    for q in queries:
        expected = numpy_top(vectors, ids, q, 10)
        got = stores[True].search_vector(q, 10)
        assert [h.chunk_id for h in got] == [i for i, _ in expected]
        assert np.allclose([h.score for h in got], [s for _, s in expected], atol=1e-5)
        approx = stores[False].search_vector(q, 10)
        found += len({h.chunk_id for h in approx} & {i for i, _ in expected})
    assert found / 300 >= 0.9
    tied = stores[True].search_vector(vectors[3], 2)
    assert [h.chunk_id for h in tied] == [3, 10]
    assert tied[0].score == tied[1].score


def test_the_plan_uses_the_hnsw_index(vectors_store):
    stores = vectors_store[0]
    assert "Index Scan using chunks_hnsw" in stores[False].explain()
    assert "hnsw" not in stores[True].explain()


def test_batched_search_equals_single_searches(vectors_store):
    stores, vectors, _, _ = vectors_store
    queries = unit(np.random.default_rng(5).standard_normal((12, DIM)))
    for store in stores.values():
        batch = store.search_vectors(queries, 7)
        assert batch == [store.search_vector(q, 7) for q in queries]


# ---- loading and bad input ----------------------------------------------
def test_load_refuses_duplicates_and_wrong_dimensions_writing_nothing(
    vectors_store, pg_cluster
):
    store = vectors_store[0][True]
    before = store.n_chunks
    extra = [Chunk(5, "new", 0, 0, 1, "again")]
    meta = {"new": DocumentMeta("new", "public", 1, datetime.date(2026, 1, 1))}
    with pytest.raises(ValueError, match="already holds"):
        store.load(extra, meta, vectors=unit(np.ones((1, DIM))))
    with pytest.raises(ValueError, match="dimensions.*vector\\(48\\)"):
        store.load([Chunk(9999, "new", 0, 0, 1, "x")], meta, vectors=np.ones((1, 7)))
    with pytest.raises(ValueError, match="no metadata"):
        store.load(
            [Chunk(9999, "absent", 0, 0, 1, "x")], meta, vectors=unit(np.ones((1, DIM)))
        )
    with pytest.raises(ValueError, match="zero"):
        store.search_vector(np.zeros(DIM))
    assert store.n_chunks == before and "new" not in store.meta

    class Wide(HashEncoder):
        dimension = 64

        def encode(self, texts):
            return np.ones((len(texts), 64), np.float32)

    with pytest.raises(ValueError, match="vector\\(48\\)"):
        PostgresStore(pg_cluster.dsn, Wide(), schema="vectors_1", dimension=64)
    wide = PostgresStore(pg_cluster.dsn, Wide(), schema="vectors_1")
    with pytest.raises(ValueError, match="64 dimensions.*vector\\(48\\)"):
        wide.search("a question")
    wide.close()


@pytest.mark.parametrize(
    "dsn, error, match",
    [
        ("", ValueError, "empty"),
        ("host='unterminated", ValueError, "valid connection string"),
        ("nonsense-without-equals", ValueError, "valid connection string"),
        (42, TypeError, "dsn"),
    ],
)
def test_bad_dsns_are_refused(dsn, error, match):
    with pytest.raises(error, match=match):
        PostgresStore(dsn, HashEncoder())


@pytest.mark.parametrize(
    "schema, error",
    [
        ("Ragbook", ValueError),  # upper case
        ("1st", ValueError),  # a digit first
        ("a" * 42, ValueError),  # longer than 41
        ("x; drop table chunks", ValueError),
        ("", ValueError),
        (7, TypeError),
    ],
)
def test_bad_schema_names_are_refused_by_both_stores(schema, error):
    from ragbook.postgres.shards import ShardedStore

    good = "host=127.0.0.1 dbname=postgres"
    with pytest.raises(error, match="schema"):
        PostgresStore(good, HashEncoder(), schema=schema)
    with pytest.raises(error, match="schema"):
        ShardedStore(good, [good], DIM, schema=schema)


def test_wrong_port_and_wrong_password_are_clear(pg_cluster):
    from ragbook.postgres.server import free_port

    with pytest.raises(DatabaseUnavailable, match="cannot connect"):
        PostgresStore(
            f"host=127.0.0.1 port={free_port()} user=postgres connect_timeout=3",
            HashEncoder(),
        )
    wrong = pg_cluster.dsn.replace(pg_cluster.password, "not-the-password")
    with pytest.raises(DatabaseUnavailable, match="password authentication failed"):
        PostgresStore(wrong, HashEncoder())


# ---- row-level security -------------------------------------------------
LEVEL_SETS = [
    frozenset(c) for n in range(0, 4) for c in itertools.combinations(ACCESS_LEVELS, n)
]
WORDS = (
    "refund warranty margin supplier shipping filter fan error "
    "display return policy price delivery motor cost review"
).split()


@pytest.fixture(scope="module")
def rls_store(pg_cluster):
    rng = np.random.default_rng(11)
    documents = []
    for j in range(60):
        level = ACCESS_LEVELS[int(rng.integers(3))]
        sentences = [" ".join(rng.choice(WORDS, 6)) + "." for _ in range(4)]
        documents.append(org(f"doc-{j}", level, 1, " ".join(sentences)))
    store = PostgresStore(
        pg_cluster.dsn, HashEncoder(), schema="rls", chunker=by_sentence
    )
    store.clear()
    store.add(documents)
    store.build_index()
    access = {d.id: d.meta.access for d in documents}
    yield store, access
    store.close()


def test_rls_property_10000_cases_no_restricted_chunk(rls_store):
    store, access = rls_store
    chunks = store.chunks
    level_of = {cid: access[c.doc_id] for cid, c in chunks.items()}
    rng = np.random.default_rng(12)
    queries = [
        " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))
        for _ in range(1250 - len(HOSTILE))
    ] + HOSTILE
    vectors = unit(HashEncoder().encode(queries))
    all_ids = sorted(chunks)
    matrix = unit(HashEncoder().encode([chunks[i].indexed_text for i in all_ids]))
    cases = restricted = 0
    k = 8
    for levels in LEVEL_SETS:
        user = User("u", levels)
        results = store.search_many(queries, k, user=user)
        readable = [i for i in all_ids if level_of[i] in levels]
        rows = np.array([all_ids.index(i) for i in readable], dtype=int)
        for q, hits in zip(vectors, results):
            cases += 1
            restricted += sum(level_of[h.chunk_id] not in levels for h in hits)
            assert len(hits) == min(k, len(readable))
            if hits:  # every hit scores at least NumPy's k-th readable
                kth = np.sort(matrix[rows] @ q)[::-1][len(hits) - 1]
                assert min(h.score for h in hits) >= kth - 0.05
    assert cases == 10_000 and restricted == 0
    for text in HOSTILE:  # single searches and full text too
        for levels in LEVEL_SETS[1:]:
            user = User("u", levels)
            hits = store.search_for(user, text, 50)
            assert all(
                h.access in levels and access[h.chunk.doc_id] in levels for h in hits
            )
        store.text_search(text, 5)
    assert store.n_chunks == len(chunks) and len(store) == 60


def test_rls_holds_however_the_sql_is_written(rls_store, pg_cluster):
    store, access = rls_store
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS rls_customer")
        admin.execute(
            "CREATE ROLE rls_customer LOGIN PASSWORD 'pw' IN "
            f"ROLE {reader_role(['public'])}"
        )
    dsn = re.sub(
        r"user=\S+ password=\S+", "user=rls_customer password=pw", pg_cluster.dsn
    )
    public = sum(1 for c in store.chunks.values() if access[c.doc_id] == "public")
    with psycopg.connect(dsn, autocommit=True) as conn:
        seen = conn.execute(
            "SELECT access, count(*) FROM rls.chunks GROUP BY access"
        ).fetchall()
        assert seen == [("public", public)]
        assert (
            conn.execute(
                "SELECT count(*) FROM rls.chunks WHERE access <> 'public' OR true"
            ).fetchone()[0]
            == public
        )
        assert (
            conn.execute(
                "SELECT count(*) FROM rls.documents WHERE access = 'finance'"
            ).fetchone()[0]
            == 0
        )
        for attack in (
            "SET ROLE ragbook_reader_finance",
            "SET ROLE postgres",
            "ALTER TABLE rls.chunks DISABLE ROW LEVEL SECURITY",
            "UPDATE rls.chunks SET access = 'public'",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(attack)
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        admin.execute("DROP ROLE rls_customer")


def test_a_user_without_levels_sees_nothing(rls_store):
    store, _ = rls_store
    assert store.search_for(User("nobody", []), "refund", 5) == []
    with pytest.raises(TypeError, match="User"):
        store.search_for("admin", "refund", 5)


# ---- freshness ----------------------------------------------------------
def version_text(version, sentences):
    return " ".join(
        f"Marker v{version} sentence {i} refund window." for i in range(sentences)
    )


def test_updates_and_deletes_are_visible_to_the_next_query(pg_cluster):
    store = store_at(pg_cluster.dsn, "fresh")
    store.add(
        [
            org("policy", "public", 1, version_text(1, 3)),
            org("memo", "finance", 1, "Margins are forty percent."),
        ]
    )
    customer = User("c", ["public"])
    assert {
        h.chunk.text.split()[1] for h in store.search_for(customer, "refund window", 10)
    } == {"v1"}
    store.replace(org("policy", "public", 2, version_text(2, 5)))
    hits = store.search_for(customer, "refund window", 10)
    assert {h.chunk.text.split()[1] for h in hits} == {"v2"}
    assert {h.version for h in hits} == {2}
    with pytest.raises(ValueError, match="does not supersede"):
        store.replace(org("policy", "public", 2, "stale"))
    store.replace(org("policy", "staff", 3, version_text(3, 2)))
    assert store.search_for(customer, "refund window", 10) == []
    store.delete("memo")
    assert "memo" not in store.meta
    with pytest.raises(KeyError):
        store.delete("memo")
    with pytest.raises(ValueError, match="already holds"):
        store.add(org("policy", "public", 9, "x"))
    assert store.search("margins forty percent", 10) == [
        h
        for h in store.search("margins forty percent", 10)
        if store.chunks[h.chunk_id].doc_id == "policy"
    ]
    with psycopg.connect(pg_cluster.dsn) as conn:  # the schema refuses a
        with pytest.raises(psycopg.errors.ForeignKeyViolation):  # stale row
            conn.execute(
                "INSERT INTO fresh.chunks (id, doc_id, version, "
                "access, section, start_at, end_at, text, header, "
                "embedding) SELECT 10000, doc_id, 2, access, 0, 0, "
                "1, 'old', '', embedding FROM fresh.chunks LIMIT 1"
            )
    store.close()


def test_a_reader_never_sees_half_a_rewrite(pg_cluster):
    writer = store_at(pg_cluster.dsn, "rewrite")
    sizes = {v: 2 + v % 5 for v in range(1, 40)}
    writer.add(org("policy", "public", 1, version_text(1, sizes[1])))
    reader = PostgresStore(
        pg_cluster.dsn, HashEncoder(), schema="rewrite", create=False
    )
    seen, stop, errors = [], threading.Event(), []

    def read():
        customer = User("c", ["public"])
        try:
            while not stop.is_set():
                hits = reader.search_for(customer, "refund window marker", 50)
                seen.append(
                    (
                        {h.chunk.text.split()[1] for h in hits}
                        | {f"v{h.version}" for h in hits},
                        len(hits),
                    )
                )
                chunks = list(reader.chunks.values())
                seen.append(({c.text.split()[1] for c in chunks}, len(chunks)))
        except Exception as error:  # reported below
            errors.append(error)

    thread = threading.Thread(target=read)
    thread.start()
    for version in range(2, 40):
        writer.replace(
            org("policy", "public", version, version_text(version, sizes[version]))
        )
    stop.set()
    thread.join()
    assert not errors
    assert len(seen) > 10
    versions_seen = set()
    for versions, n in seen:
        assert len(versions) == 1  # one version at a time, never both
        v = int(versions.pop()[1:])
        versions_seen.add(v)
        assert n == sizes[v]  # all of its chunks, never part of them
    assert len(versions_seen) > 2
    writer.close()
    reader.close()


def test_retried_write_after_a_dropped_connection_is_written_once(pg_cluster):
    store = store_at(pg_cluster.dsn, "retry")
    store.add(org("policy", "public", 1, version_text(1, 3)))
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        pid = store._conn.info.backend_pid
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    store.replace(org("policy", "public", 2, version_text(2, 4)))
    assert store.meta["policy"].version == 2 and store.n_chunks == 4
    with psycopg.connect(pg_cluster.dsn, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(%s)", (store._conn.info.backend_pid,)
        )
    assert len(store.search("refund", 10)) == 4  # a read is retried
    store.close()


# ---- faults -------------------------------------------------------------
def test_a_statement_timeout_is_a_clear_error(pg_cluster):
    store = store_at(pg_cluster.dsn, "slow", timeout=0.3)
    store.add(org("policy", "public", 1, version_text(1, 2)))
    with psycopg.connect(pg_cluster.dsn) as locker:
        locker.execute("LOCK TABLE slow.chunks IN ACCESS EXCLUSIVE MODE")
        started = time.perf_counter()
        with pytest.raises(QueryTimeout, match="timeout of 0.3 s"):
            store.search("refund", 3)
        assert time.perf_counter() - started < 5
    assert len(store.search("refund", 3)) == 2  # usable afterwards
    store.close()


def test_a_server_killed_mid_write_is_a_clear_error():
    with LocalCluster() as cluster:
        store = store_at(cluster.dsn, "ragbook", timeout=20)
        store.add(org("policy", "public", 1, version_text(1, 3)))
        outcome = []

        def replace():
            try:
                store.replace(org("policy", "public", 2, version_text(2, 4)))
                outcome.append("written")
            except DatabaseError as error:
                outcome.append(error)

        locker = psycopg.connect(cluster.dsn)
        locker.execute("LOCK TABLE ragbook.documents IN ACCESS EXCLUSIVE MODE")
        thread = threading.Thread(target=replace)
        thread.start()
        time.sleep(0.5)  # the replace now waits inside the server
        cluster.kill()
        thread.join(30)
        locker.close()
        assert isinstance(outcome[0], DatabaseUnavailable)
        with pytest.raises(DatabaseUnavailable):
            store.search("refund", 3)
        store.close()


def end_session(dsn, pid):
    """End a server session and wait until its process has gone."""
    with psycopg.connect(dsn, autocommit=True) as admin:
        ended = admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
        assert ended.fetchone()[0]


def losing(dsn, function, after=False):
    """``function(cursor, ...)`` that, the first time, ends the session of
    the cursor's connection before it runs (``after``: once it has run)."""
    armed = [True]

    def wrapper(cur, *args):
        pid, fire = cur.connection.info.backend_pid, armed[0]
        armed[0] = False
        if fire and not after:
            end_session(dsn, pid)
        result = function(cur, *args)
        if fire and after:
            end_session(dsn, pid)
        return result

    return wrapper


def test_a_connection_lost_at_each_point_ends_in_the_stores_error(
    pg_cluster, monkeypatch
):
    """Lost during a statement, during COMMIT, during the check of whether a
    write committed, while a new connection is set up: a retry that writes
    once, or the store's error saying whether the write may have committed."""
    import ragbook.postgres.loading as loading
    import ragbook.postgres.store as store_module

    dsn = pg_cluster.dsn
    store = store_at(dsn, "phases")
    store.add(org("policy", "public", 1, version_text(1, 3)))
    new_ids, has, copy = store._new_ids, store._has, loading.copy_chunks
    real_connect = store_module.connect

    def held():
        return store.meta["policy"].version, store.n_chunks

    def connect_and_lose(*args, **options):
        conn = real_connect(*args, **options)
        end_session(dsn, conn.info.backend_pid)
        return conn

    # lost during a statement, then during COMMIT: checked, run again, once
    monkeypatch.setattr(store, "_new_ids", losing(dsn, new_ids))
    store.replace(org("policy", "public", 2, version_text(2, 4)))
    assert held() == (2, 4)
    monkeypatch.setattr(loading, "copy_chunks", losing(dsn, copy, after=True))
    store.replace(org("policy", "public", 3, version_text(3, 2)))
    assert held() == (3, 2)

    # lost during COMMIT, and again during the check: the outcome is unknown
    monkeypatch.setattr(loading, "copy_chunks", losing(dsn, copy, after=True))
    monkeypatch.setattr(store, "_has", losing(dsn, has))
    with pytest.raises(DatabaseUnavailable) as caught:
        store.replace(org("policy", "public", 4, version_text(4, 5)))
    assert caught.value.may_have_committed
    assert re.search(
        "lost while the write was committing.*checking on a new connection "
        "whether it committed failed.*may have committed",
        str(caught.value),
    )
    assert held() == (3, 2)  # it had not: the session ended before COMMIT

    # lost during a statement, and again during the check: not written
    monkeypatch.setattr(store, "_new_ids", losing(dsn, new_ids))
    monkeypatch.setattr(store, "_has", losing(dsn, has))
    with pytest.raises(DatabaseUnavailable, match="did not commit") as caught:
        store.replace(org("policy", "public", 4, version_text(4, 5)))
    assert not caught.value.may_have_committed
    assert "before the write committed" in str(caught.value)
    assert held() == (3, 2)

    # lost, and the new connection lost while it was set up
    monkeypatch.setattr(store, "_new_ids", losing(dsn, new_ids))
    monkeypatch.setattr(store_module, "connect", connect_and_lose)
    with pytest.raises(DatabaseUnavailable, match="set up.*did not commit") as caught:
        store.replace(org("policy", "public", 4, version_text(4, 5)))
    assert not caught.value.may_have_committed
    monkeypatch.setattr(store_module, "connect", real_connect)
    assert held() == (3, 2)
    end_session(dsn, store._conn.info.backend_pid)  # lost while idle
    monkeypatch.setattr(store_module, "connect", connect_and_lose)
    with pytest.raises(DatabaseUnavailable, match="during the read.*new connection"):
        store.search("refund", 3)
    monkeypatch.setattr(store_module, "connect", real_connect)

    # and the next call works
    store.replace(org("policy", "public", 4, version_text(4, 5)))
    assert held() == (4, 5)
    assert len(store.search("refund", 10)) == 5
    store.close()


def test_a_write_whose_commit_reply_is_lost_is_checked_not_made_twice(
    pg_cluster, monkeypatch
):
    """The server committed, the reply never came (a proxy cut it): the
    check on a new connection finds the write there, and the call returns
    without running it again."""
    from pg_proxy import CommitCutter

    proxy = CommitCutter(pg_cluster.port)
    dsn = pg_cluster.dsn.replace(f"port={pg_cluster.port}", f"port={proxy.port}")
    store = store_at(dsn, "cut")
    store.add(org("policy", "public", 1, version_text(1, 3)))
    has, checks = store._has, []

    def checked(cur, versions):
        checks.append(has(cur, versions))
        return checks[-1]

    monkeypatch.setattr(store, "_has", checked)
    for write in (
        lambda: store.replace(org("policy", "public", 2, version_text(2, 4))),
        lambda: store.add(org("memo", "finance", 1, "Margins are forty percent.")),
        lambda: store.delete("memo"),
    ):
        proxy.cut.clear()
        proxy.armed.set()
        write()
        assert proxy.cut.is_set() and checks[-1] is True
    assert len(checks) == 3
    assert store.meta == {"policy": store.meta["policy"]}
    assert store.meta["policy"].version == 2 and store.n_chunks == 4
    store.close()
    proxy.close()


def test_lost_connections_and_a_restart_under_load_keep_every_document():
    """Sessions ended at random during adds, replacements, deletes and
    searches for a few seconds, and a server restart on the same port
    (ragbook.postgres.faults; ``python -m ragbook.postgres.faults --seconds 60`` for a
    longer run): no document torn, doubled or lost, every error the store's
    own and true to the data, and every session's next call after the
    restart succeeds."""
    from ragbook.postgres.faults import fault_run

    with LocalCluster() as cluster:
        port = cluster.port
        figures = fault_run(cluster, 3.0, seed=1, timeout=5.0)
        assert cluster.port == port and cluster.running
    report = figures.report()
    assert figures.raw == [], report
    assert figures.stores_own
    assert (figures.torn, figures.doubled, figures.lost, figures.unclear) == (
        0,
        0,
        0,
        0,
    ), report
    assert figures.torn_reads == 0, report
    assert figures.restart_ok, report
    assert figures.killed >= 10 and figures.acknowledged >= 50, report
    assert figures.slowest_call < 5.0, report  # the store's timeout


def test_the_pipeline_answers_from_postgres_under_rls(pg_cluster):
    from ragbook.corpus.orgdocs import load_org_corpus
    from ragbook.generation.readers import ExtractiveGenerator
    from ragbook.system.store import DocumentStore
    from ragbook.system.pipeline import idf_lookup

    latest = list({d.id: d for d in load_org_corpus()}.values())
    memory = DocumentStore()
    memory.add(latest)
    store = PostgresStore(pg_cluster.dsn, HashEncoder(), schema="org")
    store.clear()
    store.add(latest)
    reader = ExtractiveGenerator(idf_lookup(memory.chunks))
    customer, analyst = User("c", ["public"]), User("a", ["public", "finance"])
    question = "What is the gross margin on the AP-200?"
    for user in (customer, analyst):
        answer = store.answer(question, user, reader, k=5)
        docs = {r.chunk.doc_id for r in answer.retrieved}
        levels = {store.meta[d].access for d in docs}
        assert levels <= user.levels
    assert "supplier-margins" in {
        r.chunk.doc_id for r in store.answer(question, analyst, reader, k=5).retrieved
    }
    store.close()


# ---- replica and shards -------------------------------------------------
def test_a_streaming_replica_serves_reads_with_measured_lag(pg_cluster):
    primary = store_at(pg_cluster.dsn, "replicated")
    primary.add(org("policy", "public", 1, version_text(1, 3)))
    replica = pg_cluster.replica()
    try:
        with psycopg.connect(replica.dsn) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        mirror = PostgresStore(
            replica.dsn, HashEncoder(), schema="replicated", create=False
        )
        primary.replace(org("policy", "public", 2, version_text(2, 4)))
        with psycopg.connect(pg_cluster.dsn) as conn:
            lsn = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        started = time.perf_counter()
        with psycopg.connect(replica.dsn, autocommit=True) as conn:
            while not conn.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s", (lsn,)
            ).fetchone()[0]:
                assert time.perf_counter() - started < 30
                time.sleep(0.005)
        lag = time.perf_counter() - started
        assert 0 <= lag < 30
        assert mirror.meta["policy"].version == 2
        assert mirror.search("refund window", 10) == primary.search("refund window", 10)
        with pytest.raises(DatabaseError, match="read-only replica"):
            mirror.delete("policy")
        mirror.close()
    finally:
        replica.stop()
    primary.close()


def test_shards_merge_to_the_same_top_k_as_one_server(pg_cluster):
    from ragbook.postgres.shards import ShardedStore

    rng = np.random.default_rng(21)
    vectors = unit(rng.standard_normal((3000, DIM)))
    vectors[2999] = vectors[1]  # a tie across shards, most likely
    ids = list(range(3000))
    one = PostgresStore(pg_cluster.dsn, HashEncoder(), schema="single", exact=True)
    one.clear()
    one.load(
        [Chunk(i, "d", 0, 0, 1, f"t{i}") for i in ids],
        {"d": DocumentMeta("d", "public", 1, datetime.date(2026, 1, 1))},
        vectors=vectors,
    )
    with LocalCluster() as a, LocalCluster() as b:
        shards = ShardedStore(pg_cluster.dsn, [a.dsn, b.dsn], DIM, index=False)
        counts = shards.load(ids, [f"t{i}" for i in ids], vectors)
        assert sum(counts.values()) == 3000 and min(counts.values()) > 1000
        with psycopg.connect(pg_cluster.dsn) as conn:  # hash routing is
            expected = dict(
                conn.execute(  # PostgreSQL's own
                    "SELECT tableoid::regclass::text, count(*) FROM "
                    "sharded.chunks GROUP BY 1"
                ).fetchall()
            )
        assert expected == {f"sharded.chunks_{i}": n for i, n in counts.items()}
        assert all("LIMIT" in sql and "ORDER BY" in sql for sql in shards.explain(5))
        queries = unit(rng.standard_normal((25, DIM)))
        queries[0] = vectors[1]
        for q in queries:
            for k in (1, 5, 10):
                merged = shards.search_vector(q, k)
                single = one.search_vector(q, k)
                assert (
                    [h.chunk_id for h in merged]
                    == [h.chunk_id for h in single]
                    == [i for i, _ in numpy_top(vectors, ids, q, k)]
                )
                assert np.allclose([h.score for h in merged], [h.score for h in single])
        shards.close()
    one.close()


# ---- the command-line tool ----------------------------------------------
def test_ragbook_ask_with_the_postgres_store(pg_cluster, tmp_path, capsys, monkeypatch):
    from ragbook.cli import main

    # the default reader as a user runs it: no records replayed
    monkeypatch.delenv("RAGBOOK_LLM_RECORDS", raising=False)

    for name, text in {
        "mars": "# Mars\n\nMars has two moons, Phobos and Deimos.\n",
        "venus": "# Venus\n\nA day on Venus lasts longer than its year.\n",
        "rings": "# Saturn\n\nSaturn has rings of ice and rock.\n",
    }.items():
        (tmp_path / f"{name}.md").write_text(text)
    common = [
        "ask",
        "Which moons does Mars have?",
        "--documents",
        str(tmp_path),
        "--retriever",
        "embedder",
        "--no-cache",
    ]
    outputs = {}
    for store in (
        ["--store", "memory"],
        ["--store", "postgres", "--dsn", pg_cluster.dsn],
    ):
        assert main(common + store) == 0
        text = capsys.readouterr().out
        outputs[store[1]] = [
            line.split("(chunk")[1] for line in text.splitlines() if "(chunk" in line
        ]
    assert outputs["postgres"] == outputs["memory"] and outputs["memory"]
    assert main(common + ["--store", "postgres", "--dsn", "nonsense"]) == 2
    assert "valid connection string" in capsys.readouterr().err
    assert main(common + ["--dsn", pg_cluster.dsn]) == 2
    assert "--dsn needs --store postgres" in capsys.readouterr().err


def test_stored_vectors_are_the_packages_unit_vectors_to_the_bit(pg_cluster):
    # the store makes unit vectors as every index does
    # (ragbook.retrieval.vectors.unit_rows), so the database ranks exactly the
    # vectors that exact search in the process ranks; float32 lengths, computed
    # the way NumPy does, differ in the last bit
    from ragbook.retrieval.vectors import unit_rows

    rng = np.random.default_rng(12)
    raw = rng.standard_normal((40, DIM)) * 3.0
    chunks = [Chunk(i, "d0", 0, 0, 1, f"row {i}") for i in range(40)]
    meta = {"d0": DocumentMeta("d0", "public", 1, datetime.date(2026, 1, 1))}
    store = store_at(pg_cluster.dsn, "unit_bits")
    try:
        store.load(chunks, meta, vectors=raw)
        rows = store._conn.execute(
            "SELECT embedding FROM unit_bits.chunks ORDER BY id"
        ).fetchall()
        stored = np.array([row[0].to_numpy() for row in rows], dtype=np.float32)
        assert stored.tobytes() == unit_rows(raw).tobytes()
    finally:
        store.close()
