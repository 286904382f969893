"""A fault run of the PostgreSQL store (:mod:`ragbook.postgres.store`): sessions ended
at random while writers add, replace and delete documents and a reader searches, a
server restart on the same port half-way, then every document checked against what
its writer was told.

``tests/test_postgres.py`` runs it for a few seconds and the database appendix shows
its figures; a longer run is made by hand, from the project root:

    .venv/bin/python -m ragbook.postgres.faults --seconds 60

Each writer thread owns its documents, so it knows what each must hold: the version of
its last acknowledged write; the same after an error that says the write did not
commit; either after one that says it may have committed, until the writer has read
the store, as that error asks. A killer thread ends one of the run's sessions
(``pg_terminate_backend``) at random moments, so that connections are lost before,
during and after statements, during COMMIT, while a store connects again and while it
checks whether a write committed. The restart stops the killer until every session's
first call after it has returned: that call must succeed.

At the end the tables are read directly with psycopg, not through the store:

- torn: a document whose chunks are not exactly those of its stored version;
- doubled: a chunk stored twice;
- lost: a document without its acknowledged write;
- unclear: the store's word and its data disagree (a write said not to have committed
  is there, a document holds a version its writer was never told might be there, or a
  write is refused as if the document held something else);
- raw: an exception that is not one of the store's errors, from any call.

A session ended by the server never loses the reply to a COMMIT that the server
carried out; a network can. The tests make that happen with a proxy in front of the
server (``tests/test_postgres.py``), to check that such a write is not made twice.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import psycopg

from ..corpus.documents import parse_markdown
from ..corpus.orgdocs import DocumentMeta, OrgDocument
from ..indexing.chunking import sentence_chunks
from ..system.access import User
from .errors import DatabaseError
from .server import LocalCluster
from .store import PostgresStore

APPLICATION = "ragbook-fault-run"  # the sessions the killer may end
SCHEMA = "faults"
DIM = 16
DOCUMENTS = 6  # per writer
READER = User("reader", ["public"])


class WordEncoder:
    """Words hashed into DIM buckets: enough for searches to find chunks."""

    dimension = DIM

    def encode(self, texts):
        out = np.zeros((len(texts), DIM), np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()) or ["empty"]:
                h = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, h[0] % DIM] += 1.0 if h[1] % 2 else -1.0
                out[row, h[2] % DIM] += 0.5
        return out


def by_sentence(documents):
    """One chunk per sentence (each has eight words)."""
    return sentence_chunks(documents, 8)


def document(doc_id: str, version: int) -> OrgDocument:
    """Version ``version`` of a document: one to four sentences, each naming
    the document and the version."""
    parts = 1 + (version * 7 + len(doc_id)) % 4
    text = " ".join(
        f"Fault {doc_id} v{version} part {i} holds refund words." for i in range(parts)
    )
    meta = DocumentMeta(doc_id, "public", version, datetime.date(2026, 1, 1))
    return OrgDocument(meta, parse_markdown(f"# Note\n\n{text}\n", doc_id))


def expected_texts(doc_id: str, version: int) -> Counter:
    return Counter(c.text for c in by_sentence([document(doc_id, version).document]))


def message_kind(error: DatabaseError) -> str:
    """The error's class and message with the driver's reasons (in
    parentheses) left out: what kinds of error the callers saw."""
    text, previous = str(error), None
    while text != previous:
        previous, text = text, re.sub(r"\([^()]*\)", "(...)", text)
    text = re.sub(r"server process \d+", "server process N", text)
    return f"{type(error).__name__}: {text}"


@dataclass
class Figures:
    """What a fault run saw; the last four counts and ``raw`` must be empty."""

    seconds: float
    killed: int = 0
    restarted: bool = False
    acknowledged: int = 0
    refused: int = 0  # with the store's error
    refused_not_written: int = 0  # ... saying that nothing was written
    refused_may_have_committed: int = 0  # ... saying that it may have committed
    reads: int = 0
    reads_refused: int = 0
    torn_reads: int = 0  # a search returned chunks of two versions of a document
    torn: int = 0
    doubled: int = 0
    lost: int = 0
    unclear: int = 0
    raw: list = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)
    after_restart: list = field(default_factory=list)
    slowest_call: float = 0.0

    @property
    def stores_own(self) -> bool:
        """Whether every error a caller saw was one of the store's."""
        return not self.raw

    @property
    def restart_ok(self) -> bool:
        return bool(self.after_restart) and all(o == "ok" for o in self.after_restart)

    def report(self) -> str:
        """The figures, in lines of at most 88 characters."""
        lines = [
            f"{self.seconds:.0f} s of writes and reads, "
            f"{self.killed:,} connections killed"
            + (", one server restart" if self.restarted else ""),
            f"writes: {self.acknowledged:,} acknowledged, {self.refused:,} refused "
            "with the store's error,",
            f"  {self.refused_not_written:,} saying nothing was written, "
            f"{self.refused_may_have_committed:,} that it may have committed",
            f"reads: {self.reads:,}, {self.reads_refused:,} refused with the store's "
            f"error, {self.torn_reads} torn",
            f"torn {self.torn}, doubled {self.doubled}, lost {self.lost}, "
            f"unclear {self.unclear}, raw driver errors {len(self.raw)}",
            f"slowest call {self.slowest_call:.2f} s",
        ]
        if self.restarted:
            lines.append(
                "first call of every session after the restart: "
                + ", ".join(self.after_restart)
            )
        return "\n".join(lines)


