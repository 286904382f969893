"""Test-session settings: MiniLM chunk vectors are cached in a scratch folder, never in
the user's home."""

import os
import shutil
import tempfile

_SCRATCH = []


def pytest_configure(config):
    folder = tempfile.mkdtemp(prefix="ragbook-test-cache-")
    _SCRATCH.append(folder)
    os.environ["RAGBOOK_CACHE"] = folder


def pytest_unconfigure(config):
    for folder in _SCRATCH:
        shutil.rmtree(folder, ignore_errors=True)
