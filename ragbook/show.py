"""What a chapter shows: ragbook's own source, and the numbers its prose quotes.

A chapter never retypes the code it explains: it calls :func:`show_source`, so the
listing is whatever the package holds today, and nbval fails the chapter when the
package and the stored listing drift apart.

A chapter never glues a float as it was computed either. The same cell gives ``377.0``
on one machine and ``377.0000000000002`` on another (BLAS kernels, an SVD, numpy's
CPU-dispatched math and onnxruntime differ in the last bits), and nbval compares the
stored text exactly. :func:`glue_number` rounds to the decimals the prose shows before
the number is stored, so it is stored the same everywhere; :func:`glue_text` glues
words. Every glued value is kept with the decimals it was rounded to, so a test can
check that no sentence quotes more digits than were kept.
"""

from __future__ import annotations

import inspect
import math
import numbers
import textwrap
from pathlib import Path
from typing import Iterable

__all__ = [
    "WIDTH",
    "diagram_arrow",
    "diagram_box",
    "wrap",
    "SourceListing",
    "glue_figure",
    "glue_number",
    "glue_text",
    "ranked",
    "rounded",
    "show_source",
]

# The characters a line of code or output may take: what the book's code column shows at
# 1280 px (the package's line length, `[tool.ruff] line-length` in pyproject.toml).
WIDTH = 88

# myst-nb's prefix for glued values that are not displayed
GLUE_PREFIX = "application/papermill.record/"