class _Run:
    """What the threads share: the stop and quiet signals and the restart's
    time."""

    def __init__(self):
        self.stop = threading.Event()
        self.quiet = threading.Event()  # the killer waits
        self.restarted_at: float | None = None


class _Session:
    """One store, used by one thread; counts what it saw."""

    def __init__(self, run: _Run, dsn: str, seed: int, timeout: float):
        self.run = run
        self.rng = random.Random(seed)
        self.store = PostgresStore(
            dsn,
            WordEncoder(),
            schema=SCHEMA,
            create=False,
            chunker=by_sentence,
            timeout=timeout,
        )
        self.counts: Counter = Counter()
        self.kinds: Counter = Counter()
        self.raw: list[str] = []
        self.slowest = 0.0
        self.after_restart: str | None = None

    def call(self, function, what: str):
        """``function()``: ("ok", result), or ("refused", the store's error),
        or ("raw", the exception) — every error is counted."""
        started = time.monotonic()
        try:
            result = ("ok", function())
        except DatabaseError as error:
            self.kinds[message_kind(error)] += 1
            result = ("refused", error)
            time.sleep(0.01)  # as a caller would before trying again
        except (ValueError, KeyError) as error:  # the store's own refusals
            result = ("refusal", error)
        except Exception as error:  # a raw driver error, or a bug
            self.raw.append(f"{what}: {type(error).__module__}.{error!r}")
            result = ("raw", error)
        self.slowest = max(self.slowest, time.monotonic() - started)
        restarted = self.run.restarted_at
        if restarted is not None and started > restarted and not self.after_restart:
            self.after_restart = "ok" if result[0] == "ok" else f"{what}: {result[1]!r}"
        return result

    def main(self):
        try:
            self.loop()
        except Exception as error:  # a bug of the run: counted, never hidden
            self.raw.append(f"the thread stopped: {error!r}")

    def close(self):
        self.store.close()


