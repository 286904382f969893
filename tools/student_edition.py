"""Build the student edition: the book and its notebooks with every solution removed.

usage: python tools/student_edition.py [--out _build/student] [--no-build]

The sources are not touched. The script writes, under --out:

  tree/       a copy of what the book and Binder need (config, intro, package,
              requirements, and every project file a chapter reads by a relative
              path, such as ../benchmarks/results/sparse.json), whose chapters/ holds
              the notebooks without solutions and no .md sources; publishing it as the
              branch `student` gives the student edition's Binder buttons something to
              open
  notebooks/  the same notebooks, for download or a learning platform
  html/       the site built from tree/ with `jupyter-book build -W -n --keep-going`

Removed: every `{solution-start}` ... `{solution-end}` pair with everything between
(text and code cells) and every `{solution}` block. Exercises stay. Where a graded
solution was (one that calls `ragbook.exercises.check`), a starter cell takes its place:
a stub of the function the exercise asks for and the check call, so that a student who
fills it in gets the checker's verdict.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
# What the student tree holds besides the chapters (everything the build and Binder
# read).
TREE_FILES = [
    "_config.yml",
    "_toc.yml",
    "intro.md",
    "references.bib",
    "references.md",
    "requirements.txt",
    "runtime.txt",
    "pyproject.toml",
]
TREE_DIRS = ["_static", "_ext", "ragbook"]
STUDENT_BRANCH = "student"

FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|:{3,})\s*(?P<info>.*?)\s*$")
DIRECTIVE = re.compile(r"^\{(?P<name>[\w-]+)\}\s*(?P<arg>.*)$")
CHECK_CALL = re.compile(
    r"""\bcheck\(\s*["'](?P<name>[\w-]+)["']\s*,\s*(?P<function>\w+)\s*\)"""
)


def _opening(line: str):
    """(fence, directive name, argument) when the line opens a fenced block, else
    None."""
    match = FENCE.match(line)
    if not match:
        return None
    directive = DIRECTIVE.match(match["info"])
    name, arg = (directive["name"], directive["arg"].strip()) if directive else ("", "")
    return match["fence"], name, arg


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


@dataclass
class Removed:
    """One solution taken out: its exercise label and the code of its cells."""

    label: str
    code: list[str] = field(default_factory=list)


def starter_cell_source(removed: Removed) -> str | None:
    """A stub of the graded function and the check call, or None when the solution
    grades nothing."""
    calls = [m for code in removed.code for m in CHECK_CALL.finditer(code)]
    if not calls:
        return None
    try:
        from ragbook.exercises import EXERCISES
    except (
        ImportError
    ):  # the package is what the notebooks import; without it use the first call
        EXERCISES = {}
    name = calls[0]["name"]
    wanted = getattr(EXERCISES.get(name), "function_name", None)
    function = next(
        (m["function"] for m in calls if m["function"] == wanted), calls[0]["function"]
    )
    if wanted and function != wanted:
        name = next((m["name"] for m in calls if m["function"] == function), name)
    arguments = "*args"
    for code in removed.code:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == function:
                arguments = ast.unparse(node.args)
    return (
        f"# {removed.label}: write {function} here.\n"
        "# Running this cell grades it.\n"
        "from ragbook.exercises import check\n\n\n"
        f"def {function}({arguments}):\n"
        '    raise NotImplementedError("your solution")\n\n\n'
        f'check("{name}", {function})'
    )


def strip_solutions(notebook):
    """The notebook without its solutions (a new object) and the list of what was
    removed."""
    cells, removed_all = [], []
    mode, fence, current = "keep", "", None
    kept: list[str] = []
    counter = 0

    def flush(template):
        nonlocal kept, counter
        text = "\n".join(kept).strip("\n")
        kept = []
        if text.strip():
            cell = nbformat.v4.new_markdown_cell(text)
            cell.metadata = dict(template.get("metadata", {}))
            cell.id = template.id if counter == 0 else f"{template.id}-{counter}"
            counter += 1
            cells.append(cell)

    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            if mode == "keep":
                cells.append(cell)
            elif current is not None:
                current.code.append(cell.source)
            continue
        counter = 0
        for line in cell.source.split("\n"):
            if mode == "keep":
                opening = _opening(line)
                if opening and opening[1] in ("solution-start", "solution"):
                    fence = opening[0]
                    current = Removed(opening[2])
                    mode = "start" if opening[1] == "solution-start" else "block"
                else:
                    kept.append(line)
            elif mode in ("start", "block", "end"):
                if _closes(line, fence):
                    if mode == "start":
                        mode = "gated"
                    else:
                        removed_all.append(current)
                        source = starter_cell_source(current)
                        if source is not None:
                            flush(cell)
                            starter = nbformat.v4.new_code_cell(source)
                            starter.id = f"student-{current.label or len(removed_all)}"
                            starter.metadata = {"tags": ["student-starter"]}
                            cells.append(starter)
                        mode, current = "keep", None
                elif mode == "block":
                    current.code.append(line)
            elif mode == "gated":
                opening = _opening(line)
                if opening and opening[1] == "solution-end":
                    fence, mode = opening[0], "end"
        flush(cell)
    if mode != "keep":
        raise ValueError(f"a solution for {current.label!r} is not closed ({mode})")
    stripped = nbformat.from_dict(dict(notebook))
    stripped.cells = cells
    stripped.metadata.get("jupytext", {}).pop(
        "formats", None
    )  # no .md to pair with in the student tree
    return stripped, removed_all


def _code(source: str) -> str:
    """A code cell's source as Python: IPython's magic and shell lines left out."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.split("\n")
    )


def referenced_paths(notebook, root: Path = ROOT) -> list[Path]:
    """The project files and folders a chapter's code names by a relative path, such as
    ``Path("../benchmarks/results/sparse.json")`` or ``sys.path.insert(0,
    "../tests")``: every string constant of a code cell that, read from the chapters'
    folder as a notebook runs, names something that exists in the project. Relative to
    ``root``, sorted."""
    chapters = (root / "chapters").resolve()
    found = set()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(_code(cell.source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value.strip()
            if not text or "\n" in text or len(text) > 300 or Path(text).is_absolute():
                continue
            path = (chapters / text).resolve()
            if path in (root.resolve(), chapters) or not path.exists():
                continue
            if path.is_relative_to(root.resolve()):
                found.add(path.relative_to(root.resolve()))
    return sorted(found)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(
            source,
            target,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"),
            dirs_exist_ok=True,
        )
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def write_edition(out: Path) -> dict[str, int]:
    tree, notebooks = out / "tree", out / "notebooks"
    for path in (tree, notebooks, out / "html"):
        shutil.rmtree(path, ignore_errors=True)
    (tree / "chapters").mkdir(parents=True)
    notebooks.mkdir(parents=True)
    for name in TREE_FILES:
        shutil.copy2(ROOT / name, tree / name)
    for name in TREE_DIRS:
        _copy(ROOT / name, tree / name)
    config = (tree / "_config.yml").read_text()
    for old, new in [
        ("branch: main", f"branch: {STUDENT_BRANCH}"),
        ('title: "ragbook: ', 'title: "ragbook (student edition): '),
    ]:
        if old not in config:
            raise SystemExit(
                f"_config.yml has no {old!r}; update tools/student_edition.py"
            )
        config = config.replace(old, new, 1)
    (tree / "_config.yml").write_text(config)
    counts = {}
    for source in sorted((ROOT / "chapters").glob("*.ipynb")):
        notebook = nbformat.read(source, as_version=4)
        for path in referenced_paths(notebook):  # the files the chapter reads
            # never a chapter's source: chapters/ gets the notebooks without solutions
            if path.parts[0] != "chapters" or path.suffix not in (".md", ".ipynb"):
                _copy(ROOT / path, tree / path)
        stripped, removed = strip_solutions(notebook)
        for folder in (tree / "chapters", notebooks):
            nbformat.write(stripped, folder / source.name)
        counts[source.name] = len(removed)
    return counts


def build_site(out: Path) -> None:
    tree = out / "tree"
    beside = (
        Path(sys.executable).parent / "jupyter-book"
    )  # the venv's, when run with its python
    command = [
        str(beside) if beside.exists() else "jupyter-book",
        "build",
        str(tree),
        "-W",
        "-n",
        "--keep-going",
    ]
    print("+", " ".join(command), flush=True)
    result = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if result.returncode != 0 or "WARNING" in result.stdout:
        print(result.stdout[-6000:])
        raise SystemExit("the student edition did not build cleanly")
    shutil.move(str(tree / "_build" / "html"), str(out / "html"))
    shutil.rmtree(tree / "_build")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "student")
    parser.add_argument(
        "--no-build", action="store_true", help="write the notebooks only"
    )
    args = parser.parse_args(argv)
    out = args.out.resolve()
    counts = write_edition(out)
    print(
        f"removed {sum(counts.values())} solutions from {len(counts)} notebooks "
        f"-> {out / 'notebooks'}"
    )
    if not args.no_build:
        build_site(out)
        print(f"student site -> {out / 'html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
