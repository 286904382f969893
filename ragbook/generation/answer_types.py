"""What kind of answer a question asks for, and what kind an answer is (chapter 15).

Classic factoid question answering classifies the question before it looks for an
answer: "How deep ...?" asks for a length, "When ...?" for a date, "Who ...?" for a
name. An answer of another kind (an age for a depth, a mass for a count) is a
neighbouring fact, however well it is cited. :func:`expected_kinds` reads the kinds a
question accepts from its opening words and the quantity it names;
:func:`answer_kinds` reads the kinds an answer's words are from their units, years and
names; :func:`kind_mismatch` says why the two disagree, or returns None.

The rules are patterns on words, so they fail where patterns fail: a question whose
kind is in a word they do not list ("What is Mars's sidereal day?") accepts any
answer, "How much" accepts any quantity, "How big" a length or a mass, and an answer
whose unit is spelled unusually has no kind and passes. A rule that cannot tell says
nothing: it refuses only on a clear disagreement.
"""

from __future__ import annotations

import re
from typing import Sequence

from .. import validate

__all__ = [
    "KINDS",
    "NUMBER_WORDS",
    "POWER_OF_TEN",
    "SPELLED_NUMBER",
    "QUANTITIES",
    "expected_kinds",
    "answer_kinds",
    "asked_event",
    "caret_powers",
    "count_mismatch",
    "dimension_mismatch",
    "event_mismatch",
    "kind_mismatch",
    "names_in",
]

KINDS = (
    "length",
    "angle",
    "duration",
    "mass",
    "temperature",
    "speed",
    "pressure",
    "count",
    "date",
    "name",
    "yes/no",
    "ratio",
)

# numbers spelled out, up to twenty, with their values: "two moons" holds 2
NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
SPELLED_NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.I)

_NUMBER = r"(?:\d[\d,]*(?:\.\d+)?|" + SPELLED_NUMBER.pattern + r")"
# a power of ten after a number: "4.87 × 10^24 kg", "9.38 × 10²⁰ kg"
POWER_OF_TEN = re.compile(r"\s*[×x]\s*10(?:\^([-−]?\d+)|([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))")
_SCALE = r"(?:\s+(?:thousand|million|billion|trillion)|" + POWER_OF_TEN.pattern + r")?"
_SUPERSCRIPTS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def caret_powers(text: str) -> str:
    """``text`` with each power of ten written with a caret: ``10²⁰`` as ``10^20``,
    so that its exponent reads as a number."""
    return re.sub(
        r"(?<![\d.,])10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)",
        lambda power: "10^" + power.group(1).translate(_SUPERSCRIPTS),
        text,
    )


_UNITS = {
    "length": r"km|kilomet(?:re|er)s?|met(?:re|er)s?|m|cm|mm|miles?|au"
    r"|astronomical units?"
    r"|light[- ]years?|parsecs?|(?:earth |solar |jupiter )?radii",
    "duration": r"(?:earth |martian |terrestrial )?(?:seconds?|minutes?|hours?|h|days?"
    r"|weeks?|months?|years?|yr|decades?|centuries|century|millennia|sols?)",
    "mass": r"kg|kilograms?|grams?|g|tonnes?|tons?|(?:earth|jupiter|solar) masses",
    "temperature": r"°\s?[cfk]|degrees (?:celsius|fahrenheit)|kelvin|k",
    "angle": r"°(?!\s?[cfk]\b)|degrees?(?! (?:celsius|fahrenheit))"
    r"|arcseconds?|arcminutes?",
    "pressure": r"(?:kilo|mega|giga|hecto)?pascals?|[kMG]?Pa|(?:milli|micro)?bars?|atm"
    r"|atmospheres",
    "speed": r"km/s|m/s|km/h|mph"
    r"|(?:kilomet(?:re|er)s?|met(?:re|er)s?|km|m|cm|mm|miles?)"
    r"\s+(?:per|an|a|each|every)\s+(?:second|hour|day|year|century)",
}
# a figure with its unit, for each kind of quantity: "4,000 km", "3.9 billion years"
QUANTITIES = {
    kind: re.compile(rf"[-−]?{_NUMBER}{_SCALE}\s*(?:{unit})(?![\w/])", re.I)
    for kind, unit in _UNITS.items()
}
_MONTH = (
    r"january|february|march|april|may|june|july|august|september|october|november"
    r"|december"
)
_DATE = re.compile(
    rf"\b(?:1[0-9]{{3}}|2[0-9]{{3}})s?\b|\b(?:{_MONTH})\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)? century\b"
    # a time of day: "8 am", "7.30 p.m.", "14:00"
    r"|\b\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b\d{1,2}:\d{2}\b",
    re.I,
)
# a time given as a duration back from now: "3.9 billion years ago" dates an event
_AGO = re.compile(rf"{_NUMBER}{_SCALE}\s*(?:{_UNITS['duration']})\s+ago\b", re.I)
_BARE_NUMBER = re.compile(rf"(?<![\w.]){_NUMBER}(?![\w.]|\.\d)", re.I)
_NAME = re.compile(r"\b[A-Z][\w'’-]*[a-z]")
_YES_NO = re.compile(r"^\s*(?:yes|no)\b", re.I)
# a figure given relative to another: "10.7 %", "2.3 times", "one-sixth"
_RATIO = re.compile(
    rf"{_NUMBER}\s*(?:%|percent\b|per cent\b|times\b)"
    r"|\b(?:half|one[- ](?:third|quarter|fifth|sixth|tenth)|a (?:third|quarter|fifth"
    r"|sixth|tenth))\b",
    re.I,
)

