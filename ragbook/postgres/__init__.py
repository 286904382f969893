"""The store in PostgreSQL with pgvector (chapter 16 and the database appendix).

- :mod:`~ragbook.postgres.server`: a throwaway local cluster on 127.0.0.1.
- :mod:`~ragbook.postgres.errors`: connecting, and the store's own errors.
- :mod:`~ragbook.postgres.tables`: the schema, and loading rows with COPY.
- :mod:`~ragbook.postgres.roles`: roles and row-level security per access level.
- :mod:`~ragbook.postgres.store`: :class:`~ragbook.postgres.store.PostgresStore`,
  split by what it does: loading and replacing documents
  (:mod:`~ragbook.postgres.loading`), searching (:mod:`~ragbook.postgres.searching`)
  and administration (:mod:`~ragbook.postgres.admin`).
- :mod:`~ragbook.postgres.shards`: one table split over several servers.
- :mod:`~ragbook.postgres.faults`: a fault run: sessions ended at random and a restart
  under load, then every document checked.

The last layer before the tool: it may import any other.
"""
