"""Documents and sections read from Markdown: ranges, the lead, and clear errors."""

import pytest

from ragbook.corpus.documents import parse_markdown, read_folder, read_markdown

TEXT = (
    "# Mars\n\nThe red planet.\nIt has two moons.\n\n## Orbit\n\nIt takes 687 "
    "days.\n\n## Moons\nPhobos and Deimos.\n"
)


def test_title_lead_and_sections_with_ranges():
    doc = parse_markdown(TEXT, "mars")
    assert doc.id == "mars" and doc.title == "Mars"
    assert [s.heading for s in doc.sections] == ["", "Orbit", "Moons"]
    assert doc.lead.text == "The red planet.\nIt has two moons."
    assert [s.text for s in doc.sections[1:]] == [
        "It takes 687 days.",
        "Phobos and Deimos.",
    ]
    for s in doc.sections:
        assert TEXT[s.start : s.end] == s.text and s.doc_id == "mars"
    assert doc.section_at(TEXT.index("687")).heading == "Orbit"
    assert doc.section_at(0).is_lead


def test_no_title_means_the_id_is_the_title():
    doc = parse_markdown("Just text.\n\n## Part\nMore.", "note")
    assert doc.title == "note" and doc.lead.text == "Just text."


def test_headings_only_is_empty():
    with pytest.raises(ValueError, match="'x' is empty"):
        parse_markdown("# Title\n\n## A\n\n## B\n", "x")


def test_reading_files_and_folders(tmp_path):
    (tmp_path / "b.md").write_text(TEXT, encoding="utf-8")
    (tmp_path / "a.md").write_text("# A\n\nAlpha.", encoding="utf-8")
    (tmp_path / "skip.txt").write_text("not markdown", encoding="utf-8")
    docs = read_folder(tmp_path)
    assert [d.id for d in docs] == ["a", "b"]
    assert read_markdown(tmp_path / "b.md").sections[2].text == "Phobos and Deimos."


def test_unreadable_empty_and_wrongly_encoded_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read document"):
        read_markdown(tmp_path / "missing.md")
    (tmp_path / "empty.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(ValueError, match="is empty"):
        read_markdown(tmp_path / "empty.md")
    (tmp_path / "latin.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="not valid UTF-8"):
        read_markdown(tmp_path / "latin.md")
    with pytest.raises(ValueError, match="cannot read document"):
        read_markdown(tmp_path)  # a folder is not a file


def test_folder_errors(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        read_folder(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="holds no files matching"):
        read_folder(tmp_path)