# the question's opening words and the kinds they accept, then (for a question whose
# opening does not decide: "What is ...?") a quantity it names; the first rule that
# matches decides
_ASKS = [
    (
        r"^how (?:many|much) (?:years|days|hours|minutes|months|decades)\b",
        {"duration", "count"},
    ),
    (r"^how many\b", {"count"}),
    (r"^how old\b|^how long ago\b", {"duration", "date"}),
    (
        r"^how long (?:does|did|do|will|would|is a (?:day|year)"
        r"|are the (?:days|years))\b",
        {"duration"},
    ),
    (r"^how long\b", {"duration", "length"}),
    (r"^how (?:hot|cold|warm|cool)\b", {"temperature"}),
    (r"^how fast\b|^how quickly\b", {"speed"}),
    (r"^how (?:heavy|massive)\b|^how much (?:does|did|do) .* weigh\b", {"mass"}),
    (r"^how much\b", {"mass", "length", "duration", "count", "speed", "temperature"}),
    (r"^how far (?:north|south|east|west)\b", {"angle", "length"}),
    (
        r"^how far over\b|^how (?:steeply|much) .* (?:tilted|tipped|inclined)\b",
        {"angle"},
    ),
    (
        r"^how (?:far|deep|wide|tall|high|thick|close|near)\b|^how big across\b",
        {"length"},
    ),
    (r"^(?:when|(?:in |on )?(?:what|which) (?:years?|month|date))\b", {"date"}),
    (r"^(?:who|whom|whose)\b", {"name"}),
    (
        r"^(?:what|which) (?:spacecraft|probe|mission|astronomer|scientist|person"
        r"|orbiter|lander|rover|telescope|moon|planet|crater|observatory|agency"
        r"|instrument|camera|spectrometer|radar|team|university|institution)\b"
        r"|^what (?:is|was|are|were) the names? of\b",
        {"name"},
    ),
    (r"^(?:is|are|was|were|does|do|did|can|could|has|have|will)\b", {"yes/no"}),
    # a share: "What percentage of the air ...?", answered "95 %", "a third", "0.76"
    (r"^(?:what|which) (?:percentage|percent|share|fraction|proportion)\b", {"ratio"}),
    (
        r"^(?:at|to|from|in) (?:about |roughly )?(?:what|which) (?:altitude|height"
        r"|depth|distance)\b",
        {"length"},
    ),
    (r"^how (?:big|large|small) (?:is|are|was|were)\b", {"length", "mass"}),
    (r"^(?:how|why|where)\b", set()),  # an opening that decides nothing
    (r"\b(?:rotation|orbital) period\b", {"duration"}),
    (r"\btemperatures?\b", {"temperature"}),
    (r"\bspeeds?\b|\bvelocity\b", {"speed"}),
    # the pressure asked for, not a pressure level that places another quantity
    (r"^what (?:is|was|are|were) (?:the )?(?:[\w-]+ ){0,3}pressures?\b", {"pressure"}),
    (r"\bweigh(?:s|ed)?\b|\bmass of\b", {"mass"}),
    (r"\b(?:tilt|inclination|obliquity)\b", {"angle"}),
    (r"\b(?:diameter|radius|depth|height|distance|width|altitude)\b", {"length"}),
]
_ASK_RULES = [(re.compile(pattern, re.I), kinds) for pattern, kinds in _ASKS]


