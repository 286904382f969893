"""The package's folders are layers, in the order a question meets them: an import goes
from a later layer to an earlier one (or within one subpackage), never back up, never
round in a circle; no module imports another's private names or re-exports another's
public ones; no module is over 500 lines. CONTRIBUTING.md draws the picture.

The checks read the source with :mod:`ast` (every import, including those inside
functions and under ``TYPE_CHECKING``), so they see what an import at run time might
miss. Each check is also run on a small made-up package, to show that it fails when it
should.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ragbook"

# ragbook's layers, first to last; a top-level module not named here is an error
LAYERS = (
    ("validate", "progress", "show"),  # used by every part
    ("corpus",),
    ("indexing",),
    ("retrieval",),
    ("generation",),
    ("llm",),
    ("evaluation",),
    ("system",),
    ("postgres",),
    ("cli", "exercises"),  # the tool and the graded exercises
    ("__main__",),  # python -m ragbook: the tool
)
MAX_LINES = 500


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root``: dotted name -> file."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, str]]:
    """(module imported, name imported or "") for every import of the package's own
    modules in one file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name in known]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target not in known:
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in known:
                    found.append((submodule, ""))
                else:
                    found.append((target, alias.name))
    return found


def layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for number, members in enumerate(LAYERS):
        if top in members:
            return number
    raise AssertionError(
        f"{module} is in no layer: add its folder to LAYERS in tests/test_layers.py "
        "and to the picture in CONTRIBUTING.md"
    )


def group(module: str) -> str:
    """The subpackage a module belongs to (a top-level module is its own group)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def upward_imports(edges: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Imports that go to a later layer, or across to another folder of the same
    layer."""
    wrong = []
    for source, targets in edges.items():
        for target, _ in targets:
            if target == source or target.count(".") == 0:
                continue  # the package's own __init__ holds only its version
            if layer(target) > layer(source):
                wrong.append(f"{source} imports {target}, a later layer")
            elif (
                layer(target) == layer(source)
                and group(target) != group(source)
                and layer(source) != 0
            ):
                wrong.append(f"{source} imports {target}, beside it in the same layer")
            elif layer(source) == 0 and layer(target) == 0 and target != source:
                wrong.append(f"{source} imports {target}: the base modules stand alone")
    return wrong


def circles(edges: dict[str, list[tuple[str, str]]]) -> list[list[str]]:
    """Every import circle among modules (strongly connected components of more than
    one module, or a module importing itself), by Tarjan's algorithm."""
    graph = {
        m: sorted({t for t, _ in targets if t in edges}) for m, targets in edges.items()
    }
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def private_imports(edges: dict[str, list[tuple[str, str]]]) -> list[str]:
    return [
        f"{source} imports {name} from {target}"
        for source, targets in edges.items()
        for target, name in targets
        if name.startswith("_") and not name.startswith("__") and target != source
    ]


def re_exports(
    found: dict[str, Path], edges: dict[str, list[tuple[str, str]]]
) -> list[str]:
    """Names a module lists in ``__all__`` but imports from another module: one name,
    one home. A package's ``__init__`` may list its own submodules' names."""
    wrong = []
    for module, path in found.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        public = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                public = {ast.literal_eval(e) for e in node.value.elts}
        for target, name in edges.get(module, []):
            if name in public:
                own = path.name == "__init__.py" and target.startswith(module + ".")
                if not own:
                    wrong.append(f"{module} re-exports {name} from {target}")
    return wrong


def long_modules(found: dict[str, Path]) -> list[str]:
    return [
        f"{module}: {n} lines"
        for module, path in found.items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    ]


@pytest.fixture(scope="module")
def package():
    found = modules(PACKAGE)
    return found, {m: imports(m, p, found) for m, p in found.items()}


def test_every_module_is_in_a_layer(package):
    found, _ = package
    for module in found:
        if "." in module:
            layer(module)


def test_imports_go_from_a_later_layer_to_an_earlier_one(package):
    _, edges = package
    assert upward_imports(edges) == []


def test_no_import_circles(package):
    _, edges = package
    assert circles(edges) == []


def test_no_private_name_crosses_a_module(package):
    _, edges = package
    assert private_imports(edges) == []


def test_every_public_name_has_one_home(package):
    found, edges = package
    assert re_exports(found, edges) == []


def test_no_module_is_over_500_lines(package):
    found, _ = package
    assert long_modules(found) == []


def _write(root: Path, files: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    found = modules(root / "ragbook")
    return found, {m: imports(m, p, found) for m, p in found.items()}


def test_the_checks_fail_on_a_package_that_breaks_the_rules(tmp_path):
    found, edges = _write(
        tmp_path,
        {
            "ragbook/__init__.py": "",
            "ragbook/validate.py": "",
            "ragbook/corpus/__init__.py": "",
            # an earlier layer importing a later one, inside a function
            "ragbook/corpus/documents.py": (
                "def f():\n    from ..system.late import answer\n"
            ),
            "ragbook/system/__init__.py": "",
            "ragbook/system/pipeline.py": (
                "from .store import Store\nfrom ..corpus.documents import _private\n"
                "__all__ = ['answer', 'Store']\ndef answer(): pass\n"
            ),
            "ragbook/system/store.py": "from . import pipeline\nclass Store: pass\n",
            "ragbook/system/late.py": "def answer(): pass\n",
            "ragbook/postgres/__init__.py": "",
            "ragbook/postgres/long.py": "x = 1\n" * (MAX_LINES + 1),
        },
    )
    assert upward_imports(edges) == [
        "ragbook.corpus.documents imports ragbook.system.late, a later layer"
    ]
    assert circles(edges) == [["ragbook.system.pipeline", "ragbook.system.store"]]
    assert private_imports(edges) == [
        "ragbook.system.pipeline imports _private from ragbook.corpus.documents"
    ]
    assert re_exports(found, edges) == [
        "ragbook.system.pipeline re-exports Store from ragbook.system.store"
    ]
    assert long_modules(found) == [f"ragbook.postgres.long: {MAX_LINES + 1} lines"]
