"""Show ragbook's own source in a chapter, read from the installed package when the cell runs.

A chapter never retypes the code it explains: it calls :func:`show_source`, so the listing is whatever the
package holds today, and nbval fails the chapter when the package and the stored listing drift apart.
"""
from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

__all__ = ["SourceListing", "show_source"]


class SourceListing:
    """The source of one object, displayed as a highlighted Python block (Markdown in Jupyter)."""

    def __init__(self, source: str, origin: str):
        self.source = source
        self.origin = origin

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.source}```\n\n<small>Defined in <code>{self.origin}</code></small>\n"

    def __repr__(self) -> str:
        return f"# {self.origin}\n{self.source}"


def show_source(obj: object) -> SourceListing:
    """The source code of a ragbook function, class or module, with the file it is defined in.

    Raises ``TypeError`` for objects that have no Python source (built-ins, C extensions) and
    ``ValueError`` for objects that are not part of ragbook, since the book shows only its own code.
    """
    module = inspect.getmodule(obj)
    name = getattr(module, "__name__", "")
    if not (name == "ragbook" or name.startswith("ragbook.")):
        raise ValueError(f"show_source shows ragbook's own code; {obj!r} comes from module {name or 'unknown'!r}")
    try:
        source = inspect.getsource(obj)
    except (OSError, TypeError) as error:
        raise TypeError(f"no Python source is available for {obj!r}: {error}") from error
    source = textwrap.dedent(source)
    if not source.endswith("\n"):
        source += "\n"
    # Named from the module, not the file system, so the listing is the same on every machine.
    is_package = Path(inspect.getsourcefile(obj) or "").name == "__init__.py"
    origin = name.replace(".", "/") + ("/__init__.py" if is_package else ".py")
    return SourceListing(source, origin)
