"""Glued numbers print the same on every machine: rounded before they are stored, never
quoted past that.

The chapters are scanned as sources (no glue bypasses ragbook.show) and as stored
notebooks (every glued float was rounded to the decimals it was stored with, and no
sentence formats it with more decimals than that).
"""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from ragbook import show
from ragbook.show import glue_number, glue_text, ranked, rounded

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "chapters").glob("*.md"))
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
REFERENCE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`]+)`")


def test_rounded_hand_values():
    assert rounded(377.0000000000002, 4) == 377.0
    assert rounded(377.00000000000006, 0) == 377.0
    assert rounded(0.5980802073081335, 4) == 0.5981
    assert rounded(0.598080206712087, 4) == 0.5981
    assert rounded(2.675, 1) == 2.7
    assert repr(rounded(-0.00004, 4)) == "0.0"  # no "-0.0000" in the prose
    assert (
        rounded(np.float32(0.25), 2) == 0.25
        and type(rounded(np.float32(0.25), 2)) is float
    )
    assert rounded(np.int64(29532)) == 29532 and type(rounded(np.int64(29532))) is int
    assert rounded(7, 3) == 7 and type(rounded(7, 3)) is int


@pytest.mark.parametrize(
    "value, decimals, error, message",
    [
        (0.5, None, TypeError, "must be rounded before it is glued"),
        (float("nan"), 3, ValueError, "must be finite"),
        (float("inf"), 3, ValueError, "must be finite"),
        (True, 2, TypeError, "boolean"),
        (np.bool_(False), 2, TypeError, "boolean"),
        ("0.5", 2, TypeError, "got str '0.5'"),
        (None, 2, TypeError, "got NoneType"),
        (0.5, -1, ValueError, "from 0 to 12"),
        (0.5, 13, ValueError, "from 0 to 12"),
        (0.5, 2.0, TypeError, "decimals must be an int"),
        (0.5, True, TypeError, "decimals must be an int"),
    ],
)
def test_rounded_refuses(value, decimals, error, message):
    with pytest.raises(error, match=re.escape(message)):
        rounded(value, decimals)


