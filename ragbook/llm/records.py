"""Records: every request made of a model and its result, kept in a file keyed by
the model's digest and the whole request, so that a chapter replays what the model
said (see :mod:`ragbook.llm`)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import threading
from pathlib import Path
from typing import Mapping

from .files import DEFAULT_MODEL, ModelError, known_model, write_atomically


class RecordMissing(LookupError):
    """A request that is not in the records, when records are replayed only."""


def request_key(model_sha256: str, request: Mapping) -> str:
    """SHA-256 of the model's digest and the request as canonical JSON (sorted keys, no
    spaces)."""
    canonical = json.dumps(
        {"model": model_sha256, "request": request},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def records_mode() -> str:
    mode = os.environ.get("RAGBOOK_LLM_RECORDS", "replay")
    if mode not in ("replay", "only", "off"):
        raise ValueError(
            f"RAGBOOK_LLM_RECORDS must be replay, only or off, got {mode!r}"
        )
    return mode


class Records:
    """Recorded requests and their results, one JSON object per line, sorted by key.

    Each line holds ``key``, ``request``, ``result`` and ``made_by`` (model, runtime
    version, machine).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict] = self._read()

    def _read(self) -> dict[str, dict]:
        entries: dict[str, dict] = {}
        if not self.path.exists():
            return entries
        for number, line in enumerate(
            self.path.read_text(encoding="utf-8").splitlines(), start=1
        ):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                entries[entry["key"]] = entry
            except (ValueError, KeyError, TypeError):
                raise ModelError(
                    f"{self.path}, line {number}: not a record "
                    "(a JSON object with a key)"
                ) from None
        return entries

    @contextlib.contextmanager
    def _exclusive(self):
        """This process alone changes the file: the records other processes added
        since this one read the file are read again first, so none is lost."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._entries = self._read() | self._entries
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> dict | None:
        return self._entries.get(key)

    def entries(self) -> list[dict]:
        return [self._entries[key] for key in sorted(self._entries)]

    def add(
        self, key: str, request: Mapping, result: Mapping, made_by: Mapping
    ) -> None:
        """Add (or replace) a record and rewrite the file atomically."""
        entry = {
            "key": key,
            "request": dict(request),
            "result": dict(result),
            "made_by": dict(made_by),
        }
        with self._exclusive():
            self._entries[key] = entry
            self._write()

    def remove(self, keys) -> int:
        """Drop the records with these keys (so that the next run makes them again) and
        rewrite the file atomically; returns how many were dropped."""
        with self._exclusive():
            self._entries = self._read()  # what is on disk, less these keys
            dropped = [key for key in keys if self._entries.pop(key, None) is not None]
            if dropped:
                self._write()
        return len(dropped)

    def _write(self) -> None:
        lines = [
            json.dumps(self._entries[k], sort_keys=True, ensure_ascii=False)
            for k in sorted(self._entries)
        ]
        write_atomically(self.path, ("\n".join(lines) + "\n").encode("utf-8"))


def book_records(model: str = DEFAULT_MODEL) -> Records:
    """The records the book's chapters replay for a known model
    (``ragbook/data/generations/``)."""
    return Records(
        Path(__file__).parent.parent
        / "data"
        / "generations"
        / f"{known_model(model)}.jsonl"
    )


def machine() -> str:
    """The processor and core count, as records state where they were made."""
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, {platform.system()}"


# the vector instruction sets llama.cpp chooses its kernels by: two processors of one
# name can differ here (an "AMD EPYC" with AVX-512 and one without), and greedy replies
# made with other kernels can part at near ties (tools/llm_records.py check)
VECTOR_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni")


def instruction_sets(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's vector instruction sets among :data:`VECTOR_FLAGS`, as
    ``cpuinfo`` lists them ("unknown" where it cannot be read)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.startswith(("flags", "Features")):
                have = set(line.split(":", 1)[1].split())
                return " ".join(f for f in VECTOR_FLAGS if f in have) or "none"
    except OSError:
        pass
    return "unknown"