def expected_kinds(question: str) -> frozenset[str]:
    """The kinds of answer the question accepts (:data:`KINDS`), or an empty set when
    the rules cannot tell: ``How deep is ...?`` accepts a length, ``How long does ...
    take?`` a duration, ``How long is ...?`` either, ``Who ...?`` a name."""
    question = validate.text(question, "question").strip()
    for pattern, kinds in _ASK_RULES:
        if pattern.search(question):
            return frozenset(kinds)
    return frozenset()


def answer_kinds(words: str) -> frozenset[str]:
    """The kinds an answer's words are: each quantity with its unit (``4,000 km`` a
    length, ``3.9 billion years`` a duration, ``427 °C`` a temperature), a year or a
    month, or a time ago (``3.9 billion years ago``: a date), a bare number or a
    number word (a count), a capitalised word that is not a number or a month (a name),
    yes and no, a share or a multiple (``10.7 %``, ``2.3 times``, ``one-sixth``: a
    ratio). Empty when none is recognised."""
    words = validate.text(words, "words")
    kinds = {kind for kind, pattern in QUANTITIES.items() if pattern.search(words)}
    if _DATE.search(words) or _AGO.search(words):
        kinds.add("date")
    rest = words
    for pattern in QUANTITIES.values():
        rest = pattern.sub(" ", rest)
    rest = _DATE.sub(" ", rest)
    if _BARE_NUMBER.search(rest):
        kinds.add("count")
    if _YES_NO.match(words):
        kinds.add("yes/no")
    if _RATIO.search(words):
        kinds.add("ratio")
    if any(
        name.lower() not in NUMBER_WORDS
        for name in _NAME.findall(_DATE.sub(" ", words))
    ):
        kinds.add("name")
    return frozenset(kinds)


# the dimensions of a length: what a question asks ("How wide ...?") and what a
# sentence says of a figure ("8 km high", "rises about 8 km"); an extent is one
# dimension whether along or across
_DIMENSIONS = {
    "an extent": (
        r"^how (?:wide|broad|long is the|big across)\b|^how far\b.*\bacross\b"
        r"|\b(?:width|diameter|length)\b",
        r"wide|width|across|diameter|broad|breadth|long|length",
    ),
    "a depth": (r"^how (?:deep|far (?:down|below|beneath))\b|\bdepth\b", r"deep|depth"),
    "a height": (
        r"^how (?:high|tall|far (?:up|above))\b|\bheight\b",
        r"high|height|tall|rises?|rising",
    ),
    "a thickness": (r"^how thick\b|\bthickness\b", r"thick|thickness"),
    "a distance": (
        r"^how (?:far\b(?! (?:down|below|beneath|up|above)\b)(?!.*\b(?:across|over)\b)"
        r"|close|near)\b|\bdistance\b",
        r"distances?|distant|far|away|apart|orbits?|orbiting|semi-major|close(?:st)?"
        r"|near(?:est)?",
    ),
}


def _dimension_asked(question: str) -> str | None:
    asked = [
        name
        for name, (ask, _) in _DIMENSIONS.items()
        if re.search(ask, question.strip(), re.I)
    ]
    return asked[0] if len(asked) == 1 else None


def _dimensions_said(text: str, number: str) -> set[str]:
    """The dimensions that words within five of ``number`` in ``text`` name."""
    words = re.findall(r"[\w.,%-]+", text)
    said = set()
    for i, word in enumerate(words):
        if number == word.strip(".,").replace(",", ""):
            window = " ".join(words[max(0, i - 5) : i + 6]).lower()
            said |= {
                name
                for name, (_, says) in _DIMENSIONS.items()
                if re.search(rf"\b(?:{says})\b", window)
            }
    return said


def dimension_mismatch(
    question: str, words: str, evidence: Sequence[str]
) -> str | None:
    """Why a length is not the one the question asks for: the question asks for an
    extent, a depth, a height, a thickness or a distance ("How wide ...?", "How far
    ...?"), and the answer's words or the evidence sentences name only other
    dimensions beside the answer's lengths ("8 km high", "rises about 8 km" for a
    width; "10 km across" for how far); None when they agree or say nothing."""
    asked = _dimension_asked(validate.text(question, "question"))
    if asked is None:
        return None
    said = set()
    lengths = " ".join(
        m.group() for m in QUANTITIES["length"].finditer(validate.text(words, "words"))
    )
    for number in re.findall(r"\d[\d,]*(?:\.\d+)?", lengths):
        number = number.replace(",", "")
        for text in [words, *evidence]:
            said |= _dimensions_said(text, number)
    if not said or asked in said:
        return None
    return f"the answer is {' and '.join(sorted(said))}; the question asks for {asked}"