class _Writer(_Session):
    """Adds, replaces and deletes its own documents, and knows what each
    must hold."""

    def __init__(self, number: int, *args):
        super().__init__(*args)
        self.docs = [f"w{number}d{j}" for j in range(DOCUMENTS)]
        self.known = {d: {None} for d in self.docs}  # versions it may hold
        self.acked = {d: False for d in self.docs}  # known from a write's return
        self.version = {d: 0 for d in self.docs}

    def loop(self):
        while not self.run.stop.is_set():
            doc = self.rng.choice(self.docs)
            if len(self.known[doc]) > 1:
                self.resolve(doc)
            else:
                self.write(doc)

    def write(self, doc: str):
        (held,) = self.known[doc]
        self.version[doc] += 1
        version = self.version[doc]
        if held is None:
            what, new = "add", version
            function = lambda: self.store.add(document(doc, version))  # noqa: E731
        elif self.rng.random() < 0.8:
            what, new = "replace", version
            function = lambda: self.store.replace(document(doc, version))  # noqa: E731
        else:
            what, new = "delete", None
            function = lambda: self.store.delete(doc)  # noqa: E731
        outcome, value = self.call(function, what)
        if outcome == "ok":
            self.counts["acknowledged"] += 1
            self.known[doc], self.acked[doc] = {new}, True
            return
        self.counts["refused" if outcome == "refused" else outcome] += 1
        if outcome == "refused" and not value.may_have_committed:
            self.counts["refused_not_written"] += 1  # known stays as it is
            return
        if outcome == "refused":
            self.counts["refused_may_have_committed"] += 1
        else:
            self.counts["unclear"] += outcome == "refusal"
        self.known[doc], self.acked[doc] = {held, new}, False
        self.resolve(doc)

    def resolve(self, doc: str):
        """Read which version the store holds, as an error that may have
        committed asks the caller to do."""
        outcome, value = self.call(lambda: self.store.meta.get(doc), "read")
        self.counts["reads"] += 1
        if outcome != "ok":
            self.counts["reads_refused"] += outcome == "refused"
            return
        version = None if value is None else value.version
        if version not in self.known[doc]:
            self.counts["unclear"] += 1
        self.known[doc] = {version}


class _Reader(_Session):
    """Searches as the store's user and as a user; a search must never
    return chunks of two versions of one document."""

    def loop(self):
        while not self.run.stop.is_set():
            choice = self.rng.random()
            if choice < 0.4:
                function = lambda: self.store.search_for(READER, "refund words", 10)  # noqa: E731
            elif choice < 0.7:
                function = lambda: self.store.search("refund words part", 10)  # noqa: E731
            elif choice < 0.9:
                function = lambda: self.store.text_search("refund", 10)  # noqa: E731
            else:
                function = lambda: len(self.store)  # noqa: E731
            outcome, value = self.call(function, "read")
            self.counts["reads"] += 1
            self.counts["reads_refused"] += outcome == "refused"
            if outcome == "ok" and choice < 0.4:
                versions: dict[str, set] = {}
                for hit in value:
                    marked = int(re.search(r" v(\d+) ", hit.chunk.text)[1])
                    versions.setdefault(hit.chunk.doc_id, set()).update(
                        {marked, hit.version}
                    )
                self.counts["torn_reads"] += any(len(v) > 1 for v in versions.values())


def _kill(run: _Run, dsn: str, rate: float, seed: int, counts: Counter):
    """End one random session of the run at random moments (exponential
    gaps, ``rate`` a second)."""
    rng, conn = random.Random(seed), None
    while not run.stop.is_set():
        time.sleep(rng.expovariate(rate))
        if run.quiet.is_set():
            continue
        try:
            if conn is None or conn.closed:
                conn = psycopg.connect(dsn, autocommit=True)
            killed = conn.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM "
                "(SELECT pid FROM pg_stat_activity WHERE application_name = %s "
                "ORDER BY random() LIMIT 1) s",
                (APPLICATION,),
            ).fetchone()[0]
            counts["killed"] += killed
        except psycopg.OperationalError:  # the server is restarting
            conn = None
            time.sleep(0.05)
    if conn is not None:
        conn.close()