def wrap(text: str, indent: str = "", width: int = WIDTH) -> str:
    """``text`` with every line longer than ``width`` broken at spaces, for printing.

    Each line of ``text`` is wrapped on its own (its line breaks are kept); the pieces
    of a broken line after the first start with ``indent``. A word longer than the line
    is left whole. Nothing is cut: the words and their order are those of ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"wrap takes a str, got {type(text).__name__} {text!r}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 20:
        raise ValueError(f"width must be a whole number of at least 20, got {width!r}")
    if not isinstance(indent, str) or len(indent) > width // 2:
        raise ValueError(f"indent must be a str of at most {width // 2} characters")
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        lines += textwrap.wrap(
            line,
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [line]
    return "\n".join(lines)


class SourceListing:
    """The source of one object, displayed as a highlighted Python block (Markdown in
    Jupyter)."""

    def __init__(self, source: str, origin: str):
        self.source = source
        self.origin = origin

    def _repr_markdown_(self) -> str:
        return (
            f"```python\n{self.source}```\n\n<small>Defined in "
            f"<code>{self.origin}</code></small>\n"
        )

    def __repr__(self) -> str:
        return f"# {self.origin}\n{self.source}"


def show_source(obj: object) -> SourceListing:
    """The source code of a ragbook function, class or module, with the file it is
    defined in.

    Raises ``TypeError`` for objects that have no Python source (built-ins, C
    extensions) and ``ValueError`` for objects that are not part of ragbook, since the
    book shows only its own code.
    """
    # a compiled function (a Numba dispatcher) shows the Python function it compiles
    obj = getattr(obj, "py_func", obj)
    module = inspect.getmodule(obj)
    name = getattr(module, "__name__", "")
    if not (name == "ragbook" or name.startswith("ragbook.")):
        raise ValueError(
            f"show_source shows ragbook's own code; {obj!r} comes from module "
            f"{name or 'unknown'!r}"
        )
    try:
        source = inspect.getsource(obj)
    except (OSError, TypeError) as error:
        raise TypeError(
            f"no Python source is available for {obj!r}: {error}"
        ) from error
    source = textwrap.dedent(source)
    if not source.endswith("\n"):
        source += "\n"
    # Named from the module, not the file system, so the listing is the same on every
    # machine.
    is_package = Path(inspect.getsourcefile(obj) or "").name == "__init__.py"
    origin = name.replace(".", "/") + ("/__init__.py" if is_package else ".py")
    return SourceListing(source, origin)


def rounded(value: object, decimals: int | None = None) -> int | float:
    """``value`` as a plain Python number that prints the same on every machine.

    An integer (Python's or NumPy's) is returned as an ``int``; ``decimals`` may be
    given and is then ignored. A float must come with ``decimals`` (0 to 12) and is
    returned as ``round(value, decimals)``, with ``-0.0`` made ``0.0`` so that a tiny
    negative residue does not print a minus sign. Booleans, strings, NaN and infinities
    are refused: they are not numbers the prose can quote.
    """
    if decimals is not None:
        if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral):
            raise TypeError(f"decimals must be an int from 0 to 12, got {decimals!r}")
        if not 0 <= int(decimals) <= 12:
            raise ValueError(f"decimals must be from 0 to 12, got {int(decimals)}")
    if (
        isinstance(value, bool)
        or hasattr(value, "dtype")
        and getattr(value, "dtype").kind == "b"
    ):
        raise TypeError(
            f"a glued number must be an int or a float, not the boolean {value!r}"
        )
    if isinstance(value, numbers.Integral):
        return int(value)
    if not isinstance(value, numbers.Real):
        raise TypeError(
            "a glued number must be an int or a float, got "
            f"{type(value).__name__} {value!r}"
        )
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"a glued number must be finite, got {number!r}")
    if decimals is None:
        raise TypeError(
            f"the float {number!r} must be rounded before it is glued: pass "
            "decimals=N, the number of "
            "decimals the prose shows (its repr differs in the last digits "
            "between machines)"
        )
    number = round(number, int(decimals))
    return 0.0 if number == 0 else number


def _store(name: str, value: object, decimals: int | None) -> None:
    _store_bundle(name, {GLUE_PREFIX + "text/plain": repr(value)}, decimals)


def _store_bundle(name: str, bundle: dict, decimals: int | None) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            "a glue name must be a Python identifier (letters, digits, _), got "
            f"{name!r}"
        )
    from IPython.display import (
        display,
    )  # imported here: the package works without IPython

    metadata = {
        "scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX},
        "ragbook": {"decimals": decimals},
    }
    display(bundle, raw=True, metadata=metadata)


def glue_number(name: str, value: object, decimals: int | None = None) -> None:
    """Glue a computed number under ``name`` for the prose, rounded to ``decimals``
    first (see :func:`rounded`).

    ``decimals`` is the most the prose shows:
    ``{glue:text}`name:.3f``` needs at least 3, ``:.1%`` at least 3, ``:,`` or ``:.0f``
    0. Nothing is returned (a cell that ends with a glue shows nothing); a cell that
    also prints the number prints :func:`rounded` of it.
    """
    number = rounded(value, decimals)
    _store(name, number, None if isinstance(number, int) else int(decimals))


def glue_text(name: str, text: str) -> None:
    """Glue words under ``name``; a number belongs in :func:`glue_number`, which rounds
    it."""
    if not isinstance(text, str):
        raise TypeError(
            f"glue_text glues a str; got {type(text).__name__} {text!r} (numbers "
            "go through glue_number)"
        )
    _store(name, text, None)


def glue_figure(name: str, figure) -> None:
    """Glue a matplotlib ``figure`` under ``name`` without showing it here, for a
    ``{glue:figure}`` directive to show where the prose wants it (a summary at a
    chapter's start, drawn from results computed at its end)."""
    import base64
    import io

    buffer = io.BytesIO()
    figure.savefig(
        buffer, format="png", bbox_inches="tight", metadata={"Software": None}
    )
    _store_bundle(
        name,
        {
            GLUE_PREFIX + "image/png": base64.b64encode(buffer.getvalue()).decode(),
            GLUE_PREFIX + "text/plain": repr(f"figure {name}"),
        },
        None,
    )


def ranked(
    pairs: Iterable[tuple[object, object]], decimals: int, n: int | None = None
) -> list[tuple[object, float]]:
    """``(name, score)`` pairs as a chapter prints them: scores rounded, highest first,
    ties by name.

    Two scores that agree to ``decimals`` places are printed as equal, so they are
    ordered by name (or id), not by last bits that differ between machines. Ask the
    package for a few more pairs than you print, so that a near-tie at the cut-off is
    decided here too; ``n`` keeps the first ``n`` after ordering.
    """
    if n is not None and (
        isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0
    ):
        raise ValueError(f"n must be a whole number >= 0 or None, got {n!r}")
    rows = [(name, rounded(score, decimals)) for name, score in pairs]
    rows.sort(key=lambda row: (-row[1], row[0]))
    return rows if n is None else rows[: int(n)]


def diagram_box(ax, x: float, y: float, text: str, colour: str = "#dbe9f6", size=9):
    """A rounded box holding ``text`` centred at (x, y) of a matplotlib axes, for the
    book's diagrams; returns the text artist that :func:`diagram_arrow` connects."""
    return ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        fontsize=size,
        bbox=dict(boxstyle="round,pad=0.45", fc=colour, ec="0.3"),
    )


def diagram_arrow(ax, source, target, dashed: bool = False, bend: float = 0.0) -> None:
    """An arrow from one :func:`diagram_box` to another, clipped at both boxes' edges
    (draw the figure's canvas once before, so the boxes have their sizes)."""
    ax.annotate(
        "",
        xy=(0.5, 0.5),
        xycoords=target,
        xytext=(0.5, 0.5),
        textcoords=source,
        arrowprops=dict(
            arrowstyle="-|>",
            color="0.3",
            lw=1.2,
            linestyle="--" if dashed else "-",
            patchA=source.get_bbox_patch(),
            patchB=target.get_bbox_patch(),
            connectionstyle=f"arc3,rad={bend}",
        ),
    )
