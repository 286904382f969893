"""The tables of the PostgreSQL store (:mod:`ragbook.postgres.store`): how they
are made, what a chunk row holds, and how rows go in with COPY.

Two tables in a schema of their own (``ragbook`` by default)::

    documents(doc_id PRIMARY KEY, version, access, date, title)
    chunks(id PRIMARY KEY, doc_id, version, access, section, start_at,
           end_at, text, header, embedding vector(d), tsv tsvector)
        FOREIGN KEY (doc_id, version, access) -> documents ON DELETE CASCADE

The foreign key makes a superseded chunk impossible, not just unlikely:
a chunk row must carry its document's *current* version and access
level, so replacing a document has to delete the old chunks in the same
transaction (:meth:`ragbook.postgres.store.PostgresStore.replace`).

A vector reaches the ``embedding`` column as a unit vector of the
column's dimension (:func:`unit_vectors`); text reaches the ``text`` and
``header`` columns without NUL characters, which PostgreSQL's text cannot
hold. The roles and policies that decide who reads which rows are in
:mod:`ragbook.postgres.roles`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from .. import validate
from ..indexing.chunking import Chunk
from ..corpus.orgdocs import ACCESS_LEVELS, DocumentMeta
from ..retrieval.vectors import unit_matrix

__all__ = [
    "schema_sql",
    "stored_dimension",
    "create_tables",
    "copy_documents",
    "copy_chunks",
    "CHUNK_COLUMNS",
    "chunk_from_row",
    "unit_vectors",
]

# the columns a chunk is read back from, in the order chunk_from_row takes them
CHUNK_COLUMNS = "id, doc_id, section, access, version, start_at, end_at, text, header"


def schema_sql(schema: str, text: str, **parts):
    """The statement ``text`` with ``{s}`` the schema's name, quoted as an
    identifier, and any other ``parts`` (SQL already composed)."""
    from psycopg import sql

    return sql.SQL(text).format(s=sql.Identifier(schema), **parts)


def stored_dimension(cur, schema: str) -> int | None:
    """The dimension d of ``schema``'s ``chunks.embedding vector(d)``;
    None if the schema holds no chunks table."""
    cur.execute(
        "SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c "
        "ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = "
        "c.relnamespace WHERE n.nspname = %s AND c.relname = "
        "'chunks' AND a.attname = 'embedding'",
        (schema,),
    )
    row = cur.fetchone()
    return None if row is None else int(row[0])


def create_tables(cur, schema: str, dimension: int) -> None:
    """The ``vector`` extension, the schema, its two tables, the sequence of
    chunk ids and the indexes by document and by lexemes, where missing
    (the HNSW index is built after a load:
    :meth:`ragbook.postgres.store.PostgresStore.build_index`)."""
    levels = ", ".join(f"'{level}'" for level in ACCESS_LEVELS)
    cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
    cur.execute(schema_sql(schema, "CREATE SCHEMA IF NOT EXISTS {s}"))
    cur.execute(
        schema_sql(
            schema,
            "CREATE TABLE IF NOT EXISTS {s}.documents ("
            " doc_id text PRIMARY KEY,"
            " version integer NOT NULL CHECK (version >= 1),"
            f" access text NOT NULL CHECK (access IN ({levels})),"
            " date date NOT NULL,"
            " title text NOT NULL DEFAULT '',"
            " UNIQUE (doc_id, version, access))",
        )
    )
    cur.execute(
        schema_sql(
            schema, "CREATE SEQUENCE IF NOT EXISTS {s}.chunk_ids MINVALUE 0 START 0"
        )
    )
    cur.execute(
        schema_sql(
            schema,
            "CREATE TABLE IF NOT EXISTS {s}.chunks ("
            " id bigint PRIMARY KEY CHECK (id >= 0),"
            " doc_id text NOT NULL, version integer NOT NULL,"
            " access text NOT NULL, section integer NOT NULL,"
            " start_at integer NOT NULL, end_at integer NOT NULL,"
            " text text NOT NULL, header text NOT NULL,"
            f" embedding vector({dimension}) NOT NULL,"
            " tsv tsvector GENERATED ALWAYS AS (to_tsvector("
            "'english', header || ' ' || text)) STORED,"
            " FOREIGN KEY (doc_id, version, access) REFERENCES"
            " {s}.documents (doc_id, version, access)"
            " ON DELETE CASCADE)",
        )
    )
    cur.execute(
        schema_sql(
            schema, "CREATE INDEX IF NOT EXISTS chunks_doc ON {s}.chunks (doc_id)"
        )
    )
    cur.execute(
        schema_sql(
            schema,
            "CREATE INDEX IF NOT EXISTS chunks_tsv ON {s}.chunks USING gin (tsv)",
        )
    )


def copy_documents(
    cur, schema: str, metas: Sequence[DocumentMeta], titles: Sequence[str]
) -> None:
    """Documents' rows into ``schema.documents`` with COPY."""
    with cur.copy(
        schema_sql(
            schema,
            "COPY {s}.documents (doc_id, version, access, date, title) FROM STDIN",
        )
    ) as copy:
        for meta, title in zip(metas, titles):
            copy.write_row((meta.doc_id, meta.version, meta.access, meta.date, title))