def _check(dsn: str, writers: list[_Writer], figures: Figures) -> None:
    """Every document against what its writer knows, read with psycopg."""
    with psycopg.connect(dsn) as conn:
        held = dict(conn.execute(f"SELECT doc_id, version FROM {SCHEMA}.documents"))
        rows: dict[str, list] = {}
        for doc_id, version, text in conn.execute(
            f"SELECT doc_id, version, text FROM {SCHEMA}.chunks"
        ):
            rows.setdefault(doc_id, []).append((version, text))
    for doc_id in set(rows) - set(held):
        figures.torn += 1  # chunks without their document
    for doc_id, version in held.items():
        texts = Counter(text for _, text in rows.get(doc_id, []))
        versions = {v for v, _ in rows.get(doc_id, [])}
        expected = expected_texts(doc_id, version)
        figures.doubled += any(n > 1 for n in texts.values())
        figures.torn += versions != {version} or set(texts) != set(expected)
    for writer in writers:
        for doc_id in writer.docs:
            if held.get(doc_id) not in writer.known[doc_id]:
                if writer.acked[doc_id]:
                    figures.lost += 1
                else:
                    figures.unclear += 1


def fault_run(
    cluster: LocalCluster,
    seconds: float,
    *,
    writers: int = 3,
    readers: int = 1,
    kills_per_second: float = 40.0,
    restart: bool = True,
    seed: int = 0,
    timeout: float = 5.0,
) -> Figures:
    """``seconds`` of writes and reads on ``cluster`` with sessions ended at
    random (and a restart half-way, with ``restart``); the schema ``faults``
    is emptied first. Returns the figures, checked against the tables."""
    run = _Run()
    dsn = f"{cluster.dsn} application_name={APPLICATION}"
    setup = PostgresStore(
        cluster.dsn, WordEncoder(), schema=SCHEMA, chunker=by_sentence
    )
    setup.clear()
    setup.close()
    arguments = (run, dsn)
    sessions: list[_Session] = [
        _Writer(n, *arguments, seed * 1000 + n, timeout) for n in range(writers)
    ] + [_Reader(*arguments, seed * 1000 + 500 + n, timeout) for n in range(readers)]
    counts: Counter = Counter()
    threads = [threading.Thread(target=s.main) for s in sessions]
    threads.append(
        threading.Thread(
            target=_kill,
            args=(run, cluster.dsn, kills_per_second, seed, counts),
        )
    )
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        if restart:
            time.sleep(seconds / 2)
            run.quiet.set()
            cluster.restart()
            run.restarted_at = time.monotonic()
            deadline = run.restarted_at + 10 * timeout
            while time.monotonic() < deadline and not all(
                s.after_restart for s in sessions
            ):
                time.sleep(0.01)
            run.quiet.clear()
        time.sleep(max(0.0, started + seconds - time.monotonic()))
    finally:
        run.stop.set()
        for thread in threads:
            thread.join()
        for session in sessions:
            session.close()
    figures = Figures(time.monotonic() - started, restarted=restart)
    figures.killed = counts["killed"]
    for session in sessions:
        for name in (
            "acknowledged",
            "refused",
            "refused_not_written",
            "refused_may_have_committed",
            "reads",
            "reads_refused",
            "torn_reads",
            "unclear",
        ):
            setattr(figures, name, getattr(figures, name) + session.counts[name])
        figures.raw += session.raw
        figures.kinds += session.kinds
        figures.slowest_call = max(figures.slowest_call, session.slowest)
        if restart:
            figures.after_restart.append(session.after_restart or "no call")
    _check(cluster.dsn, [s for s in sessions if isinstance(s, _Writer)], figures)
    return figures


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--kills-per-second", type=float, default=40.0)
    parser.add_argument("--no-restart", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with LocalCluster() as cluster:
        figures = fault_run(
            cluster,
            args.seconds,
            writers=args.writers,
            kills_per_second=args.kills_per_second,
            restart=not args.no_restart,
            seed=args.seed,
        )
    print(figures.report())
    print("the store's errors, by kind:")
    for kind, n in figures.kinds.most_common():
        print(f"{n:6,}  {kind}")
    for line in figures.raw[:20]:
        print("raw:", line)


if __name__ == "__main__":
    main()