def _captured(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(
        IPython.display,
        "display",
        lambda data, raw, metadata: shown.append((data, metadata)),
    )
    return shown


def test_glue_number_stores_the_rounded_repr_and_its_decimals(monkeypatch):
    shown = _captured(monkeypatch)
    glue_number("share", np.float64(0.61903), 3)
    glue_number("count", np.int64(42), 2)
    glue_text("names", "Venus, Mars")
    assert shown == [
        (
            {show.GLUE_PREFIX + "text/plain": "0.619"},
            {
                "scrapbook": {"name": "share", "mime_prefix": show.GLUE_PREFIX},
                "ragbook": {"decimals": 3},
            },
        ),
        (
            {show.GLUE_PREFIX + "text/plain": "42"},
            {
                "scrapbook": {"name": "count", "mime_prefix": show.GLUE_PREFIX},
                "ragbook": {"decimals": None},
            },
        ),
        (
            {show.GLUE_PREFIX + "text/plain": "'Venus, Mars'"},
            {
                "scrapbook": {"name": "names", "mime_prefix": show.GLUE_PREFIX},
                "ragbook": {"decimals": None},
            },
        ),
    ]


def test_glue_figure_stores_a_png_and_a_name_as_text(monkeypatch):
    import base64

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = _captured(monkeypatch)
    figure, axes = plt.subplots(figsize=(1, 1))
    axes.bar([0, 1], [0.5, 0.25])
    show.glue_figure("bars", figure)
    plt.close(figure)
    [(bundle, metadata)] = shown
    png = base64.b64decode(bundle[show.GLUE_PREFIX + "image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert bundle[show.GLUE_PREFIX + "text/plain"] == "'figure bars'"
    assert metadata["scrapbook"]["name"] == "bars"
    with pytest.raises(ValueError, match="Python identifier"):
        show.glue_figure("two words", figure)


def test_glue_refuses_bad_names_and_numbers_as_text(monkeypatch):
    _captured(monkeypatch)
    with pytest.raises(TypeError, match="glue_text glues a str"):
        glue_text("x", 0.5)
    with pytest.raises(ValueError, match="Python identifier"):
        glue_number("two words", 1)
    with pytest.raises(ValueError, match="Python identifier"):
        glue_text(3, "x")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_chapters_glue_only_through_ragbook_show(source):
    code = source.read_text()
    assert "from myst_nb import glue" not in code
    bypass = [
        line for line in code.splitlines() if re.search(r"(?<![\w.])glue\(", line)
    ]
    assert bypass == [], f"{source.name} calls myst-nb's glue directly: {bypass}"


def _glued(notebook: Path) -> dict[str, tuple[str, object]]:
    """name -> (stored text, decimals) for every value glued in a stored notebook."""
    glued = {}
    for cell in json.loads(notebook.read_text())["cells"]:
        for output in cell.get("outputs", []):
            metadata = output.get("metadata", {})
            if "scrapbook" in metadata:
                name = metadata["scrapbook"]["name"]
                assert "ragbook" in metadata, (
                    f"{notebook.name}: {name!r} was not glued through ragbook.show"
                )
                glued[name] = (
                    output["data"][show.GLUE_PREFIX + "text/plain"],
                    metadata["ragbook"]["decimals"],
                )
    return glued


def _needed(spec: str) -> int | None:
    """Decimals a format spec shows: '.3f' and '+.3f' and ',.1f' 3 or 1, '.1%' 3, ',' 0;
    None for no spec."""
    if not spec:
        return None
    if match := re.fullmatch(r"[+]?,?\.(\d+)f", spec):
        return int(match.group(1))
    if match := re.fullmatch(r"\.(\d+)%", spec):
        return int(match.group(1)) + 2
    if spec == ",":
        return 0
    if match := re.fullmatch(r"\.(\d+)e", spec):
        return -1 - int(
            match.group(1)
        )  # significant digits, checked against the value below
    raise AssertionError(f"format spec {spec!r} is not one this test knows")


def test_every_glued_float_is_rounded_and_no_sentence_shows_more_decimals():
    glued = {notebook.stem: _glued(notebook) for notebook in NOTEBOOKS}
    assert sum(map(len, glued.values())) > 400
    for stem, values in glued.items():
        for name, (text, decimals) in values.items():
            if text[:1] in "'\"":
                continue
            if re.fullmatch(r"-?\d+", text):
                assert decimals is None
                continue
            value = float(text)
            assert decimals is not None, (
                f"{stem}: {name} = {text} is a float stored without rounding"
            )
            assert value == round(value, decimals), (
                f"{stem}: {name} = {text} has more than {decimals} decimals"
            )
    checked = 0
    for page in SOURCES + [ROOT / "intro.md"]:
        for reference in REFERENCE.findall(page.read_text()):
            stem = page.stem
            if "::" in reference:
                path, reference = reference.split("::", 1)
                stem = Path(path).stem
            name, _, spec = reference.partition(":")
            text, decimals = glued[stem][name]
            needed = _needed(spec)
            if needed is None or text[:1] in "'\"" or decimals is None:
                continue
            # '.Ne': the stored decimals must keep N + 1 significant digits of the value
            if needed < 0:
                significant = -needed
                value = abs(float(text))
                needed = significant - 1 - math.floor(math.log10(value)) if value else 0
            assert decimals >= needed, (
                f"{page.name} shows {name} as {spec!r} ({needed} decimals) "
                f"but it was glued rounded to {decimals}"
            )
            checked += 1
    assert checked > 300


def test_ranked_orders_near_ties_by_name():
    # 0.7712 and 0.77118 print as 0.77 both: the name decides, whichever has the larger
    # last bits
    pairs = [
        ("marineris", 0.77118),
        ("4000", 0.7712),
        ("olympus", 0.8),
        ("tharsis", 0.61),
    ]
    assert ranked(pairs, 2) == [
        ("olympus", 0.8),
        ("4000", 0.77),
        ("marineris", 0.77),
        ("tharsis", 0.61),
    ]
    swapped = [
        ("marineris", 0.7712),
        ("4000", 0.77118),
        ("olympus", 0.8),
        ("tharsis", 0.61),
    ]
    assert ranked(swapped, 2, n=3) == [
        ("olympus", 0.8),
        ("4000", 0.77),
        ("marineris", 0.77),
    ]
    with pytest.raises(ValueError, match="n must be a whole number"):
        ranked(pairs, 2, n=-1)
