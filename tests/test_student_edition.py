"""tools/student_edition.py: what it removes from a notebook and what it keeps."""

import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest

_PATH = Path(__file__).resolve().parent.parent / "tools" / "student_edition.py"
_SPEC = importlib.util.spec_from_file_location("student_edition", _PATH)
student_edition = importlib.util.module_from_spec(_SPEC)
sys.modules["student_edition"] = (
    student_edition  # dataclasses look their module up there
)
_SPEC.loader.exec_module(student_edition)


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["jupytext"] = {"formats": "ipynb,md:myst"}
    for index, (kind, source) in enumerate(cells):
        cell = (
            nbformat.v4.new_markdown_cell(source)
            if kind == "md"
            else nbformat.v4.new_code_cell(source)
        )
        cell.id = f"c{index}"
        nb.cells.append(cell)
    return nb


def sources(nb):
    return [(cell.cell_type, cell.source) for cell in nb.cells]


def test_a_gated_solution_goes_with_its_code_cells_and_the_text_around_it_stays():
    nb = notebook(
        (
            "md",
            "Intro.\n\n```{exercise}\n:label: ex-a\n\nDo "
            "it.\n```\n\n```{solution-start} ex-a\n:class: "
            "dropdown\n```\n\nSecret reasoning.",
        ),
        ("code", "secret = 42\nprint(secret)"),
        (
            "md",
            "More secret "
            "text.\n\n```{solution-end}\n```\n\n```{exercise}\n:label: "
            "ex-b\n\nNext.\n```",
        ),
    )
    stripped, removed = student_edition.strip_solutions(nb)
    text = "\n".join(source for _, source in sources(stripped))
    assert "Secret" not in text and "secret" not in text and "solution" not in text
    assert "Intro." in text and ":label: ex-a" in text and ":label: ex-b" in text
    assert [r.label for r in removed] == ["ex-a"]
    assert [kind for kind, _ in sources(stripped)] == ["markdown", "markdown"]
    assert "formats" not in stripped.metadata["jupytext"]
    assert len(nb.cells) == 3  # the original is not modified


def test_a_solution_block_with_a_nested_fence_is_removed_whole():
    nb = notebook(
        (
            "md",
            "Before.\n\n````{solution} ex-a\n:class: dropdown\n\n```python\nx = "
            "1\n```\n\nStill secret.\n````\n\nAfter.",
        )
    )
    stripped, removed = student_edition.strip_solutions(nb)
    assert sources(stripped) == [("markdown", "Before.\n\n\nAfter.")]
    assert len(removed) == 1


def test_colon_fences_count_too():
    nb = notebook(
        (
            "md",
            "A.\n\n:::{solution-start} "
            "ex-a\n:::\n\nsecret\n\n:::{solution-end}\n:::\nB.",
        )
    )
    stripped, _ = student_edition.strip_solutions(nb)
    assert "secret" not in stripped.cells[0].source and "B." in stripped.cells[0].source


def test_a_graded_solution_leaves_a_starter_cell_that_grades():
    nb = notebook(
        ("md", "```{solution-start} ex-softmax-temperature\n:class: dropdown\n```"),
        (
            "code",
            "def softmax_t(logits, temperature):\n    return "
            '[1.0]\n\n\ncheck("softmax-temperature", softmax_t)',
        ),
        ("md", "```{solution-end}\n```"),
    )
    stripped, _ = student_edition.strip_solutions(nb)
    (starter,) = [cell for cell in stripped.cells if cell.cell_type == "code"]
    assert "student-starter" in starter.metadata["tags"]
    assert "return [1.0]" not in starter.source
    assert "def softmax_t(logits, temperature):" in starter.source
    namespace = {}
    *body, last = starter.source.split("\n")
    exec("\n".join(body), namespace)
    verdict = eval(last, namespace)
    assert verdict.total > 0 and verdict.passed < verdict.total and verdict.failures


def test_an_unclosed_solution_is_an_error():
    nb = notebook(("md", "```{solution-start} ex-a\n```\n\nno end"))
    with pytest.raises(ValueError, match="ex-a"):
        student_edition.strip_solutions(nb)


_CHECK_PATH = _PATH.parent / "check_student.py"
_CHECK_SPEC = importlib.util.spec_from_file_location("check_student", _CHECK_PATH)
check_student = importlib.util.module_from_spec(_CHECK_SPEC)
_CHECK_SPEC.loader.exec_module(check_student)


def test_the_files_a_chapter_reads_by_a_relative_path_are_found():
    nb = notebook(
        (
            "code",
            'import json\nbench = json.loads(Path("../pyproject.toml").read_text())',
        ),
        (
            "code",
            '%matplotlib inline\nsys.path.insert(0, "../tools")\nname = "nothing"',
        ),
        ("code", 'Path("../no/such/file.json").write_text("{}")'),
        ("md", 'Text that names "../requirements.txt" is not code.'),
    )
    paths = student_edition.referenced_paths(nb)
    assert [str(path) for path in paths] == ["pyproject.toml", "tools"]


def test_every_file_a_chapter_reads_is_in_the_student_tree(tmp_path):
    student_edition.write_edition(tmp_path)
    tree = tmp_path / "tree"
    assert (tree / "benchmarks" / "results" / "sparse.json").is_file()
    assert check_student.missing_files(tree) == []
    # the check fails when a file is missing
    (tree / "benchmarks" / "results" / "sparse.json").unlink()
    missing = check_student.missing_files(tree)
    assert missing and all("sparse.json" in line for line in missing)


def test_a_notebook_run_in_the_student_tree_reports_its_error(tmp_path):
    # a notebook that reads a file by a relative path runs in its own folder: it finds
    # a file beside it, and an absent one is reported with the error's last line
    (tmp_path / "chapters").mkdir()
    (tmp_path / "data.txt").write_text("42", encoding="utf-8")
    reads = notebook(("code", 'value = int(open("../data.txt").read())\nprint(value)'))
    fails = notebook(("code", 'open("../absent.txt").read()'))
    nbformat.write(reads, tmp_path / "chapters" / "reads.ipynb")
    nbformat.write(fails, tmp_path / "chapters" / "fails.ipynb")
    assert check_student.run_in_tree(tmp_path / "chapters" / "reads.ipynb") is None
    error = check_student.run_in_tree(tmp_path / "chapters" / "fails.ipynb")
    assert error is not None and "absent.txt" in error
