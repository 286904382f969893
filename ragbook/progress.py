"""Progress of long work: what is being done, and n of N.

Embedding the 377 chunks of the bundled corpus takes the MiniLM encoder about 13 s, the
first run of ``ragbook ask --retriever embedder`` included. A function that does such
work takes a ``progress`` argument and reports through :func:`reporter`:

- ``None`` (the default): on standard error, only when it is a terminal and only once
  the work has taken more than :data:`DELAY` seconds; quick calls, notebooks, pipes and
  log files get nothing;
- ``False``: never;
- ``True``: on standard error, from the start;
- a stream (anything with ``write``), such as ``sys.stdout`` in a chapter: there, from
  the start.

The line is rewritten in place (``\\r``) as the work advances and ends with a newline,
``embedding 377 texts with all-MiniLM-L6-v2: 377 of 377``. Notebooks keep only the
final state of such a line (``tools/make_notebook.sh`` and nbval apply the carriage
returns), so a chapter's stored output does not depend on how fast the machine was.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

__all__ = ["DELAY", "Reporter", "reporter"]

DELAY = 1.0  # seconds of work before the default (None) starts to report


class Reporter:
    """Writes ``{what}: {done} of {total}`` to ``stream``, rewriting the line in place.

    ``update(done)`` reports ``done`` of ``total``; ``close()`` ends the line (with the
    total when nothing else was reported and the line has started). With ``delay`` the
    line starts only once that many seconds have passed since the reporter was made.
    """

    def __init__(
        self,
        what: str,
        total: int,
        stream: TextIO | None,
        delay: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.what = what
        self.total = int(total)
        self.stream = stream
        self.delay = float(delay)
        self.clock = clock
        self.started = clock()
        self.shown = False
        self.done = 0

    def update(self, done: int) -> None:
        self.done = int(done)
        if self.stream is None:
            return
        if not self.shown and self.clock() - self.started < self.delay:
            return
        self.shown = True
        self.stream.write(f"\r{self.what}: {self.done} of {self.total}")
        self.stream.flush()

    def close(self) -> None:
        """End the line, if one was started."""
        if self.stream is not None and self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed or detached stream
        return False


def reporter(progress: object, what: str, total: int) -> Reporter:
    """The :class:`Reporter` that ``progress`` asks for (see the module docstring).

    Raises ``TypeError`` for anything but ``None``, ``True``, ``False`` or a stream.
    """
    if progress is None:
        stream = sys.stderr if _is_terminal(sys.stderr) else None
        return Reporter(what, total, stream, delay=DELAY)
    if progress is True:
        return Reporter(what, total, sys.stderr)
    if progress is False:
        return Reporter(what, total, None)
    if callable(getattr(progress, "write", None)):
        return Reporter(what, total, progress)  # type: ignore[arg-type]
    raise TypeError(
        "progress must be None (report on a terminal), True (on standard error), "
        f"False (never) or a stream such as sys.stdout, got {progress!r}"
    )
