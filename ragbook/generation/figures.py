"""Figures read from text (chapter 15): a quantity with its unit in one unit for its
kind (km, days, kg, °C, km/s), a year, a share in percent, a count; and when two
figures agree.

A figure is read as a reader of the sentence would: ``6.4 billion years`` is 6.4e9 x
365.25 days, ``4.87 × 10^24 kg`` is 4.87e24 kg, ``40 K`` is -233.15 °C, and ``88``
agrees with ``87.969`` days (within :data:`TOLERANCE`), while two years agree only when
they are the same year. :mod:`~ragbook.generation.conflicts` compares the figures of
sentences that disagree.
"""

from __future__ import annotations

import re

from .. import validate
from .answer_types import (
    NUMBER_WORDS,
    POWER_OF_TEN,
    QUANTITIES,
    SPELLED_NUMBER,
    caret_powers,
)

__all__ = [
    "PERCENT",
    "TOLERANCE",
    "YEAR",
    "agree",
    "figure_value",
    "figures",
    "without_figures",
]

TOLERANCE = 0.02  # two figures within 2 % of each other agree

YEAR = re.compile(r"\b(1[0-9]{3}|2[0-9]{3})\b")
_FIGURE = re.compile(
    r"(?<![\w.])[-−]?(\d[\d,]*(?:\.\d+)?)(?!\.\d)|" + SPELLED_NUMBER.pattern, re.I
)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# a share in percent: "95 %", "about 95.3 percent", "0.13 per cent"
PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)", re.I)


def figure_value(text: str) -> float:
    """The value of a figure as matched: ``"-173"``, ``"6.4 billion years"``,
    ``"two hours"``, ``"4.87 × 10^24 kg"``."""
    text = text.strip().lower()
    sign = -1.0 if text[:1] in "-−" else 1.0
    digits = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    number = (
        float(digits.group().replace(",", ""))
        if digits
        else float(NUMBER_WORDS[SPELLED_NUMBER.search(text).group().lower()])
    )
    scale = re.search(r"thousand|million|billion|trillion", text)
    power = POWER_OF_TEN.search(caret_powers(text))
    if power:
        return sign * number * 10.0 ** int(power.group(1).replace("−", "-"))
    return sign * number * (_SCALE[scale.group()] if scale else 1.0)


# each unit's size in the unit a kind is compared in (km, days, kg, km/s); a unit not
# listed ("Earth radii") is left as written
_UNITS = {
    "length": [
        (r"km|kilomet(?:re|er)s?", 1.0),
        (r"cm|centimet(?:re|er)s?", 1e-5),
        (r"mm|millimet(?:re|er)s?", 1e-6),
        (r"m|met(?:re|er)s?", 1e-3),
        (r"miles?", 1.609344),
        (r"au|astronomical units?", 1.495978707e8),
        (r"light[- ]years?", 9.4607e12),
        (r"parsecs?", 3.0857e13),
    ],
    "duration": [
        (r"s|seconds?", 1 / 86400),
        (r"minutes?", 1 / 1440),
        (r"h|hours?", 1 / 24),
        (r"days?", 1.0),
        (r"sols?", 1.0275),
        (r"weeks?", 7.0),
        (r"months?", 30.44),
        (r"years?|yr", 365.25),
        (r"decades?", 3652.5),
        (r"century|centuries", 36525.0),
        (r"millennia", 365250.0),
    ],
    "mass": [
        (r"kg|kilograms?", 1.0),
        (r"g|grams?", 1e-3),
        (r"tonnes?|tons?", 1e3),
        (r"earth masses", 5.972e24),
        (r"jupiter masses", 1.898e27),
        (r"solar masses", 1.989e30),
    ],
}


def _in_unit(match: str, kind: str) -> float:
    """The value of a figure with its unit, in the unit its kind is compared in: km,
    days, kg, °C or km/s (``"3.8 cm per year"`` is 3.8e-5 / 31,557,600 km/s)."""
    value = figure_value(match)
    unit = re.sub(rf"^[-−\s\d.,]*(?:{SPELLED_NUMBER.pattern})?", "", match, flags=re.I)
    unit = POWER_OF_TEN.sub("", unit, count=1) if POWER_OF_TEN.match(unit) else unit
    unit = re.sub(r"^\s*(?:thousand|million|billion|trillion)", "", unit.lower())
    if kind == "temperature":
        if re.search(r"f|fahrenheit", unit):
            return (value - 32) * 5 / 9
        if not re.search(r"c", unit):  # kelvin
            return value - 273.15
        return value
    if kind == "speed":
        if unit.strip() == "mph":
            return value * 1.609344 / 3600
        if "/" in unit:
            distance, _, per = unit.partition("/")
            seconds = {"s": 1.0, "h": 3600.0}.get(per.strip(), 1.0)
        else:  # "km per hour", "metres a second"
            distance, _, per = unit.strip().partition(" ")
            seconds = _scale(per.split()[-1], "duration") * 86400 if per else 1.0
        return value * _scale(distance, "length") / seconds
    return value * _scale(unit, kind)


def _scale(unit: str, kind: str) -> float:
    """The size of ``unit`` in the unit ``kind`` is compared in; 1 for a unit not
    listed."""
    unit = unit.strip().lower()
    if kind == "duration":  # "Earth days" are days
        unit = re.sub(r"^(?:earth|martian|terrestrial) ", "", unit)
    for pattern, size in _UNITS.get(kind, []):
        if re.fullmatch(pattern, unit):
            return size
    return 1.0


def figures(text: str, kind: str) -> list[float]:
    """The figures of ``kind`` in ``text``: a length, duration, mass, temperature or
    speed with its unit, in one unit for its kind (km, days, kg, °C, km/s; scale words
    applied: ``6.4 billion years`` is 6.4e9 x 365.25 days), a year for a date, a share
    in percent for a ratio (``95 %`` is 95), and for a count every number or number
    word that is not a year and has no unit."""
    text = validate.text(text, "text")
    if kind == "ratio":
        return [float(m.group(1)) for m in PERCENT.finditer(text)]
    if kind in QUANTITIES:
        return [_in_unit(m.group(), kind) for m in QUANTITIES[kind].finditer(text)]
    if kind == "date":
        return [float(y) for y in YEAR.findall(text)]
    if kind == "count":
        rest = text
        for pattern in QUANTITIES.values():
            rest = pattern.sub(" ", rest)
        rest = YEAR.sub(" ", rest)
        return [figure_value(m.group()) for m in _FIGURE.finditer(rest)]
    return []


def without_figures(text: str, kind: str) -> str:
    """The text with its figures of ``kind``, units and all, taken out."""
    if kind == "ratio":
        return PERCENT.sub(" ", text)
    if kind in QUANTITIES:
        return QUANTITIES[kind].sub(" ", text)
    return _FIGURE.sub(" ", YEAR.sub(" ", text))


def agree(a: float, b: float, kind: str) -> bool:
    """Two figures of ``kind`` agree: equal years, or other figures within
    :data:`TOLERANCE` of each other (2 % of a year like 2001 would be 40 years)."""
    if kind == "date":
        return a == b
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b))
