"""Listings of ragbook's own code for the chapters."""

import inspect

import pytest

from ragbook.generation import sampling
from ragbook.indexing import text
from ragbook.show import show_source
from ragbook.indexing.text import analyze


def test_listing_is_the_live_source_with_its_module_path():
    listing = show_source(analyze)
    assert listing.origin == "ragbook/indexing/text.py"
    assert listing.source == inspect.getsource(analyze)
    markdown = listing._repr_markdown_()
    assert markdown.startswith("```python\ndef analyze(")
    assert "ragbook/indexing/text.py" in markdown
    assert show_source(text).origin == "ragbook/indexing/text.py"
    assert show_source(sampling.softmax).source.startswith("def softmax(")


def test_only_ragbook_code_is_shown():
    with pytest.raises(ValueError, match="ragbook's own code"):
        show_source(inspect.getsource)
    with pytest.raises(ValueError, match="ragbook's own code"):
        show_source(len)


def test_wrap_breaks_long_lines_at_spaces_and_keeps_every_word():
    from ragbook.show import WIDTH, wrap

    text = "A: " + " ".join(f"word{i}" for i in range(60)) + "\nshort line\n"
    wrapped = wrap(text, indent="   ")
    assert all(len(line) <= WIDTH for line in wrapped.split("\n"))
    assert wrapped.split() == text.split()  # nothing cut, nothing reordered
    lines = wrapped.split("\n")
    assert lines[0].startswith("A: word0") and lines[1].startswith("   word")
    assert lines[-2:] == ["short line", ""]  # short lines and line breaks are kept
    assert wrap("  - " + "x" * 100).split() == [
        "-",
        "x" * 100,
    ]  # a long word stays whole
    assert wrap("a b c " * 10, width=20).split("\n")[0] == "a b c a b c a b c a"


def test_wrap_refuses_bad_arguments():
    from ragbook.show import wrap

    with pytest.raises(TypeError, match="wrap takes a str"):
        wrap(["text"])
    with pytest.raises(ValueError, match="width"):
        wrap("text", width=5)
    with pytest.raises(ValueError, match="indent"):
        wrap("text", indent=" " * 50)
