"""Listings of ragbook's own code for the chapters."""

import inspect

import pytest

from ragbook import sampling, text
from ragbook.show import show_source
from ragbook.text import analyze


def test_listing_is_the_live_source_with_its_module_path():
    listing = show_source(analyze)
    assert listing.origin == "ragbook/text.py"
    assert listing.source == inspect.getsource(analyze)
    markdown = listing._repr_markdown_()
    assert markdown.startswith("```python\ndef analyze(")
    assert "ragbook/text.py" in markdown
    assert show_source(text).origin == "ragbook/text.py"
    assert show_source(sampling.softmax).source.startswith("def softmax(")


def test_only_ragbook_code_is_shown():
    with pytest.raises(ValueError, match="ragbook's own code"):
        show_source(inspect.getsource)
    with pytest.raises(ValueError, match="ragbook's own code"):
        show_source(len)