_VERBS = (
    "does|do|did|is|are|was|were|has|have|had|can|could|will|would|orbit|orbits"
    "|make|made|circle|circles"
)
# "How many moons ...?": the words of the thing counted, up to the verb; not a unit,
# which a quantity's kind checks
_HOW_MANY = re.compile(r"^how many ((?:[\w'’-]+ ){1,3}?)(?:" + _VERBS + r")\b", re.I)
_NOT_COUNTED = set(
    "times more fewer years days hours minutes seconds months weeks kilometres "
    "kilometers km miles metres meters degrees kelvin percent".split()
)
_SAME_THING = {"satellite": "moon"}  # "natural satellites" are moons


def _plural_stem(word: str) -> str:
    word = re.sub(r"['’]s$", "", word.lower())  # "Earth's" is Earth
    if re.search(r"(?:s|x|z|ch|sh)es$", word):
        word = word[:-2]  # "gases", "boxes"
    elif re.search(r"\w{3}ies$", word):
        word = word[:-3] + "y"  # "bodies"
    elif re.search(r"\w{3}ae$", word):
        word = word[:-1]  # "coronae"
    elif re.search(r"\w{3}[^s]s$", word):
        word = word[:-1]  # "moons", not "gas"
    return _SAME_THING.get(word, word)


def count_mismatch(question: str, words: str, evidence: Sequence[str]) -> str | None:
    """Why a count is not a count of what the question asks about: "How many coronae
    ...?" answered "2" where the evidence's two counts balloons. The answer's number
    must stand within four words of a word of the thing counted in some evidence
    sentence ("Two small, irregular moons", "raising the tally of moons to 95"); None
    when it does, when the question counts a unit ("How many times ...?", "How many
    years ...?") or the answer gives no number. A thing counted in other words
    ("marsquakes" for "quakes") is refused too: the rule reads words, not meanings,
    with one exception, satellites for moons."""
    asked = _HOW_MANY.search(validate.text(question, "question").strip())
    if not asked:
        return None
    thing = asked.group(1).lower().split()
    if set(thing) & _NOT_COUNTED:
        return None
    counted = set(map(_plural_stem, thing))
    numbers = {
        n.replace(",", "")
        for n in re.findall(r"\d[\d,]*", validate.text(words, "words"))
    }
    numbers |= {str(NUMBER_WORDS[w.lower()]) for w in SPELLED_NUMBER.findall(words)}
    if not numbers:
        return None
    for text in evidence:
        tokens = re.findall(r"\d[\d,]*\d|[\w'’-]+", text)
        for i, token in enumerate(tokens):
            value = str(NUMBER_WORDS.get(token.lower(), token.replace(",", "")))
            window = tokens[max(0, i - 4) : i + 5]
            if value in numbers and counted & set(map(_plural_stem, window)):
                return None
    return f"the evidence does not count {' '.join(thing)} with that number"


# the events a "when" or "who" question asks about: the words that name each in a
# question, then those that name it in a sentence ("found" is a discovery, "found to
# have" is not)
_EVENTS = {
    "a discovery": (
        r"discover(?:ed|s|y)?|found(?! to| in| on| at)|spotted|identified|detected",
        r"discover\w*|found|spotted|identified|detected|first (?:seen|observed|noticed)"
        r"|observ\w+|photographed",
    ),
    "a launch": (
        r"launch(?:ed|es)?|lift(?:ed)? off",
        r"launch\w*|lift(?:ed|s)? off|left earth",
    ),
    "a landing": (
        r"land(?:ed|s)?|touch(?:ed)? down",
        r"land(?:ed|ing|s)?|touch(?:ed|es)? down|set down",
    ),
    "a naming": (r"named|called", r"name\w*|called"),
    "a leader": (
        r"led|leads?|leading|head(?:ed|s|ing)",
        r"led|leads?|leader|leading|head(?:ed|s)?|principal investigator",
    ),
}
_WHEN_OR_WHO = re.compile(
    r"^(?:when|who|whom|whose|(?:in |on )?(?:what|which) (?:years?|month|date))\b",
    re.I,
)


