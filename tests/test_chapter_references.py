"""A module's docstrings name only chapters that use the module.

Every "chapter N", "Chapter N" or "chapters N, M and K" in a docstring of a module
ragbook.X (the module's own, and those of its functions, classes and methods) must name
a chapter whose source, chapters/NN_*.md, imports or mentions ``ragbook.X`` or shows the
source of one of its objects with ``show_source``; a subpackage's ``__init__`` may name
a chapter that uses any of its modules. A chapter that runs ``python -m ragbook`` uses
the command-line modules, ``ragbook.__main__`` and ``ragbook.cli``.
"""

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ragbook"
CHAPTERS = ROOT / "chapters"

# "chapter 9", "Chapter 3", "chapters 6 and 7", "chapters 3, 4 and 9"
REFERENCE = re.compile(r"\b[Cc]hapters?\s+(\d+(?:(?:\s*,\s*|\s+and\s+)\d+)*)")
IMPORT_FROM = re.compile(
    r"^\s*from\s+ragbook(?:\.([\w.]+))?\s+import\s+\(?([^)\n]*(?:\n[^)\n]*)*?)\)?\s*$",
    re.M,
)
SHOW_SOURCE = re.compile(r"show_source\(\s*([A-Za-z_][\w.]*)\s*\)")


def chapter_numbers(text: str) -> list[int]:
    return [
        int(n)
        for match in REFERENCE.finditer(text)
        for n in re.findall(r"\d+", match.group(1))
    ]


def test_reference_pattern_reads_every_form():
    assert chapter_numbers("derived in chapter 9 (and Chapter 3)") == [9, 3]
    assert chapter_numbers("chapters 6 and 7; chapters 3, 4 and 9") == [6, 7, 3, 4, 9]
    assert chapter_numbers("a chapter's rule, chapter-free text") == []


def docstrings(path: Path) -> list[tuple[str, str]]:
    """(where, docstring) for the module and every function, class and method defined in
    it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(
            node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found.append((getattr(node, "name", "module docstring"), doc))
    return found


def chapter_files() -> dict[int, list[Path]]:
    """The sources of each chapter: NN_name.md, and the pages of its sections that
    share its number."""
    files: dict[int, list[Path]] = {}
    for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.md")):
        files.setdefault(int(path.name[:2]), []).append(path)
    return files


def modules_used(source: str) -> set[str]:
    """Names X of the ragbook modules a chapter imports, mentions as ragbook.X, or shows
    objects of."""
    used = set()
    for dotted in re.findall(r"\bragbook\.([\w.]*\w)", source):
        parts = dotted.split(".")
        used |= {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
    if re.search(r"python -m ragbook\b", source):
        used |= {"__main__", "cli", "cli.ask", "cli.options", "cli.evaluate"}
    names = {}  # a name the chapter imported from ragbook -> the object
    for match in IMPORT_FROM.finditer(source):
        module_name = "ragbook" + (f".{match.group(1)}" if match.group(1) else "")
        module = importlib.import_module(module_name)
        for item in re.split(r"[,\s]+", re.sub(r"#.*", "", match.group(2))):
            if not item or item == "as":
                continue
            if hasattr(module, item):
                names[item] = getattr(module, item)
            elif module_name == "ragbook":
                names[item] = importlib.import_module(f"ragbook.{item}")
    for value in names.values():
        if inspect.ismodule(value):
            used.add(value.__name__.split(".", 1)[1])
            continue
        # an imported class or function: its module, and for a class the modules of
        # the classes it is built from (a store's loading and searching parts)
        for part in inspect.getmro(value) if inspect.isclass(value) else (value,):
            module = inspect.getmodule(part)
            if module is not None and module.__name__.startswith("ragbook."):
                used.add(module.__name__.split(".", 1)[1])
    for expression in SHOW_SOURCE.findall(source):
        first, *attributes = expression.split(".")
        if first not in names:
            continue
        obj = names[first]
        for attribute in attributes:
            obj = getattr(obj, attribute, None)
        module = inspect.getmodule(obj) if obj is not None else None
        if module is not None and module.__name__.startswith("ragbook."):
            used.add(module.__name__.split(".", 1)[1])
    return used


USES = {
    number: set().union(*(modules_used(p.read_text(encoding="utf-8")) for p in paths))
    for number, paths in chapter_files().items()
}


def test_chapters_are_found_and_use_ragbook():
    assert len(USES) >= 15
    assert "indexing.text" in USES[2] and "indexing.chunking" in USES[4]
    assert "indexing.text" not in USES[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def uses(number: int, module: str, package: bool) -> bool:
    return module in USES[number] or (
        package and any(u.startswith(module + ".") for u in USES[number])
    )


@pytest.mark.parametrize(
    "path",
    sorted(  # the exercises' modules are reached through ragbook.exercises.check
        p
        for p in PACKAGE.rglob("*.py")
        if p != PACKAGE / "__init__.py" and "exercises" not in p.parts
    ),
    ids=lambda p: p.relative_to(PACKAGE).as_posix(),
)
def test_docstrings_name_chapters_that_use_the_module(path):
    module = module_name(path)
    wrong = []
    for where, doc in docstrings(path):
        for number in chapter_numbers(doc):
            if number not in USES:
                wrong.append(f"{where}: chapter {number} does not exist")
            elif not uses(number, module, path.name == "__init__.py"):
                name = ", ".join(p.name for p in chapter_files()[number])
                wrong.append(
                    f"{where}: chapter {number} ({name}) does not use ragbook.{module}"
                )
    where = path.relative_to(PACKAGE.parent).as_posix()
    assert not wrong, f"{where}:\n  " + "\n  ".join(wrong)
