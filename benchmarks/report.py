"""Plain-text tables and notes shared by the benchmark scripts (imported from the scripts' own folder)."""
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
