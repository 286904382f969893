"""One collection hash-partitioned over several PostgreSQL servers, queried
through one coordinator with ``postgres_fdw`` (chapter 16).

Each shard server holds a plain ``chunks`` table (id, doc_id, text,
embedding) with its own HNSW index. The coordinator holds a table
``PARTITION BY HASH (id)`` whose partitions are foreign tables, one per
shard, so a COPY into the coordinator routes every row to its shard.

A top-k over shards is merged from each shard's top k: the global top k
by (distance, id) is contained in the union of the shards' top k by the
same order, since a row of the global top k that is not in its own
shard's top k would have k rows of that shard before it. So
:meth:`ShardedStore.search_vector` asks every shard for its k best
(``ORDER BY ... LIMIT k`` runs on the shard: the ``vector`` extension is
declared shippable) and sorts the at most ``shards * k`` rows again.
With exact search on the shards the result equals one server's.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .. import validate
from .errors import check_dsn, check_schema, connect
from .store import MAX_EF_SEARCH
from .tables import unit_vectors
from ..retrieval.contract import Hit, as_hits

__all__ = ["ShardedStore"]


def _parts(dsn: str) -> dict[str, str]:
    import psycopg

    return psycopg.conninfo.conninfo_to_dict(check_dsn(dsn))


class ShardedStore:
    """Vectors hash-partitioned by id over ``shard_dsns``, queried at the
    coordinator ``dsn`` (any server with ``postgres_fdw``; it may be one of
    the shards' servers, but not the same database's schema).

    ``index`` builds an HNSW index on every shard after :meth:`load`
    (``ef_search`` is set for the shards' sessions); without it every
    shard scans exactly. ``schema`` names the tables on every server.
    """

    def __init__(
        self,
        dsn: str,
        shard_dsns: Sequence[str],
        dimension: int,
        schema: str = "sharded",
        index: bool = True,
        ef_search: int = 40,
    ):
        from pgvector.psycopg import register_vector

        shard_dsns = validate.texts(shard_dsns, "shard_dsns")
        if len(shard_dsns) < 1:
            raise ValueError("a sharded store needs at least one shard")
        schema = check_schema(schema)
        self.dsn = check_dsn(dsn)
        self.shard_dsns = [check_dsn(d) for d in shard_dsns]
        self.dimension = validate.whole(dimension, "dimension", 1, 16000)
        self.schema = schema
        self.index = validate.flag(index, "index")
        self.ef_search = validate.whole(ef_search, "ef_search", 1, MAX_EF_SEARCH)
        self._conn = connect(self.dsn, "the coordinator", autocommit=True)
        for shard in self.shard_dsns:
            self._on_shard(shard, self._shard_table)
        self._coordinator()
        register_vector(self._conn)

    # -- set-up -----------------------------------------------------------
    @staticmethod
    def _on_shard(dsn: str, work) -> None:
        with connect(dsn, "a shard", autocommit=True) as conn:
            work(conn)

    def _shard_table(self, conn) -> None:
        s = self.schema
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
        conn.execute(f"CREATE SCHEMA {s}")
        conn.execute(
            f"CREATE TABLE {s}.chunks (id bigint PRIMARY KEY, "
            f"doc_id text NOT NULL, text text NOT NULL, "
            f"embedding vector({self.dimension}) NOT NULL)"
        )

    def _coordinator(self) -> None:
        from psycopg import sql

        s, n, conn = self.schema, len(self.shard_dsns), self._conn
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
        conn.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
        conn.execute(f"CREATE SCHEMA {s}")
        conn.execute(
            f"CREATE TABLE {s}.chunks (id bigint NOT NULL, "
            f"doc_id text NOT NULL, text text NOT NULL, "
            f"embedding vector({self.dimension}) NOT NULL) "
            f"PARTITION BY HASH (id)"
        )
        for i, shard in enumerate(self.shard_dsns):
            parts = _parts(shard)
            server = f"{s}_shard{i}"
            conn.execute(f"DROP SERVER IF EXISTS {server} CASCADE")
            conn.execute(
                sql.SQL(
                    "CREATE SERVER {v} FOREIGN DATA WRAPPER postgres_fdw "
                    "OPTIONS (host {h}, port {p}, dbname {d}, extensions "
                    "'vector', options {o}, fetch_size '1000')"
                ).format(
                    v=sql.Identifier(server),
                    h=sql.Literal(parts.get("host", "127.0.0.1")),
                    p=sql.Literal(parts.get("port", "5432")),
                    d=sql.Literal(parts.get("dbname", "postgres")),
                    o=sql.Literal(f"-c hnsw.ef_search={self.ef_search}"),
                )
            )
            conn.execute(
                sql.SQL(
                    "CREATE USER MAPPING FOR CURRENT_USER SERVER {v} OPTIONS "
                    "(user {u}, password {w})"
                ).format(
                    v=sql.Identifier(server),
                    u=sql.Literal(parts.get("user", "postgres")),
                    w=sql.Literal(parts.get("password", "")),
                )
            )
            conn.execute(
                f"CREATE FOREIGN TABLE {s}.chunks_{i} PARTITION OF "
                f"{s}.chunks FOR VALUES WITH (MODULUS {n}, REMAINDER {i}) "
                f"SERVER {server} OPTIONS (schema_name '{s}', "
                f"table_name 'chunks')"
            )

    # -- loading ----------------------------------------------------------
    def load(
        self, ids: Sequence[int], texts: Sequence[str], vectors: object
    ) -> dict[int, int]:
        """COPY rows into the coordinator, which routes each to its shard
        by the hash of its id; then build each shard's HNSW index.
        Returns the number of rows per shard."""
        ids = validate.ids(ids, "ids")
        texts = validate.texts(texts, "texts")
        vectors = unit_vectors(vectors, self.dimension, "vectors")
        if not len(ids) == len(texts) == len(vectors):
            raise ValueError(
                f"got {len(ids)} ids, {len(texts)} texts and {len(vectors)} vectors"
            )
        with self._conn.transaction():
            with self._conn.cursor() as cur:
                with cur.copy(
                    f"COPY {self.schema}.chunks (id, doc_id, "
                    "text, embedding) FROM STDIN"
                ) as copy:
                    for chunk_id, text, vector in zip(ids, texts, vectors):
                        copy.write_row(
                            (
                                chunk_id,
                                f"d{chunk_id}",
                                text.replace("\x00", " "),
                                vector,
                            )
                        )
        if self.index:
            for shard in self.shard_dsns:
                self._on_shard(
                    shard,
                    lambda conn: conn.execute(
                        f"CREATE INDEX IF NOT EXISTS chunks_hnsw ON "
                        f"{self.schema}.chunks USING hnsw "
                        "(embedding vector_ip_ops)"
                    ),
                )
        return self.counts()

    def counts(self) -> dict[int, int]:
        """Rows held by each shard, read on the shard itself."""
        found = {}
        for i, shard in enumerate(self.shard_dsns):

            def work(conn, i=i):
                found[i] = conn.execute(
                    f"SELECT count(*) FROM {self.schema}.chunks"
                ).fetchone()[0]

            self._on_shard(shard, work)
        return found

    # -- searching --------------------------------------------------------
    def _query(self, k: int) -> str:
        order = "embedding <#> %(q)s" if self.index else "embedding <#> %(q)s, id"
        per_shard = " UNION ALL ".join(
            f"(SELECT id, embedding <#> %(q)s AS d FROM "
            f"{self.schema}.chunks_{i} ORDER BY {order} LIMIT %(n)s)"
            for i in range(len(self.shard_dsns))
        )
        return f"SELECT id, -d FROM ({per_shard}) u ORDER BY d, id LIMIT %(k)s"

    def search_vector(self, vector: object, k: int = 10) -> list[Hit]:
        """The top k by inner product over every shard, ties by id."""
        from pgvector import Vector

        vector = unit_vectors(
            np.asarray(vector)[None, :], self.dimension, "the query vector"
        )[0]
        k = validate.k(k)
        n = min(MAX_EF_SEARCH, 2 * k) if self.index else k
        rows = self._conn.execute(
            self._query(k), {"q": Vector(vector), "k": k, "n": n}
        ).fetchall()
        return as_hits(rows)

    def explain(self, k: int = 10) -> list[str]:
        """The SQL the coordinator sends to each shard (EXPLAIN VERBOSE's
        "Remote SQL" lines, the vector replaced by $1)."""
        from pgvector import Vector

        vector = np.zeros(self.dimension, np.float32)
        vector[0] = 1
        n = min(MAX_EF_SEARCH, 2 * k) if self.index else k
        rows = self._conn.execute(
            "EXPLAIN (VERBOSE, COSTS OFF) " + self._query(k),
            {"q": Vector(vector), "k": k, "n": n},
        ).fetchall()
        remote = [
            r[0].split("Remote SQL:", 1)[1].strip()
            for r in rows
            if "Remote SQL:" in r[0]
        ]
        return [
            re.sub(r"'\[[^']*\]'(::(public\.)?vector)?", "$1", line) for line in remote
        ]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ShardedStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
