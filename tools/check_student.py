"""Check the student edition against the instructor's: no solution text, every exercise,
graded checks grade.

usage: python tools/check_student.py [--book _build/html] [--student _build/student]

Needs both builds (`make build` and `make student`). The solutions are taken from the
instructor's site as rendered (every `div.solution`), independently of how
tools/student_edition.py finds them, and each of their lines is looked for in the
student site's text and in the student notebooks' cells and outputs. Every relative
path that a student notebook's code names (a quoted "../..." or "./..."), and that
exists in the project, must exist in the student tree at the same place, so that the
notebook runs there as it runs here; and each student notebook that names such a file
is executed in the tree's chapters/ folder (recorded generations replayed, never a new
one), so that it reads the tree's copies and runs without its solutions.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from pathlib import Path

import nbformat
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
# shorter solution lines ("return total", "print(x)") may occur anywhere in a chapter
MIN_LINE = 24
# the tag of the cells tools/student_edition.py puts in place of graded solutions
STARTER = "student-starter"


QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def normal(text: str) -> str:
    """One line of text with its white space collapsed and typographic quotes made
    plain."""
    return re.sub(r"\s+", " ", text.translate(QUOTES)).strip()


def page(path: Path) -> BeautifulSoup:
    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    article = soup.find("article") or soup
    for hidden in article.select(".headerlink"):
        hidden.decompose()
    return article


def solution_lines(article: BeautifulSoup) -> set[str]:
    """Distinctive lines of the page's solutions: long enough, and not found outside the
    solutions."""
    lines = set()
    for solution in article.select("div.solution"):
        body = solution.select_one("section") or solution
        lines |= {
            normal(line)
            for line in body.get_text("").split("\n")
            if len(normal(line)) >= MIN_LINE
        }
    copy = BeautifulSoup(str(article), "html.parser")
    for solution in copy.select("div.solution"):
        solution.decompose()
    outside = normal(copy.get_text(""))
    return {line for line in lines if line not in outside}


def notebook_text(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    parts = []
    for cell in notebook.cells:
        if STARTER in cell.get("metadata", {}).get("tags", []):
            continue  # the stub the student edition adds; grade_starters checks it
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.extend(str(v) for v in output.get("data", {}).values())
    return normal("\n".join(parts))


# a quoted relative path in a code cell: "../benchmarks/results/sparse.json", './x'
RELATIVE_PATH = re.compile(r"""(?P<quote>["'])(?P<path>\.\.?/[^"'\n]*)(?P=quote)""")


def missing_files(tree: Path, root: Path = ROOT) -> list[str]:
    """The relative paths named in the code of the student tree's notebooks that exist
    in the project (read from its chapters' folder, where a notebook runs) but not in
    the tree (read from the tree's chapters' folder), one line per chapter and path."""
    problems = []
    for notebook in sorted((tree / "chapters").glob("*.ipynb")):
        for cell in nbformat.read(notebook, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for match in RELATIVE_PATH.finditer(cell.source):
                path = match["path"]
                if (root / "chapters" / path).exists() and not (
                    tree / "chapters" / path
                ).exists():
                    problems.append(
                        f"{notebook.name} reads {path}, which the student tree lacks"
                    )
    return sorted(set(problems))


def files_read(notebook: Path) -> list[str]:
    """The project files a student notebook names by a relative path (see
    tools/student_edition.py's ``referenced_paths``)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from student_edition import referenced_paths

    return [str(p) for p in referenced_paths(nbformat.read(notebook, as_version=4))]


def run_in_tree(notebook: Path, timeout: int = 3600) -> str | None:
    """Execute a student notebook in its own folder with the recorded generations
    replayed (RAGBOOK_LLM_RECORDS=only: a missing record is an error, not a model call);
    the first error, or None."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    book = nbformat.read(notebook, as_version=4)
    saved = os.environ.get("RAGBOOK_LLM_RECORDS")
    os.environ["RAGBOOK_LLM_RECORDS"] = "only"
    try:
        NotebookClient(
            book,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(notebook.parent)}},
        ).execute()
    except CellExecutionError as error:
        return str(error).strip().splitlines()[-1][:300]
    finally:
        if saved is None:
            del os.environ["RAGBOOK_LLM_RECORDS"]
        else:
            os.environ["RAGBOOK_LLM_RECORDS"] = saved
    return None


def exercises(article: BeautifulSoup) -> dict[str, str]:
    return {
        div.get("id", ""): normal(div.get_text(""))
        for div in article.select("div.exercise")
    }


def grade_starters(path: Path) -> list[str]:
    """Run each starter cell of a student notebook (a stub and its check call): it must
    return a verdict."""
    from ragbook.exercises import Verdict

    problems = []
    for cell in nbformat.read(path, as_version=4).cells:
        if STARTER not in cell.get("metadata", {}).get("tags", []):
            continue
        *body, last = cell.source.rstrip().split("\n")
        namespace: dict = {}
        with contextlib.redirect_stdout(io.StringIO()):
            exec("\n".join(body), namespace)  # noqa: S102 - the book's own generated cell
            verdict = eval(last, namespace)  # noqa: S307
        if (
            not isinstance(verdict, Verdict)
            or verdict.total == 0
            or verdict.passed == verdict.total
        ):
            problems.append(
                f"{path.name}: starter cell {cell.id} did not grade its stub: "
                f"{verdict!r}"
            )
        elif not verdict.failures:
            problems.append(
                f"{path.name}: starter cell {cell.id} names no failing case"
            )
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--book", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--student", type=Path, default=ROOT / "_build" / "student")
    parser.add_argument(
        "--no-execute",
        action="store_true",
        help="do not execute the student notebooks that read project files",
    )
    args = parser.parse_args(argv)
    student_html, student_notebooks = args.student / "html", args.student / "notebooks"
    for folder, make in [
        (args.book, "make build"),
        (student_html, "make student"),
        (student_notebooks, "make student"),
    ]:
        if not folder.is_dir():
            raise SystemExit(f"{folder} is missing: run `{make}` first")
    problems: list[str] = []
    totals = {
        "pages": 0,
        "solutions": 0,
        "lines": 0,
        "exercises": 0,
        "starters": 0,
        "executed": 0,
    }
    for book_page in sorted(args.book.glob("chapters/*.html")) + [
        args.book / "intro.html"
    ]:
        name = book_page.relative_to(args.book)
        student_page = student_html / name
        if not student_page.is_file():
            problems.append(f"{name}: missing from the student site")
            continue
        book, student = page(book_page), page(student_page)
        totals["pages"] += 1
        totals["solutions"] += len(book.select("div.solution"))
        lines = solution_lines(book)
        totals["lines"] += len(lines)
        if student.select("div.solution, .solution"):
            problems.append(
                f"{name}: the student page still has "
                f"{len(student.select('div.solution'))} solutions"
            )
        for starter in student.select(f"div.tag_{STARTER}"):
            starter.decompose()
        student_text = normal(student.get_text(""))
        notebook = student_notebooks / name.with_suffix(".ipynb").name
        notebook_words = notebook_text(notebook) if notebook.is_file() else ""
        if name.parts[0] == "chapters" and not notebook.is_file():
            problems.append(f"{name}: no student notebook {notebook}")
        # the page's download button offers its source notebook
        download = student_html / "_sources" / name.with_suffix(".ipynb")
        download_words = notebook_text(download) if download.is_file() else ""
        if name.parts[0] == "chapters" and not download.is_file():
            problems.append(
                f"{name}: the student site has no downloadable notebook {download}"
            )
        for line in sorted(lines):
            if line in student_text:
                problems.append(
                    f"{name}: solution text in the student page: {line[:90]!r}"
                )
            if line in notebook_words:
                problems.append(
                    f"{notebook.name}: solution text in the student notebook: "
                    f"{line[:90]!r}"
                )
            if line in download_words:
                problems.append(
                    f"{download.name}: solution text in the site's downloadable "
                    f"notebook: {line[:90]!r}"
                )
        book_exercises, student_exercises = exercises(book), exercises(student)
        totals["exercises"] += len(book_exercises)
        for label, text in book_exercises.items():
            if label not in student_exercises:
                problems.append(
                    f"{name}: exercise {label} is missing from the student page"
                )
            elif student_exercises[label] != text:
                problems.append(
                    f"{name}: exercise {label} renders differently in the student page"
                )
    student_tree = args.student / "tree"
    if not (student_tree / "chapters").is_dir():
        problems.append(f"{student_tree / 'chapters'} is missing: run `make student`")
    else:
        problems += missing_files(student_tree)
        if not args.no_execute and not problems:
            for notebook in sorted((student_tree / "chapters").glob("*.ipynb")):
                read = files_read(notebook)
                if not read:
                    continue
                error = run_in_tree(notebook)
                totals["executed"] += 1
                print(
                    f"{notebook.name} (reads {', '.join(read)}) ran in the student "
                    f"tree: {'FAILED' if error else 'ok'}",
                    flush=True,
                )
                if error:
                    problems.append(
                        f"{notebook.name} fails in the student tree: {error}"
                    )
    for notebook in sorted(student_notebooks.glob("*.ipynb")):
        found = grade_starters(notebook)
        problems += found
        totals["starters"] += sum(
            STARTER in c.get("metadata", {}).get("tags", [])
            for c in nbformat.read(notebook, as_version=4).cells
        )
    print(
        f"student edition: {totals['pages']} pages, {totals['solutions']} "
        "solutions in the instructor's "
        f"edition ({totals['lines']} distinctive lines looked for), "
        f"{totals['exercises']} exercises, "
        f"{totals['starters']} graded starter cells"
    )
    if totals["solutions"] == 0 or totals["exercises"] == 0 or totals["starters"] == 0:
        problems.append(
            "nothing to compare: the instructor's build has no solutions or exercises"
        )
    for problem in problems:
        print("FAIL", problem)
    if problems:
        return 1
    print(
        "no solution text in the student site or notebooks; every exercise "
        "renders; every graded check grades; every file a chapter reads is in the "
        f"student tree, and the {totals['executed']} notebooks that read them run there"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