def copy_chunks(
    cur,
    schema: str,
    ids: Sequence[int],
    chunks: Sequence[Chunk],
    metas: Mapping[str, DocumentMeta],
    vectors: np.ndarray,
) -> None:
    """Chunks' rows, under ``ids``, with their documents' versions and
    access levels from ``metas`` and their ``vectors``, into
    ``schema.chunks`` with a binary COPY."""
    with cur.copy(
        schema_sql(
            schema,
            "COPY {s}.chunks (id, doc_id, version, access, section, "
            "start_at, end_at, text, header, embedding) FROM STDIN "
            "WITH (FORMAT BINARY)",
        )
    ) as copy:
        copy.set_types(
            [
                "int8",
                "text",
                "int4",
                "text",
                "int4",
                "int4",
                "int4",
                "text",
                "text",
                "vector",
            ]
        )
        for chunk_id, chunk, vector in zip(ids, chunks, vectors):
            meta = metas[chunk.doc_id]
            copy.write_row(
                (
                    chunk_id,
                    chunk.doc_id,
                    meta.version,
                    meta.access,
                    chunk.section,
                    chunk.start,
                    chunk.end,
                    _clean(chunk.text),
                    _clean(chunk.header),
                    vector,
                )
            )


def chunk_from_row(row: Sequence) -> Chunk:
    """The chunk of a row whose first columns are :data:`CHUNK_COLUMNS`."""
    chunk_id, doc_id, section, _, _, start, end, text, header = row[:9]
    return Chunk(chunk_id, doc_id, section, start, end, text, header)


def _clean(text: str) -> str:
    """PostgreSQL's text holds no NUL character: it becomes a space."""
    return text.replace("\x00", " ")


def unit_vectors(vectors: object, dimension: int | None, what: str) -> np.ndarray:
    """The rows of ``vectors`` as float32 unit vectors, the way every index of
    the package makes them (:func:`ragbook.retrieval.vectors.unit_rows`), checked:
    finite numbers, ``dimension`` columns (any number for None), no zero row;
    ``what`` names them in an error. No rows give no rows."""
    array = validate.finite_array(vectors, what, ndim=2)
    if dimension is not None and array.shape[1] != dimension:
        raise ValueError(
            f"{what} have {array.shape[1]} dimensions, but "
            f"the store holds vector({dimension}); use an "
            "encoder of the same dimension or another schema"
        )
    if array.shape[0] == 0:
        return array.astype(np.float32)
    try:
        return unit_matrix(array, np.float32, what)
    except ValueError as error:  # a zero row, or one too long to measure
        raise ValueError(f"{what}: {error}") from None
