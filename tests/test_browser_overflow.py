"""tools/browser_check.py fails when more than 2 % of the <pre> blocks scroll sideways,
and names every one of them."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("playwright")
SPEC = importlib.util.spec_from_file_location(
    "browser_check",
    Path(__file__).resolve().parent.parent / "tools" / "browser_check.py",
)
browser_check = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(browser_check)


def block(section="exact-search", kind="output", chars=120):
    return {"section": section, "kind": kind, "solution": False, "missing_px": 250,
            "longest_chars": chars, "longest": "x" * chars}  # fmt: skip


def pages(wide_per_page, blocks_per_page=50):
    return {
        f"chapters/{n:02}.html": {
            "blocks": blocks_per_page,
            "overflowing": wide,
            "wide": [block() for _ in range(wide)],
        }
        for n, wide in enumerate(wide_per_page, start=1)
    }


def test_at_most_two_percent_passes():
    report, problems = browser_check.overflow_report(pages([1, 1]), 0.02)  # 2 of 100
    assert problems == [] and report["total"] == {
        "blocks": 100,
        "overflowing": 2,
        "share": 0.02,
    }


def test_more_than_two_percent_fails_and_names_every_block():
    report, problems = browser_check.overflow_report(pages([2, 1]), 0.02)  # 3 of 100
    assert report["total"]["share"] == 0.03
    assert problems[0].startswith("3 of 100 <pre> blocks (3.0%) scroll sideways")
    assert len(problems) == 1 + 3
    assert problems[1] == (
        "chapters/01.html: #exact-search output lacks 250 px, longest line 120 "
        f"characters: {'x' * 60!r}"
    )
    assert problems[3].startswith("chapters/02.html: #exact-search output")


def test_the_limit_is_a_share():
    with pytest.raises(ValueError, match="share from 0 to 1"):
        browser_check.overflow_report(pages([0]), 2)
    assert browser_check.MAX_OVERFLOW_SHARE == 0.02
