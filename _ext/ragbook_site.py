"""Sphinx extension of the ragbook site: MathJax served from the site itself,
author-year bibliography labels.

MathJax: the site loads ``_static/mathjax/tex-svg-full.js`` (``mathjax_path`` in
``_config.yml``), one file of MathJax 3.2.2 (about 2.2 MB) copied from the pinned
``sphinx-mathjax-offline`` package. The SVG output needs no fonts and the "full" build
contains every TeX extension, so nothing is fetched from another host.

Bibliography: ``bibtex_default_style: authoryear`` labels each entry the way the text
cites it, "Cormack et al., 2009", sorted by author and year.

Scripts: every page lists each script once (see :func:`drop_duplicate_scripts`).
"""

from __future__ import annotations

import shutil
from collections import Counter
from importlib import metadata
from pathlib import Path

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle

MATHJAX_FILE = "tex-svg-full.js"
MATHJAX_PACKAGE = "sphinx-mathjax-offline"


def mathjax_source() -> Path:
    """The MathJax file inside the installed sphinx-mathjax-offline package."""
    try:
        distribution = metadata.distribution(MATHJAX_PACKAGE)
    except metadata.PackageNotFoundError:
        raise RuntimeError(
            f"{MATHJAX_PACKAGE} is not installed; it ships the MathJax the site "
            "serves: "
            "pip install -r requirements.txt"
        ) from None
    path = Path(
        distribution.locate_file(f"{MATHJAX_PACKAGE}/static/mathjax/{MATHJAX_FILE}")
    )
    if not path.is_file():
        raise RuntimeError(
            f"{MATHJAX_PACKAGE} {distribution.version} has no "
            f"static/mathjax/{MATHJAX_FILE}"
        )
    return path


def copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mathjax_source(), target / MATHJAX_FILE)


def _surnames(person) -> str:
    return " ".join(person.prelast_names + person.last_names)


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels as the author-year citations read: "Robertson and Zaragoza, 2009", "Lewis
    et al., 2020"."""

    def format_label(self, entry) -> str:
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_surnames(p) for p in persons if str(p) != "others"]
        if not names:
            authors = entry.fields.get("title", entry.key)
        elif len(names) == 1 and len(persons) == 1:
            authors = names[0]
        elif len(names) == 2 and len(persons) == 2:
            authors = f"{names[0]} and {names[1]}"
        else:
            authors = f"{names[0]} et al."
        return f"{authors}, {entry.fields.get('year', 'n.d.')}"

    def format_labels(self, sorted_entries):
        labels = [self.format_label(entry) for entry in sorted_entries]
        counts, seen = Counter(labels), Counter()
        for label in labels:
            if (
                counts[label] > 1
            ):  # two works of the same authors and year: 2020a, 2020b
                seen[label] += 1
                label = f"{label}{chr(ord('a') + seen[label] - 1)}"
            yield label


class AuthorYearStyle(PlainStyle):
    """pybtex's plain style (sorted by author, year, title) with author-year labels."""

    default_label_style = AuthorYearLabelStyle


register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Each script once: sphinx-thebe's inline configuration is otherwise added twice
    under Sphinx 7.4, and the second copy fails in the browser ("Identifier
    'THEBE_JS_URL' has already been declared")."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # an inline script is registered once with filename None and once with "": the
        # same script
        key = (
            str(getattr(script, "filename", script) or ""),
            tuple(sorted(getattr(script, "attributes", {}).items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    # fail at the start of the build, not at its end, when the package is missing
    mathjax_source()
    app.connect("build-finished", copy_mathjax)
    app.connect(
        "html-page-context", drop_duplicate_scripts, priority=900
    )  # after the themes add theirs
    return {"parallel_read_safe": True, "parallel_write_safe": True}
