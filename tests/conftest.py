"""Test-session settings: MiniLM chunk vectors are cached in a scratch folder, never in
the user's home; one throwaway PostgreSQL cluster serves the database tests and is
stopped at the end."""

import os
import shutil
import tempfile

import pytest

_SCRATCH = []


def pytest_configure(config):
    folder = tempfile.mkdtemp(prefix="ragbook-test-cache-")
    _SCRATCH.append(folder)
    os.environ["RAGBOOK_CACHE"] = folder


def pytest_unconfigure(config):
    from ragbook.postgres.server import stop_all

    stop_all()  # any PostgreSQL server a test started and left running
    for folder in _SCRATCH:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL cluster for the session's database tests,
    on a free port of 127.0.0.1, stopped (and its folder removed) at the
    end; tests that stop or kill a server start their own."""
    from ragbook.postgres.server import LocalCluster

    with LocalCluster() as cluster:
        yield cluster
