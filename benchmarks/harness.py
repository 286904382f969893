"""The benchmarks' shared harness (imported from the scripts' own folder): timing with
repeats, the systems taking turns, and the spread over the repeats; targets printed MET
/ NOT MET; plain-text tables and notes for the console; the machine and its load; the
machine-readable results files (benchmarks/results/*.json)."""

from __future__ import annotations

import gc
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


# --- timing ---------------------------------------------------------------------------


@dataclass
class Timing:
    """The wall times of the repeated calls of one function, and the result of its last
    call."""

    seconds: list[float] = field(default_factory=list)
    result: object = None

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return float(np.median(self.seconds))

    @property
    def worst(self) -> float:
        return max(self.seconds)

    @property
    def spread(self) -> float:
        """Slowest over fastest repeat: 1.0 when every repeat took the same time."""
        return self.worst / self.best

    def record(self, scale: float = 1.0, unit: str = "s") -> dict:
        """The figures for a results file, each time multiplied by ``scale`` (e.g. 1e6 /
        queries)."""
        return {
            f"median_{unit}": self.median * scale,
            f"best_{unit}": self.best * scale,
            f"worst_{unit}": self.worst * scale,
            "spread": self.spread,
            "repeats": len(self.seconds),
        }


def take_turns(
    fns: dict[str, Callable[[], object]], repeats: int, warm_up_below: float = 0.0
) -> dict[str, Timing]:
    """Time every function ``repeats`` times, the functions taking turns (a, b, c, a, b,
    c, ...), so that a change of load on the machine affects them alike. A function
    whose fastest call so far is shorter than ``warm_up_below`` seconds gets an untimed
    call first: thread pools of two libraries compete for the cores, and a library
    called right after the other one pays to get its threads going again."""
    timings = {name: Timing() for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            timing = timings[name]
            timing.result = None
            gc.collect()
            if warm_up_below and (not timing.seconds or timing.best < warm_up_below):
                fn()
            start = time.perf_counter()
            timing.result = fn()
            timing.seconds.append(time.perf_counter() - start)
    return timings


def time_calls(fn: Callable[[], object], repeats: int) -> Timing:
    """``repeats`` timed calls of one function."""
    return take_turns({"fn": fn}, repeats)["fn"]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """Wall time of one call of ``fn`` and its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def turn_ratios(a: Timing, b: Timing) -> dict:
    """a's time over b's in each turn (both measured in the same round): the median and
    the range."""
    ratios = np.array(a.seconds) / np.array(b.seconds)
    return {
        "median": float(np.median(ratios)),
        "min": float(ratios.min()),
        "max": float(ratios.max()),
    }


# --- targets --------------------------------------------------------------------------


def verdict(met: bool | None) -> str:
    return "-" if met is None else ("MET" if met else "NOT MET")


class Targets:
    """Targets of one benchmark section: each ``check`` prints its line and keeps a
    record for the results file."""

    def __init__(self):
        self.records: list[dict] = []

    def check(
        self,
        target: str,
        value: float | None,
        limit: float,
        unit: str = "x",
        absolute: bool = False,
        detail: str = "",
    ) -> bool | None:
        """``value`` (a ratio with unit "x", or a difference) against ``limit``: met
        when at most the limit."""
        met = None if value is None else (abs(value) if absolute else value) <= limit
        shown = (
            "-"
            if value is None
            else (f"{value:.2f}x" if unit == "x" else f"{value:+.4f}")
        )
        print(
            f"  {target}: {shown}  {verdict(met)}" + (f"  ({detail})" if detail else "")
        )
        key = "ratio" if unit == "x" else "value"
        self.records.append({"target": target, key: value, "met": met})
        return met

    @property
    def all_met(self) -> bool:
        return all(r["met"] is not False for r in self.records)


def fmt(value: object) -> str:
    """A table cell: '-' for None, thousands separators, fewer decimals for larger
    numbers."""
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


def table(
    headers: list[str], rows: list[list[object]], title: str | None = None
) -> None:
    """Print a table: first column left-aligned, the others right-aligned, a rule under
    the header."""
    cells = [[str(h) for h in headers]] + [[fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(title)
    for n, row in enumerate(cells):
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths))
            ).rstrip()
        )
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print()


def heading(text: str) -> None:
    print("=" * 100)
    print(text)
    print("=" * 100)


def note(message: str) -> None:
    """A progress note on stderr (stdout holds only the results)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load() -> str:
    """The load average (1, 5, 15 minutes), or 'unknown'."""
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


def cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds all processes have been busy, CPU seconds of this process) from
    /proc/stat; None elsewhere."""
    try:
        with open("/proc/stat", encoding="utf-8") as handle:
            fields = [float(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    busy = (
        sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)
    )  # all but idle and iowait
    mine = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), mine.user + mine.system


def others_busy(start: tuple[float, float] | None, wall: float) -> float | None:
    """How many CPUs other processes kept busy, on average, since ``start`` (None
    without /proc/stat)."""
    end = cpu_seconds()
    if start is None or end is None or wall <= 0:
        return None
    return round(max((end[0] - start[0]) - (end[1] - start[1]), 0.0) / wall, 2)


# --- machine-readable results ---------------------------------------------------------

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
SCHEMA_VERSION = 1


def load_average() -> list[float] | None:
    """The load average (1, 5, 15 minutes) as numbers, or None where the system does not
    report it."""
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
    """Total memory of the machine in MiB (MemTotal of /proc/meminfo, else sysconf), or
    None."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20, 1
        )
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
    """The project's git commit and whether ragbook/ differed from it when the run
    started (None outside git)."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {
        **os.environ,
        "GIT_OPTIONAL_LOCKS": "0",
    }  # read only: never take the index lock

    def git(*args):
        try:
            done = subprocess.run(
                ["git", *args],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--", "ragbook")
    return {
        "git_commit": git("rev-parse", "HEAD"),
        "ragbook_modified": None if status is None else bool(status),
    }


def run_info(
    benchmark: str, argv: list[str] | None, arguments: dict, distributions
) -> dict:
    """The "run" block of a results file: date, command, machine, versions and the load
    average at start."""
    import platform
    from datetime import datetime, timezone

    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count()
    command = [
        ".venv/bin/python",
        f"benchmarks/{benchmark}.py",
        *(sys.argv[1:] if argv is None else argv),
    ]
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
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
        },
        "libraries": versions(distributions),
        "source": source_version(),
        "load_average_start": load_average(),
        "load_average_end": None,
        "duration_s": None,
        "notes": [],
    }


def clean(value):
    """``value`` with numpy scalars and arrays turned into plain JSON numbers and lists,
    tuples into lists, dict keys into strings; NaN and infinities become None (JSON has
    no such numbers)."""
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


def measured_files(benchmark: str) -> dict[str, str]:
    """SHA-256 of every file whose code the run measured: the benchmark script, this
    harness and each module of ragbook loaded by now (paths relative to the project
    root, sorted). ``tests/test_benchmark_results.py`` recomputes them, so a results
    file fails the tests once any of that code changes until it is measured again."""
    import hashlib

    root = Path(__file__).resolve().parent.parent
    files = {
        root / "benchmarks" / f"{benchmark}.py",
        root / "benchmarks" / "harness.py",
    }
    package = root / "ragbook"
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if not origin:
            continue
        origin = Path(origin).resolve()
        if origin.suffix == ".py" and package in origin.parents:
            files.add(origin)
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(files)
    }


def write_results(path: str, results: dict) -> None:
    """Write ``results`` as indented JSON to ``path`` atomically: a temporary file in
    the same folder, then os.replace, so that a reader never sees a half-written
    file. ``run.source.measured`` is filled in here, from the modules loaded by the
    end of the run (see :func:`measured_files`)."""
    import json
    import tempfile

    run = results.get("run")
    if isinstance(run, dict) and isinstance(run.get("source"), dict):
        run["source"]["measured"] = measured_files(run["benchmark"])

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    text = (
        json.dumps(clean(results), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    )
    fd, tmp = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(
            tmp, 0o666 & ~mask
        )  # mkstemp makes the file private; give it the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    print(f"results written to {os.path.relpath(path)}")
