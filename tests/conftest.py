"""Test-session settings: MiniLM chunk vectors are cached in a scratch folder, never in the user's home."""
import os
import tempfile


def pytest_configure(config):
    os.environ["RAGBOOK_CACHE"] = tempfile.mkdtemp(prefix="ragbook-test-cache-")
