"""Searching the PostgreSQL store (chapter 16 and the database appendix): the top k
chunks by cosine for a query, a query vector or a batch of them in one statement,
through the HNSW index or by an exact scan; PostgreSQL's own full-text ranking; and
the searches made as a user, whose rows the database's row-level security chooses.

Vectors are unit vectors, ranked by inner product (``<#>`` is its negative) through
the HNSW index (``vector_ip_ops``), or exactly by a sequential scan. The score of a
hit is the cosine, ties are broken by chunk id, and ``allowed`` restricts the
candidates before ranking (the contract of :mod:`ragbook.retrieval.contract`); when
the index finds fewer than k rows (a filter that few rows pass), an exact scan
ranks them instead. :meth:`SearchingMixin.answer` answers a question through a
view of the store for one user: what :func:`~ragbook.system.pipeline.answer_question`
reads, with every search made as that user.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .. import validate
from ..indexing.chunking import Chunk
from ..retrieval.contract import Hit, as_hits
from ..retrieval.embedder import encode_queries
from ..system.access import User
from .roles import set_role, user_role
from .tables import CHUNK_COLUMNS, chunk_from_row, unit_vectors

__all__ = ["SearchingMixin"]


class SearchingMixin:
    """Searching, for :class:`~ragbook.postgres.store.PostgresStore`, which gives
    the ``encoder``, ``dimension``, ``exact`` and ``ef_search``, runs the work with
    ``_run``, and gives two names that :mod:`ragbook.postgres.store` defines:
    ``MAX_EF_SEARCH``, pgvector's upper limit for ``hnsw.ef_search``, and
    ``StoreHit``, the class of :meth:`search_for`'s results."""

    MAX_EF_SEARCH: int
    StoreHit: type

    def allowed(self, user: User) -> list[int]:
        """Ids of the current chunks ``user`` may read, in id order."""
        if not isinstance(user, User):
            raise TypeError(f"expected a User, got {type(user).__name__}")
        return self._run(
            lambda cur: [
                r[0]
                for r in cur.execute(
                    self._sql(
                        "SELECT id FROM {s}.chunks WHERE access = ANY(%s) ORDER BY id"
                    ),
                    (sorted(user.levels),),
                ).fetchall()
            ]
        )

    def query_vectors(self, queries: Sequence[str]) -> np.ndarray:
        """The queries' unit vectors (``encode_queries`` if the encoder
        has it); each query is checked as the contract requires."""
        queries = [validate.query(q, terms=False) for q in queries]
        vectors = unit_vectors(
            encode_queries(self.encoder, queries), self.dimension, "the query vectors"
        )
        if vectors.shape[0] != len(queries):
            raise ValueError(
                f"the encoder returned {vectors.shape[0]} "
                f"vectors for {len(queries)} queries"
            )
        return vectors

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        """The top k chunks by cosine with the query, as hits (the
        contract of :mod:`ragbook.retrieval.contract`); ``allowed`` restricts the
        candidates before ranking."""
        vector = self.query_vectors([validate.query(query, terms=False)])
        k = validate.k(k)
        if allowed is not None:
            allowed = validate.ids(allowed, "allowed")
            if not allowed:
                return []
        rows = self._run(lambda cur: self._ranked(cur, vector[0], k, allowed))
        return as_hits((r[0], r[1]) for r in rows)

    def search_vector(
        self, vector: object, k: int = 10, user: User | None = None
    ) -> list[Hit]:
        """The top k for a query vector, as the store's user or as
        ``user`` (row-level security)."""
        vector = unit_vectors(
            np.asarray(vector)[None, :], self.dimension, "the query vector"
        )[0]
        k = validate.k(k)
        role = user_role(user)
        if role is False:
            return []
        rows = self._run(lambda cur: self._ranked(cur, vector, k, None, role))
        return as_hits((r[0], r[1]) for r in rows)

    def search_for(self, user: User, query: str, k: int = 10) -> list:
        """The top k chunks ``user`` may read, with their documents'
        versions and access levels. The query runs as the user's reader
        role, so the database's row-level security chooses the rows."""
        role = user_role(user)
        if role is None:
            raise TypeError(f"expected a User, got {type(user).__name__}")
        vector = self.query_vectors([validate.query(query, terms=False)])
        k = validate.k(k)
        if role is False:
            return []
        rows = self._run(
            lambda cur: self._ranked(cur, vector[0], k, None, role, details=True)
        )
        return [
            self.StoreHit(rank, r[1], chunk_from_row(r[2:]), r[6], r[5])
            for rank, r in enumerate(rows, start=1)
        ]

    def search_many(
        self, queries: Sequence[str], k: int = 10, user: User | None = None
    ) -> list[list[Hit]]:
        """:meth:`search` (or, with ``user``, the ranking of
        :meth:`search_for`) for many queries in one statement."""
        queries = validate.texts(queries, "queries")
        vectors = self.query_vectors(queries) if queries else None
        return self.search_vectors(vectors, k, user) if queries else []

    def search_vectors(
        self, vectors: object, k: int = 10, user: User | None = None
    ) -> list[list[Hit]]:
        """The top k for each query vector (rows), in one statement."""
        vectors = unit_vectors(vectors, self.dimension, "the query vectors")
        k = validate.k(k)
        role = user_role(user)
        if role is False:
            return [[] for _ in range(len(vectors))]

        def work(cur):
            set_role(cur, role)
            exact = self.exact or k > self.MAX_EF_SEARCH
            found = self._batch(cur, vectors, k, exact)
            short = [i for i, rows in enumerate(found) if len(rows) < k]
            if short and not exact:
                again = self._batch(cur, vectors[short], k, True)
                for i, rows in zip(short, again):
                    found[i] = rows
            return found

        return [as_hits(rows) for rows in self._run(work)]

    def _batch(
        self, cur, vectors: np.ndarray, k: int, exact: bool
    ) -> list[list[tuple[int, float]]]:
        from pgvector import Vector

        n = k if exact else min(self.MAX_EF_SEARCH, 2 * k)
        self._set_scan(cur, exact, n, True)
        order = "embedding <#> q.v, id" if exact else "embedding <#> q.v"
        cur.execute(
            self._sql(
                "SELECT q.n, c.id, c.d FROM unnest(%s::vector[]) WITH "
                "ORDINALITY AS q(v, n) CROSS JOIN LATERAL (SELECT id, "
                "embedding <#> q.v AS d FROM {s}.chunks "
                f"ORDER BY {order} LIMIT %s) c ORDER BY q.n, c.d, c.id"
            ),
            ([Vector(v) for v in vectors], n),
        )
        found: list[list[tuple[int, float]]] = [[] for _ in vectors]
        for number, chunk_id, distance in cur.fetchall():
            rows = found[number - 1]
            if len(rows) < k:
                rows.append((chunk_id, -distance))
        return found

    def _set_scan(self, cur, exact: bool, n: int, filtered: bool) -> None:
        if exact:
            cur.execute("SET LOCAL enable_indexscan = off")
            return
        cur.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)", (str(self.ef_search),)
        )
        # the scan goes on past ef_search candidates while the LIMIT or a
        # filter (allowed, row-level security) needs more rows
        cur.execute("SET LOCAL hnsw.iterative_scan = strict_order")

    def _ranked(
        self,
        cur,
        vector: np.ndarray,
        k: int,
        allowed: list[int] | None,
        role: str | None = None,
        details: bool = False,
    ) -> list[tuple]:
        """Rows (id, score, ...) of the top k, best first, ties by id:
        the HNSW index's top candidates re-sorted by (distance, id), or,
        when the index found fewer than k rows (a filter that few rows
        pass), an exact scan."""
        from pgvector import Vector

        set_role(cur, role)
        columns = f", {CHUNK_COLUMNS}" if details else ""
        where = "WHERE id = ANY(%(allowed)s)" if allowed is not None else ""
        params = {"q": Vector(vector), "k": k, "allowed": allowed}
        filtered = allowed is not None or role is not None
        if not self.exact and k <= self.MAX_EF_SEARCH:
            n = min(self.MAX_EF_SEARCH, 2 * k)
            self._set_scan(cur, False, n, filtered)
            cur.execute(
                self._sql(
                    f"SELECT id, -d{columns} FROM (SELECT *, embedding <#> "
                    f"%(q)s AS d FROM {{s}}.chunks {where} ORDER BY "
                    "embedding <#> %(q)s LIMIT %(n)s) c ORDER BY d, id "
                    "LIMIT %(k)s"
                ),
                {**params, "n": n},
            )
            rows = cur.fetchall()
            if len(rows) == k:
                return rows
        self._set_scan(cur, True, k, filtered)
        cur.execute(
            self._sql(
                f"SELECT id, -(embedding <#> %(q)s){columns} FROM {{s}}.chunks"
                f" {where} ORDER BY embedding <#> %(q)s, id LIMIT %(k)s"
            ),
            params,
        )
        return cur.fetchall()

    def text_search(
        self,
        query: str,
        k: int = 10,
        allowed: Iterable[int] | None = None,
        match: str = "any",
    ) -> list[Hit]:
        """PostgreSQL's own full-text ranking: ``ts_rank_cd`` (cover
        density) over ``to_tsvector('english', header || text)``, among
        the chunks that match the query's lexemes: all of them
        (``match="all"``, what ``plainto_tsquery`` gives) or any
        (``"any"``). No idf: a rare term weighs what a common one does."""
        query = validate.query(query, terms=False).replace("\x00", " ")
        k = validate.k(k)
        if match not in ("any", "all"):
            raise ValueError(f"match must be 'any' or 'all', got {match!r}")
        tsquery = (
            "plainto_tsquery('english', %(t)s)"
            if match == "all"
            else (
                "replace(plainto_tsquery('english', %(t)s)::text, "
                "' & ', ' | ')::tsquery"
            )
        )
        if allowed is not None:
            allowed = validate.ids(allowed, "allowed")
        where = "AND id = ANY(%(allowed)s)" if allowed is not None else ""

        def work(cur):
            cur.execute(
                self._sql(
                    f"SELECT id, ts_rank_cd(tsv, t.q)::float8 AS r FROM "
                    f"{{s}}.chunks, (SELECT {tsquery} AS q) t WHERE tsv @@ t.q"
                    f" {where} "
                    "ORDER BY r DESC, id LIMIT %(k)s"
                ),
                {"t": query, "k": k, "allowed": allowed},
            )
            return cur.fetchall()

        return as_hits(self._run(work))

    def answer(
        self,
        question: str,
        user: User,
        generator,
        k: int = 5,
        budget: int | None = None,
        **options,
    ):
        """:func:`~ragbook.system.pipeline.answer_question` over the chunks
        ``user`` may read, chosen by the database's row-level security."""
        from ..system.pipeline import answer_question

        if user_role(user) is None:
            raise TypeError(f"expected a User, got {type(user).__name__}")
        view = _UserView(self, user)
        return answer_question(question, view, view, generator, k, budget, **options)

    def explain(self, k: int = 10) -> str:
        """The plan PostgreSQL chooses for a top-k query (one line per
        node, costs removed)."""
        from pgvector import Vector

        vector = np.zeros(self.dimension, np.float32)
        vector[0] = 1

        def work(cur):
            self._set_scan(cur, self.exact, k, False)
            cur.execute(
                self._sql(
                    "EXPLAIN (COSTS OFF) SELECT id FROM {s}.chunks ORDER BY "
                    "embedding <#> %s LIMIT %s"
                ),
                (Vector(vector), k),
            )
            lines = [re.sub(r"'\[[^']*\]'::vector", "$1", r[0]) for r in cur.fetchall()]
            return "\n".join(lines)

        return self._run(work)


class _UserView(Mapping):
    """What :func:`~ragbook.system.pipeline.answer_question` needs for one user:
    a retriever whose search runs under the user's role, and the chunks it
    returned, by id."""

    def __init__(self, store: SearchingMixin, user: User):
        self.store, self.user = store, user
        self._seen: dict[int, Chunk] = {}

    def search(
        self, query: str, k: int = 10, allowed: Iterable[int] | None = None
    ) -> list[Hit]:
        if allowed is not None:
            raise ValueError(
                "a user's view takes no allowed list: the database chooses the rows"
            )
        hits = self.store.search_for(self.user, query, k)
        self._seen.update((h.chunk.id, h.chunk) for h in hits)
        return [Hit(h.chunk.id, h.score, h.rank) for h in hits]

    def __getitem__(self, chunk_id: int) -> Chunk:
        return self._seen[chunk_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._seen)

    def __len__(self) -> int:
        return len(self._seen)