def event_mismatch(question: str, words: str, evidence: Sequence[str]) -> str | None:
    """Why the answer does not date or name the event the question asks about: a
    "when" or "who" question names a discovery, a launch, a landing, a naming or a
    leader ("When was Arrokoth discovered?"), and neither the answer's words nor its
    evidence sentences name one (a flyby's date). None when they do, or when the
    question names no such event."""
    question = validate.text(question, "question").strip()
    if not _WHEN_OR_WHO.search(question):
        return None
    said = " ".join([validate.text(words, "words"), *evidence])
    event, named = asked_event(question) or (None, None)
    if event is None or re.search(rf"\b(?:{named})\b", said, re.I):
        return None
    return f"the evidence names no {event.split()[1]}; the question asks about one"


def asked_event(question: str) -> tuple[str, str] | None:
    """The event the question names ("a discovery" in "Who discovered Miranda?") and
    the pattern of the words by which a sentence names it (``discover\\w*|found|...``),
    or None when it names none of them."""
    for event, (asked, named) in _EVENTS.items():
        if re.search(rf"\b(?:{asked})\b", question, re.I):
            return event, named
    return None


def kind_mismatch(
    question: str, words: str, evidence: Sequence[str] | None = None
) -> str | None:
    """Why the answer's words are not the kind of answer the question asks for (``"the
    answer is a duration; the question asks for a length"``), or None when they agree
    or either kind is unknown. A question asking for a name accepts an answer with a
    name the question does not hold; a yes/no question accepts any answer, and a
    question asking for a quantity a ratio. Given the ``evidence`` sentences
    (a list, possibly empty), a length must also be the dimension asked for
    (:func:`dimension_mismatch`), and a count must count what is asked about
    (:func:`count_mismatch`). A question that names its unit (``"..., in
    nanotesla?"``) takes only an answer that names it too."""
    unit = _UNIT_ASKED.search(validate.text(question, "question").strip())
    if unit and not _in_unit(unit.group(1), validate.text(words, "words")):
        return f"the answer gives no figure in {unit.group(1)}; the question asks one"
    expected = expected_kinds(question)
    if not expected or "yes/no" in expected:
        return None
    if "length" in expected and evidence is not None:
        wrong = dimension_mismatch(question, words, evidence)
        if wrong:
            return wrong
    if expected == {"count"} and evidence is not None:
        wrong = count_mismatch(question, words, evidence)
        if wrong:
            return wrong
    found = answer_kinds(words)
    if "name" in expected and _NAME.search(words):
        if _new_names(question, words) or expected != {"name"}:
            return None
        return "the answer names only what the question names; it asks for a name"
    if not found or found & expected:
        return None
    if "ratio" in found and expected - {"date", "name"}:
        if not found - {"ratio", "count", "name"}:
            return None  # a quantity relative to another: "10.7 % of Earth's"
    if expected == {"count"} and found == {"date"}:
        return None  # "how many ..." answered by a number read as a year
    if expected == {"ratio"} and "count" in found:
        return None  # a share as a bare fraction: "0.76"
    return (
        f"the answer is {_a(sorted(found))}; the question asks for "
        f"{_a(sorted(expected), 'or')}"
    )


# a question that names the unit of its answer: "..., in nanotesla?"
_UNIT_ASKED = re.compile(r",\s*in (?!what\b|which\b)([a-z][a-z ]{2,30})\?$", re.I)


def _in_unit(unit: str, words: str) -> bool:
    """Whether ``words`` give a figure in ``unit``: a quantity of its kind ("km" for
    "kilometres"), or, for a unit the rules do not know, its name."""
    kinds = [k for k, pattern in QUANTITIES.items() if pattern.fullmatch(f"1 {unit}")]
    if kinds:
        return any(QUANTITIES[k].search(words) for k in kinds)
    return unit[:4].lower() in words.lower()


# capitalised words that open a sentence without naming anything
_OPENERS = set(
    "the a an it its in on at by of for from with after before during this that these "
    "those there he she they his her their some most all both each one".split()
)


def names_in(text: str) -> set[str]:
    """The names of ``text``, lowercased, without a possessive "'s": its capitalised
    words, less those that open a sentence without naming anything ("The", "It") and
    number words ("Two")."""
    found = {re.sub(r"['’]s$", "", n).lower() for n in _NAME.findall(text)}
    return found - _OPENERS - set(NUMBER_WORDS)


def _new_names(question: str, words: str) -> list[str]:
    """The names of ``words`` the question does not hold: a "who" answer that only
    repeats the question's names ("Juno launched in 2011" for "Who leads Juno?")
    names no one."""
    return sorted(names_in(words) - names_in(question))


def _a(kinds: list[str], joint: str = "and") -> str:
    named = [f"a {k}" if k != "yes/no" else "a yes or no" for k in kinds]
    return f" {joint} ".join(named) if len(named) < 3 else ", ".join(named)
