"""Shared helpers of the benchmark scripts (imported from the scripts' own folder): plain-text tables and
notes for the console, and the machine-readable results files (benchmarks/results/*.json)."""
from __future__ import annotations

import os
import sys
import time

import numpy as np


def fmt(value: object) -> str:
    """A table cell: '-' for None, thousands separators, fewer decimals for larger numbers."""
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 1:
            return f"{value:.3f}"
        return f"{value:.4f}"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return str(value)


def table(headers: list[str], rows: list[list[object]], title: str | None = None) -> None:
    """Print a table: first column left-aligned, the others right-aligned, a rule under the header."""
    cells = [[str(h) for h in headers]] + [[fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(title)
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print()


def verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


def note(message: str) -> None:
    """A progress note on stderr (stdout holds only the results)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load() -> str:
    """The load average (1, 5, 15 minutes), or 'unknown'."""
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


# --- machine-readable results ------------------------------------------------------------------------

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
SCHEMA_VERSION = 1


def load_average() -> list[float] | None:
    """The load average (1, 5, 15 minutes) as numbers, or None where the system does not report it."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else platform.processor(), else '?'."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "?"


def memory_mib() -> float | None:
    """Total memory of the machine in MiB (MemTotal of /proc/meminfo, else sysconf), or None."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20, 1)
    except (AttributeError, ValueError, OSError):
        return None


def versions(distributions) -> dict[str, str | None]:
    """Installed version of each distribution (None when it is not installed)."""
    from importlib import metadata

    out = {}
    for dist in distributions:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def source_version() -> dict:
    """The project's git commit and whether ragbook/ differed from it when the run started (None outside git)."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # read only: never take the index lock

    def git(*args):
        try:
            done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--", "ragbook")
    return {"git_commit": git("rev-parse", "HEAD"), "ragbook_modified": None if status is None else bool(status)}


def run_info(benchmark: str, argv: list[str] | None, arguments: dict, distributions) -> dict:
    """The "run" block of a results file: date, command, machine, versions and the load average at start."""
    import platform
    from datetime import datetime, timezone

    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    command = [".venv/bin/python", f"benchmarks/{benchmark}.py", *(sys.argv[1:] if argv is None else argv)]
    return {
        "benchmark": benchmark,
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
        "arguments": arguments,
        "machine": {
            "platform": platform.platform(),
            "cpu_model": cpu_model(),
            "cpu_count": os.cpu_count(),
            "cpus_available": available,
            "memory_mib": memory_mib(),
        },
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
        "libraries": versions(distributions),
        "source": source_version(),
        "load_average_start": load_average(),
        "load_average_end": None,
        "duration_s": None,
        "notes": [],
    }


def clean(value):
    """``value`` with numpy scalars and arrays turned into plain JSON numbers and lists, tuples into lists,
    dict keys into strings; NaN and infinities become None (JSON has no such numbers)."""
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return clean(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if np.isfinite(value) else None
    return value


def write_results(path: str, results: dict) -> None:
    """Write ``results`` as indented JSON to ``path`` atomically: a temporary file in the same folder, then
    os.replace, so that a reader never sees a half-written file."""
    import json
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    text = json.dumps(clean(results), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes the file private; give it the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    print(f"results written to {os.path.relpath(path)}")
